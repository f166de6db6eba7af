"""memref-runtime: NumPy <-> MLIR memref descriptors, and typed calls into JIT-compiled MLIR."""

from .np_to_memref import *  # noqa: F401,F403  (upstream's names)
from .np_to_memref import __all__ as _upstream_names
from .element_types import ElementType, F8E4M3FN, element_type_for_dtype, element_type_for_mlir
from .descriptors import ranked_descriptor_type
from .conversion import descriptor_to_numpy, view_memref

__all__ = [n for n in _upstream_names if n not in ("np", "ctypes", "ml_dtypes")] + [
    "ElementType", "F8E4M3FN", "element_type_for_dtype", "element_type_for_mlir",
    "ranked_descriptor_type", "descriptor_to_numpy", "view_memref",
]

# The typed-call layer needs the MLIR bindings; import it on first use so that the
# conversion functions above stay importable without them.
_JIT_NAMES = ("JitModule", "JitFunction", "lower_to_llvm", "DEFAULT_PIPELINE", "TENSOR_PIPELINE",
              "TENSOR_LOOP_PIPELINE", "LoweringError", "TranslationError", "FunctionSignature",
              "RuntimeVerificationError")
__all__ += list(_JIT_NAMES)


def __getattr__(name):
    if name in _JIT_NAMES:
        from . import jit

        return getattr(jit, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
