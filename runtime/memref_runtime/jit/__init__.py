"""The JIT layer: MLIR text in, typed calls with arrays out.

signatures.py    func.func types -> MemRefSpec / ScalarSpec, read before lowering
arguments.py     a Python value -> the words of one parameter in the packed frame
results.py       the results struct -> Python values; who owns a returned memref
call_plan.py     one function's plan (frame layout, converters), and its Invoker (the call)
callbacks.py     ctypes trampolines for private declarations (native -> Python)
linked_engine.py LinkedEngine: the engine, its functions' addresses, guard and callbacks
mlir_source.py   parsing, with the MLIR lines a diagnostic points at
lowering.py      pass pipelines, LoweringError/TranslationError, the ExecutionEngine
pipeline_text.py pass-pipeline strings, read and written
verification.py  MLIR's runtime verification, a failed check raised in Python
runner_utils.py  MLIR's runner-utils libraries, and memrefCopy without them
soft_float.py    the bf16 builtins libgcc lacks, compiled by the JIT itself
cache.py         JIT reuse: one linked engine for equal modules
timing_loop.py   the native timing loop, compiled once per process
benchmark.py     JitFunction.benchmark: probe, warm-up, samples in the native loop
benchmark_result.py  BenchmarkResult: per-call times and their statistics
recording.py     what memref-reduce needs of a test's JitModules, and the candidate it hands one
module.py        JitModule and JitFunction, which put the above together
"""

from .benchmark_result import BenchmarkResult
from .lowering import (
    DEFAULT_PIPELINE,
    TENSOR_LOOP_PIPELINE,
    TENSOR_PIPELINE,
    LoweringError,
    TranslationError,
    lower_to_llvm,
)
from .module import JitFunction, JitModule
from .signatures import FunctionSignature
from .verification import RuntimeVerificationError

__all__ = [
    "JitModule",
    "JitFunction",
    "lower_to_llvm",
    "DEFAULT_PIPELINE",
    "TENSOR_PIPELINE",
    "TENSOR_LOOP_PIPELINE",
    "LoweringError",
    "TranslationError",
    "FunctionSignature",
    "RuntimeVerificationError",
    "BenchmarkResult",
]
