"""memref-runtime: arrays <-> MLIR memref descriptors, typed calls into JIT-compiled MLIR, and
the harness that tests them (lit and pytest plugins).

The package is laid out by concern; arrows point down (a layer uses those below it, never the
ones above):

  lit/, pytest_plugin/, update_checks/   what runs inside lit's or pytest's own process
  bench/                                 memref-bench, the command line that times kernels
  testing/                               run/log, check_close, differential testing, speed claims
  jit/                                   signatures, call plans, lowering, engine, callbacks
  (this folder)                          element types, descriptors, views of native memory,
                                         interop (DLPack, other frameworks' arrays), conversion,
                                         the upstream facade (np_to_memref), bindings, settings

Importing the package loads nothing: each name below is imported on first use, so that
`import memref_runtime.lit` (lit's own interpreter, every test process's site hook) pulls in
neither numpy nor the MLIR bindings.

PYTEST_DONT_REWRITE: pytest rewrites the asserts of a plugin's package, and warns about a
module imported before it could; lit's site hook imports this one at start-up (under
`pytest --mlir-python=torch_mlir`, in xdist's workers). It has no asserts to rewrite.
"""

from __future__ import annotations

import importlib

# The one place the version is written: pyproject.toml's build reads it; CHANGELOG.md says what changed.
__version__ = "0.2.0"

# Upstream `mlir.runtime`'s public names, which np_to_memref defines with the same meaning.
UPSTREAM_NAMES = (
    "C128",
    "C64",
    "F16",
    "BF16",
    "F8E5M2",
    "F8E4M3",
    "F8E3M4",
    "as_ctype",
    "to_numpy",
    "make_nd_memref_descriptor",
    "make_zero_d_memref_descriptor",
    "UnrankedMemRefDescriptor",
    "get_ranked_memref_descriptor",
    "get_unranked_memref_descriptor",
    "move_aligned_ptr_by_offset",
    "unranked_memref_to_numpy",
    "ranked_memref_to_numpy",
)

# name -> the module that defines it (relative to this package).
_EXPORTS = {
    **dict.fromkeys(UPSTREAM_NAMES, ".np_to_memref"),
    **dict.fromkeys(("ElementType", "F8E4M3FN", "element_type_for_dtype", "element_type_for_mlir"), ".element_types"),
    "ranked_descriptor_type": ".descriptors",
    "descriptor_to_numpy": ".conversion",
    **dict.fromkeys(("view_memref", "MemRefArray"), ".views"),
    **dict.fromkeys(
        (
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
        ),
        ".jit",
    ),
}
# Subpackages and modules reachable as attributes (`memref_runtime.testing.check_close`).
_SUBMODULES = frozenset(
    {
        "np_to_memref",
        "jit",
        "testing",
        "differential",
        "lit",
        "update_checks",
        "bench",
        "pytest_plugin",
        "element_types",
        "descriptors",
        "conversion",
        "interop",
        "dlpack",
        "views",
        "bindings",
        "settings",
    }
)

__all__ = ["np_to_memref", *_EXPORTS]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS) | _SUBMODULES)
