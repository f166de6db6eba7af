"""Lowering to the LLVM dialect, and errors that say what failed and how to reproduce it.

Upstream prints MLIR's diagnostics to stderr and raises only "Failure while creating the
ExecutionEngine"; here they are captured and carried by the exception.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import tempfile

from . import verification
from .bindings import bindings, opt_tool
from .settings import default_runtime_verification

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

# Tensors become memrefs with identity layout at function boundaries, so a tensor<?xf32>
# parameter takes the same C-contiguous array a memref<?xf32> does. The deallocation
# pipeline frees intermediate buffers; it also copies any returned buffer the function does
# not own (a view of an argument, a global), which is why it runs only on modules that use
# tensors. allow-return-allocs-from-loops stays off: deallocating such loops stores i1
# memrefs, which LLVM 22 assertion builds abort on; the loop is refused with an error instead.
BUFFERIZATION_PASSES = (
    "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
)

DEFAULT_PIPELINE = "builtin.module(" + ",".join(LLVM_LOWERING_PASSES) + ")"
"""The pipeline for modules without tensors: func, arith, math, memref, scf, cf, affine,
linalg (to loops), vector, complex and index down to the LLVM dialect. A returned memref
keeps its identity: a view of an argument stays a view, a global stays the global."""

TENSOR_PIPELINE = "builtin.module(" + ",".join(BUFFERIZATION_PASSES + LLVM_LOWERING_PASSES) + ")"
"""The pipeline for modules with tensors: one-shot bufferization with function boundaries
and buffer deallocation, then DEFAULT_PIPELINE's passes. `lower_to_llvm` picks it by itself."""


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
def captured_diagnostics(context):
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


def uses_tensors(module) -> bool:
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


def lower_to_llvm(module, pipeline: str | None = None, *, runtime_verification: bool | None = None):
    """Runs `pipeline` (default: TENSOR_PIPELINE if `module` uses tensors, else DEFAULT_PIPELINE)
    on `module` in place and returns it; a failure raises LoweringError with a reproducer.

    `module` may also be MLIR text: it is parsed in the current Context, or outside one in a
    new Context that the returned module keeps alive. `runtime_verification` (default: `lit -D
    runtime_verification=1`, else off) adds MLIR's runtime checks (verification.py); a failed
    check, or any failed cf.assert, writes its message to stderr unbuffered before abort()."""
    ir, passmanager = bindings().ir, bindings().passmanager
    if isinstance(module, str):
        module = ir.Module.parse(module, context=_current_context(ir) or ir.Context())
    if pipeline is None:
        pipeline = TENSOR_PIPELINE if uses_tensors(module) else DEFAULT_PIPELINE
    if runtime_verification is None:
        runtime_verification = default_runtime_verification()
    if runtime_verification:
        pipeline = verification.with_runtime_verification(pipeline)
    context = module.context
    before = str(module)
    with captured_diagnostics(context) as errors:
        try:
            pm = passmanager.PassManager.parse(pipeline, context=context)
            pm.run(module.operation)
        except Exception as e:  # noqa: BLE001 - MLIRError or ValueError, both reported alike
            reproducer = _write_reproducer(before)
            details = errors or [str(e)]
            command = f"{shlex.quote(mlir_opt_path())} --pass-pipeline={shlex.quote(pipeline)} " + (
                shlex.quote(reproducer) if reproducer else "<input.mlir>")
            raise LoweringError(
                "lowering to the LLVM dialect failed\n"
                f"  pipeline: {pipeline}\n"
                + "".join(f"  error: {d}\n" for d in details)
                + (f"  reproducer (the input IR): {reproducer}\n" if reproducer else "")
                + f"  reproduce with: {command}",
                pipeline, details, reproducer) from e
    verification.route_assert_failures(module)
    return module


def _untranslatable_ops(module) -> list[str]:
    """Names of the ops left outside the llvm and builtin dialects, in order, once each."""
    names = (op.name for op in _walk(module.operation))
    return list(dict.fromkeys(n for n in names if n.split(".", 1)[0] not in ("llvm", "builtin")))


def create_execution_engine(module, opt_level: int = 2, shared_libs=()):
    """An ExecutionEngine for lowered `module`; TranslationError naming what could not be translated."""
    engine_cls = bindings().execution_engine.ExecutionEngine
    with captured_diagnostics(module.context) as errors:
        try:
            return engine_cls(module, opt_level=opt_level, shared_libs=list(shared_libs))
        except Exception as e:  # noqa: BLE001 - upstream raises a bare RuntimeError
            ops = _untranslatable_ops(module)
            raise TranslationError(
                "cannot create the ExecutionEngine"
                + (f": ops not lowered to the LLVM dialect: {', '.join(ops)}; add passes that "
                   "lower them to the pipeline" if ops else "")
                + "".join(f"\n  error: {d}" for d in errors or [str(e)]),
                ops, errors) from e
