"""Lowering to the LLVM dialect, and errors that say what failed and how to reproduce it.

Upstream prints MLIR's diagnostics to stderr and raises only "Failure while creating the
ExecutionEngine"; here they are captured and carried by the exception.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

from ..bindings import bindings, opt_tool
from ..settings import default_runtime_verification
from . import verification
from .mlir_source import parse_module
from .pipeline_text import pass_name, top_level_passes

# Everything after bufferization: the dialects the issue lists, down to the LLVM dialect.
# expand-strided-metadata turns subviews and reinterpret_casts into descriptor arithmetic
# (affine.apply, hence before lower-affine) ahead of finalize-memref-to-llvm; complex goes through the standard
# dialect (math) only where convert-complex-to-llvm has no pattern (complex.exp, ...).
LLVM_LOWERING_PASSES = (
    "convert-linalg-to-loops",
    "convert-vector-to-scf",
    "expand-strided-metadata",
    "lower-affine",
    "convert-scf-to-cf",
    "convert-vector-to-llvm",
    "finalize-memref-to-llvm",
    "convert-complex-to-standard",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "convert-complex-to-llvm",
    "convert-index-to-llvm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "convert-ub-to-llvm",
    "reconcile-unrealized-casts",
)

# Before bufferization. Elementwise arith/math ops on tensors have no bufferization of their
# own ("op was not bufferized"): they become linalg.generic ops first. Fusing those keeps the
# intermediates of a chain (an i1 tensor from arith.cmpf feeding arith.select) out of memory,
# which also keeps i1 buffers, which MLIR 22 cannot lower, out of ordinary code. But fusion
# also gives a generic whose payload ignores its init a fresh one (tensor.empty), so an scf
# loop that updated its tensor in place would yield a new buffer each iteration: modules whose
# loops carry tensors are not fused.
ELEMENTWISE_TO_LINALG = "func.func(convert-elementwise-to-linalg)"
ELEMENTWISE_FUSION = "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops)"

# Tensors become memrefs with identity layout at function boundaries, so a tensor<?xf32>
# parameter takes the same C-contiguous array a memref<?xf32> does. The deallocation
# pipeline frees intermediate buffers; it also copies any returned buffer the function does
# not own (a view of an argument, a global), which is why it runs only on modules that use
# tensors. allow-return-allocs-from-loops lets an scf loop yield a new tensor each iteration;
# where several such buffers meet, deallocation needs i1 memrefs, which MLIR 22 cannot lower:
# lower_to_llvm then stops with an error instead of letting the process abort.
BUFFERIZATION_PASSES = (
    "one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}",
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
)

DEFAULT_PIPELINE = "builtin.module(" + ",".join(LLVM_LOWERING_PASSES) + ")"
"""The pipeline for modules without tensors: func, arith, math, memref, scf, cf, affine,
linalg (to loops), vector, complex and index down to the LLVM dialect. A returned memref
keeps its identity: a view of an argument stays a view, a global stays the global."""

TENSOR_PIPELINE = (
    "builtin.module(" + ",".join((ELEMENTWISE_FUSION,) + BUFFERIZATION_PASSES + LLVM_LOWERING_PASSES) + ")"
)
"""The pipeline for modules with tensors: elementwise ops to linalg (fused), one-shot
bufferization with function boundaries and buffer deallocation, then DEFAULT_PIPELINE's
passes. `lower_to_llvm` picks it by itself."""

TENSOR_LOOP_PIPELINE = (
    "builtin.module(" + ",".join((ELEMENTWISE_TO_LINALG,) + BUFFERIZATION_PASSES + LLVM_LOWERING_PASSES) + ")"
)
"""TENSOR_PIPELINE without elementwise fusion, for modules whose scf loops carry tensors (so
that a loop updating its tensor in place stays in place). `lower_to_llvm` picks it by itself."""

# MLIR before 23 aborts the process (an assertion in MemRefToLLVM) when these passes meet a
# memref.load/store of i1; the lowering runs up to the first of them, looks, and stops with
# a LoweringError if it finds one.
MEMREF_TO_LLVM_PASSES = frozenset({"finalize-memref-to-llvm", "convert-to-llvm", "test-lower-to-llvm"})
FIRST_MLIR_LOWERING_I1_MEMREFS = 23


class LoweringError(RuntimeError):
    """A pass failed: carries the pipeline, MLIR's diagnostics and a reproducer file."""

    def __init__(self, message: str, pipeline: str, diagnostics: list[str], reproducer: str | None):
        super().__init__(message)
        self.pipeline, self.diagnostics, self.reproducer = pipeline, diagnostics, reproducer


class TranslationError(RuntimeError):
    """The lowered module cannot become LLVM IR: names the ops left and MLIR's diagnostics."""

    def __init__(self, message: str, ops: list[str], diagnostics: list[str]):
        super().__init__(message)
        self.ops, self.diagnostics = ops, diagnostics


def _format_diagnostic(d) -> str:
    text = f"{d.location}: {d.message}"
    return "\n".join([text] + [f"  note: {_format_diagnostic(n)}" for n in d.notes])


@contextlib.contextmanager
def captured_diagnostics(context: Any) -> Iterator[list[str]]:
    """Collects error diagnostics of `context` (instead of printing them) while active."""
    errors: list[str] = []
    severity = bindings().ir.DiagnosticSeverity.ERROR

    def handler(d) -> bool:
        if d.severity != severity:
            return False  # warnings and remarks go where they always went
        errors.append(_format_diagnostic(d))
        return True

    registered = context.attach_diagnostic_handler(handler)
    try:
        yield errors
    finally:
        registered.detach()


def _walk(op):
    """`op` and every operation nested in it, outermost first."""
    yield op
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield from _walk(inner.operation)


def uses_tensors(module: Any) -> bool:
    """Whether any operation or block argument of `module` has a tensor type."""
    ir = bindings().ir
    tensor_types = (ir.RankedTensorType, ir.UnrankedTensorType)

    def is_tensor(t) -> bool:
        return isinstance(t, tensor_types) or str(t).startswith("tensor<")

    for op in _walk(module.operation):
        if any(is_tensor(r.type) for r in op.results):
            return True
        for region in op.regions:
            for block in region.blocks:
                if any(is_tensor(a.type) for a in block.arguments):
                    return True
    return False


def mlir_opt_path() -> str:
    """The opt tool of the bindings in use (mlir-opt, torch-mlir-opt), else just `mlir-opt`."""
    return opt_tool() or "mlir-opt"


def _write_reproducer(text: str) -> str | None:
    try:
        fd, path = tempfile.mkstemp(prefix="memref_runtime_reproducer_", suffix=".mlir")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path
    except OSError:  # a read-only temp dir must not hide the real error
        return None


def _current_context(ir):
    try:
        return ir.Context.current  # None outside a Context; older bindings raise instead
    except ValueError:
        return None


def _loops_carry_tensors(module) -> bool:
    """Whether an scf loop of `module` has a tensor among its results (its iter_args)."""
    return any(
        op.name in ("scf.for", "scf.while", "scf.forall") and any(str(r.type).startswith("tensor<") for r in op.results)
        for op in _walk(module.operation)
    )


def default_pipeline(module: Any) -> str:
    """DEFAULT_PIPELINE for a module without tensors, else TENSOR_PIPELINE, or TENSOR_LOOP_PIPELINE
    where scf loops carry tensors."""
    if not uses_tensors(module):
        return DEFAULT_PIPELINE
    return TENSOR_LOOP_PIPELINE if _loops_carry_tensors(module) else TENSOR_PIPELINE


def _split_before_memref_lowering(pipeline: str) -> tuple[str, str] | None:
    """`pipeline` as (the passes before its memref-to-LLVM pass, the rest) where that pass would
    abort on an i1 memref access (MLIR < 23), else None."""
    from ..bindings import mlir_major_version

    major = mlir_major_version()
    passes = top_level_passes(pipeline)
    if (major is not None and major >= FIRST_MLIR_LOWERING_I1_MEMREFS) or not passes:
        return None
    names = [pass_name(p) for p in passes]
    cut = next((i for i, n in enumerate(names) if n in MEMREF_TO_LLVM_PASSES), None)
    if cut is None:
        return None
    return ",".join(passes[:cut]), ",".join(passes[cut:])


def _i1_memref_accesses(module) -> list[str]:
    """`location: op` of the memref.load/store ops of i1 in `module`, once per location and
    op, the first five (and how many more)."""
    found = list(
        dict.fromkeys(
            f"{op.location}: {op.name} of i1"
            for op in _walk(module.operation)
            if op.name == "memref.load"
            and str(op.results[0].type) == "i1"
            or op.name == "memref.store"
            and str(op.operands[0].type) == "i1"
        )
    )
    return found[:5] + ([f"... and {len(found) - 5} more"] if len(found) > 5 else [])


def _lowering_error(pipeline: str, before: str, details: list[str], headline: str) -> LoweringError:
    reproducer = _write_reproducer(before)
    command = f"{shlex.quote(mlir_opt_path())} --pass-pipeline={shlex.quote(pipeline)} " + (
        shlex.quote(reproducer) if reproducer else "<input.mlir>"
    )
    return LoweringError(
        f"{headline}\n"
        f"  pipeline: {pipeline}\n"
        + "".join(f"  error: {d}\n" for d in details)
        + (f"  reproducer (the input IR): {reproducer}\n" if reproducer else "")
        + f"  reproduce with: {command}",
        pipeline,
        details,
        reproducer,
    )


def _run_pipeline(pipeline: str, module) -> list[str]:
    """Runs `pipeline` on `module`; returns the i1 memref accesses that stopped it short of its
    memref-to-LLVM pass (MLIR < 23), else []."""
    passmanager = bindings().passmanager
    pm = passmanager.PassManager.parse(pipeline, context=module.context)  # its errors, as written
    split = _split_before_memref_lowering(pipeline)
    if split is None:
        pm.run(module.operation)
        return []
    before, rest = split
    if before:
        passmanager.PassManager.parse(f"builtin.module({before})", context=module.context).run(module.operation)
    accesses = _i1_memref_accesses(module)
    if not accesses:
        passmanager.PassManager.parse(f"builtin.module({rest})", context=module.context).run(module.operation)
    return accesses


def lower_to_llvm(module: Any, pipeline: str | None = None, *, runtime_verification: bool | None = None) -> Any:
    """Runs `pipeline` (default: `default_pipeline(module)`) on `module` in place and returns it;
    a failure raises LoweringError with a reproducer.

    `module` may also be MLIR text: it is parsed in the current Context, or outside one in a
    new Context that the returned module keeps alive. Before MLIR 23, a module that would
    need a memref.load/store of i1 lowered (which aborts the process there) raises a
    LoweringError naming those ops instead. `runtime_verification` (default: `lit -D
    runtime_verification=1`, else off) adds MLIR's runtime checks (verification.py); a failed
    check, or any failed cf.assert, writes its message to stderr unbuffered before abort()."""
    ir = bindings().ir
    if isinstance(module, str):
        module = parse_module(ir, module, _current_context(ir) or ir.Context())
    if pipeline is None:
        pipeline = default_pipeline(module)
    if runtime_verification is None:
        runtime_verification = default_runtime_verification()
    return lower_printed(module, str(module), pipeline, runtime_verification)


def lower_printed(module: Any, before: str, pipeline: str, runtime_verification: bool) -> Any:
    """lower_to_llvm with every option given, for a caller that has printed `module` already
    (`before`, what a LoweringError's reproducer holds): a large module is printed once."""
    if runtime_verification:
        pipeline = verification.with_runtime_verification(pipeline)
    context = module.context
    with captured_diagnostics(context) as errors:
        try:
            i1_accesses = _run_pipeline(pipeline, module)
        except Exception as e:  # noqa: BLE001 - MLIRError or ValueError, both reported alike
            raise _lowering_error(pipeline, before, errors or [str(e)], "lowering to the LLVM dialect failed") from e
    if i1_accesses:
        raise _lowering_error(
            pipeline,
            before,
            i1_accesses
            + [
                "MLIR before 23 aborts the whole process when lowering a memref.load/store of i1 (an "
                "assertion in MemRefToLLVM), so the lowering stopped before it. Such accesses come from "
                "i1 (bool) memrefs or tensors read or written element by element, and from deallocating "
                "several buffers that an scf loop yields. Keep i1 values out of memory (arith.extui to "
                "i8), or use MLIR >= 23 (torch-mlir, for one)"
            ],
            "lowering to the LLVM dialect stopped",
        )
    verification.route_assert_failures(module)
    return module


def _untranslatable_ops(module) -> list[str]:
    """Names of the ops left outside the llvm and builtin dialects, in order, once each."""
    names = (op.name for op in _walk(module.operation))
    return list(dict.fromkeys(n for n in names if n.split(".", 1)[0] not in ("llvm", "builtin")))


def create_execution_engine(
    module: Any, opt_level: int = 2, shared_libs: Sequence[str] = (), *, text: str | None = None
) -> Any:
    """An ExecutionEngine for lowered `module`, with the runtime's fallbacks for what
    `shared_libs` lacks (runner_utils.install_fallbacks); TranslationError naming what could not
    be translated. `text`: `module` as printed, where the caller has it (else it is printed
    when the fallbacks need to know whether the module has bf16 values)."""
    from .runner_utils import install_fallbacks

    engine_cls = bindings().execution_engine.ExecutionEngine
    with captured_diagnostics(module.context) as errors:
        try:
            engine = engine_cls(module, opt_level=opt_level, shared_libs=list(shared_libs))
        except Exception as e:  # noqa: BLE001 - upstream raises a bare RuntimeError
            ops = _untranslatable_ops(module)
            raise TranslationError(
                "cannot create the ExecutionEngine"
                + (
                    f": ops not lowered to the LLVM dialect: {', '.join(ops)}; add passes that "
                    "lower them to the pipeline"
                    if ops
                    else ""
                )
                + "".join(f"\n  error: {d}" for d in errors or [str(e)]),
                ops,
                errors,
            ) from e
    install_fallbacks(engine, shared_libs, uses_bf16=lambda: "bf16" in (str(module) if text is None else text))
    return engine
