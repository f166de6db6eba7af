"""Helpers for lit tests written like upstream MLIR's Python tests.

A test keeps upstream's look (`from mlir.ir import *`, one function per case, `run(f)`) and
imports from here only what it uses. Nothing here imports `mlir` at import time: `run` and
`parse_input` import `mlir.ir` when called, by then whatever `mlir` means (the LLVM wheels, a
build tree, or torch_mlir under `-D mlir_python=torch_mlir`) is settled.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import importlib
import os

from .. import environment
from ..jit.lowering import lower_to_llvm
from ..np_to_memref import get_ranked_memref_descriptor, get_unranked_memref_descriptor
from ..process import callback_exceptions
from ..settings import resolve_opt_level
from .numerics import check_close
from .output import log
from .performance import Comparison, InconclusiveClaim, check_faster, compare

__all__ = [
    "log",
    "run",
    "lower",
    "execution_engine",
    "check_close",
    "check_against",
    "DifferentialError",
    "memref_arg",
    "unranked_arg",
    "mlir_inputs",
    "parse_input",
    "flush_c_stdout",
    "CallbackException",
    "check_faster",
    "compare",
    "Comparison",
    "InconclusiveClaim",
    "bisect_pipeline",
    "reduce",
    "Against",
]

CallbackException = callback_exceptions.CallbackException
# An exception raised in a ctypes callback (which ctypes prints and drops) fails the case.
_callback_errors = callback_exceptions.install()


def run(f):
    """Runs test case `f` under a `TEST: <name>` label; afterwards no MLIR Context may be alive.

    Raises CallbackException at the end of the case if a ctypes callback raised during it
    (ctypes prints the traceback and hands the native code a zero instead)."""
    from mlir.ir import Context

    log("\nTEST:", f.__name__)
    f()
    gc.collect()
    callback_exceptions.raise_pending(_callback_errors, f"TEST: {f.__name__}")
    assert Context._get_live_count() == 0
    return f


def lower(module, pipeline: str | None = None, *, runtime_verification: bool | None = None):
    """Lowers `module` to the LLVM dialect in place and returns it (`lower_to_llvm`'s pipeline
    unless `pipeline` is given; runtime verification as `lit -D runtime_verification=1` says
    unless given)."""
    return lower_to_llvm(module, pipeline, runtime_verification=runtime_verification)


def execution_engine(module, *, opt_level: int | None = None, shared_libs=(), runner_utils: bool = True):
    """An ExecutionEngine for lowered `module` at `opt_level` (default: the suite's,
    `lit -D opt_level=N`), with MLIR's runner-utils libraries (where the bindings ship them)
    after `shared_libs`; upstream's `ExecutionEngine(module)` always gets opt level 2."""
    from ..jit.lowering import create_execution_engine
    from ..jit.runner_utils import resolve_shared_libs

    libs = resolve_shared_libs(shared_libs, runner_utils)
    return create_execution_engine(module, opt_level=resolve_opt_level(opt_level), shared_libs=libs)


def memref_arg(array):
    """The `memref**` the C interface expects for a ranked memref argument."""
    return ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(array)))


def unranked_arg(array):
    """The `memref**` the C interface expects for an unranked memref argument."""
    return ctypes.pointer(ctypes.pointer(get_unranked_memref_descriptor(array)))


def mlir_inputs() -> str:
    """The folder of the shared MLIR modules: env `MLIR_INPUTS`, which lit sets to `%mlir_inputs`
    (`memref_runtime.lit.configure(..., mlir_inputs=...)`); LookupError when it is not set."""
    folder = os.environ.get(environment.MLIR_INPUTS)
    if not folder:
        raise LookupError(
            "mlir_inputs(): MLIR_INPUTS is not set; lit sets it to the suite's inputs folder "
            "(configure(config, lit_config, mlir_inputs=...)), elsewhere set it yourself"
        )
    return folder


def parse_input(name: str):
    """Parses the shared module `mlir_inputs()/<name>` in the current Context."""
    from mlir import ir

    from ..jit.mlir_source import parse_module

    return parse_module(ir, None, None, path=os.path.join(mlir_inputs(), name))


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"))


def flush_c_stdout() -> None:
    """Flushes C's stdout (where printMemrefF32 and other native code print), which is buffered
    apart from Python's streams; call it after such a native call to keep the order of events."""
    _libc().fflush(None)


def __getattr__(name: str):
    # Differential testing imports hypothesis (~0.1 s): only for the tests that use it.
    if name in ("check_against", "DifferentialError"):
        from . import differential

        return getattr(differential, name)
    # The culprit finders (memref-bisect, memref-reduce) are a tool above this layer, which uses
    # testing/: named here for the tests that call them, resolved by name on first use (as the
    # package's own names are), never imported by this module.
    if name in ("bisect_pipeline", "reduce", "Against"):
        return getattr(importlib.import_module("memref_runtime.culprit"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
