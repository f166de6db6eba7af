"""Upstream's ``mlir.runtime.np_to_memref`` names, with the same meaning, correct for every layout.

``from memref_runtime.np_to_memref import *`` hands out what ``from mlir.runtime import *``
does, ``np`` and ``ctypes`` included (upstream tests use them through the star import), and
``ml_dtypes``: None where it is not installed, else the module, imported on first use (its import
costs ~0.7 s of CPU, which every upstream-style test that star-imports would pay).
"""

import ctypes
import importlib.util
import sys
import types
from typing import Any

import numpy as np

from . import UPSTREAM_NAMES, element_types
from .conversion import (  # noqa: F401 - re-exported: __all__ is UPSTREAM_NAMES
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    move_aligned_ptr_by_offset,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)
from .descriptors import (  # noqa: F401
    UnrankedMemRefDescriptor,
    make_nd_memref_descriptor,
    make_zero_d_memref_descriptor,
)
from .element_types import (  # noqa: F401
    BF16,
    C64,
    C128,
    F8E3M4,
    F8E4M3,
    F8E5M2,
    F16,
    as_ctype,
    to_numpy,
)

# `from mlir.runtime import *` also binds the submodule `np_to_memref`; so do we.
np_to_memref = sys.modules[__name__]

__all__ = ["np", "ctypes", "ml_dtypes", "np_to_memref", *UPSTREAM_NAMES]  # noqa: F822 - ml_dtypes: __getattr__


class _MlDtypesOnFirstUse(types.ModuleType):
    """Stands for the module ml_dtypes until one of its attributes is asked for: then imports it
    and from there on holds what it holds (its names, ``__file__``, ``__spec__``)."""

    def __getattr__(self, name: str) -> Any:
        module = element_types.ml_dtypes  # imported here, and its types join the tables
        if module is None:  # found on the path, yet its import failed
            raise ImportError(f"ml_dtypes.{name}: ml_dtypes is installed but could not be imported")
        self.__dict__.update(vars(module))
        return getattr(module, name)


_ml_dtypes_on_first_use = _MlDtypesOnFirstUse("ml_dtypes")


def __getattr__(name: str) -> Any:
    if name == "ml_dtypes":  # what the star import binds: the module (on first use), or None
        if sys.modules.get("ml_dtypes") is not None:
            return sys.modules["ml_dtypes"]
        return _ml_dtypes_on_first_use if importlib.util.find_spec("ml_dtypes") is not None else None
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
