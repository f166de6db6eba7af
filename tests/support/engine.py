"""Small MLIR kernels compiled with upstream's ExecutionEngine directly, and the MLIR version's limits."""

from __future__ import annotations

import ctypes

# Enough to lower func/arith/scf/cf/memref/complex kernels (strided views included) to LLVM.
PIPELINE = (
    "builtin.module(expand-strided-metadata,convert-scf-to-cf,convert-complex-to-llvm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
    "reconcile-unrealized-casts)"
)

# MLIR major version that first lowers memref.load/store of i1 without aborting the
# process (LLVM 22 assertion builds fail `integralElementType.getWidth() >= 8`).
MIN_MLIR_FOR_I1_MEMREF = 23

try:
    from mlir.execution_engine import ExecutionEngine
    from mlir.ir import Context, Module
    from mlir.passmanager import PassManager

    from memref_runtime.bindings import mlir_major_version

    HAVE_JIT = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_JIT = False


MLIR_MAJOR = mlir_major_version() if HAVE_JIT else None


def compile_mlir(source: str, callbacks: dict | None = None, opt_level: int = 2):
    """Parse, lower and JIT `source`; register `callbacks` ({name: CFUNCTYPE object})."""
    with Context():
        module = Module.parse(source)
        PassManager.parse(PIPELINE).run(module.operation)
        engine = ExecutionEngine(module, opt_level=opt_level)
    # The engine calls the trampolines later: they must live as long as it does.
    engine._test_callbacks = dict(callbacks or {})
    for name, callback in engine._test_callbacks.items():
        engine.register_runtime(name, callback)
    return engine


def memref_arg(descriptor):
    """The `descriptor**` a C-interface function takes for a memref argument."""
    return ctypes.pointer(ctypes.pointer(descriptor))
