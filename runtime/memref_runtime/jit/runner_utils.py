"""MLIR's runner-utils libraries: where they are, and what JIT code gets when they are missing
(with the soft-float builtins of soft_float.py, which every engine gets).

`libmlir_c_runner_utils` defines `memrefCopy` (what `memref.copy` of a non-contiguous memref
lowers to: a returned `tensor.extract_slice`, say) and `libmlir_runner_utils` defines
`printMemrefF32` and the other printers. JitModule loads both when the bindings ship them (the
LLVM wheels and build trees do, torch-mlir does not). Without them, `memrefCopy` comes from
here (a NumPy copy), and a link error names the libraries the other symbols need.
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from .. import environment
from ..bindings import bindings
from ..conversion import read_ranked_descriptor
from ..views import view_memref
from .soft_float import builtins

# Load order: libmlir_runner_utils needs the symbols of libmlir_c_runner_utils.
LIBRARIES = ("mlir_c_runner_utils", "mlir_runner_utils")
ENV_VAR = environment.RUNNER_UTILS  # os.pathsep-separated paths; empty: none
_SHARED_LIB_NAME = {"win32": "{}.dll", "darwin": "lib{}.dylib"}.get(sys.platform, "lib{}.so")

# What the runner-utils libraries export (CRunnerUtils.h, RunnerUtils.h), for the hint of a link error.
_RUNNER_UTILS_SYMBOL = re.compile(
    r"^(_mlir_ciface_)?(memrefCopy|print[A-Z]\w*|rtclock|nanoTime|verifyMemRef\w*|"
    r"_mlir_memref_to_llvm_\w+|stdSort\w*|shuffle|vecSort\w*)$"
)


def _build_tree_lib_dirs(folder: str) -> list[str]:
    """`lib/` of the LLVM build or install tree above a package folder (one with bin/mlir-opt)."""
    path = folder
    for _ in range(6):
        path = os.path.dirname(path)
        if os.path.isfile(os.path.join(path, "bin", "mlir-opt")):
            return [os.path.join(path, "lib")]
    return []


@functools.cache
def runner_utils_libraries() -> tuple[str, ...]:
    """Paths of the runner-utils libraries that ship with the bindings in use, in load order:
    env `MEMREF_RUNTIME_RUNNER_UTILS` if set, else those next to the package (`lib/`,
    `_mlir_libs/`, a build tree's `lib/`); () when there are none (torch-mlir)."""
    given = os.environ.get(ENV_VAR)
    if given is not None:
        return tuple(p for p in given.split(os.pathsep) if p)
    folders = list(importlib.import_module(bindings().name).__path__)
    dirs = [os.path.join(f, d) for f in folders for d in ("lib", "_mlir_libs")]
    dirs += [d for f in folders for d in _build_tree_lib_dirs(f)]
    found = []
    for name in LIBRARIES:
        candidates = (os.path.join(d, _SHARED_LIB_NAME.format(name)) for d in dirs)
        found += [p for p in candidates if os.path.isfile(p)][:1]
    return tuple(found)


def _is_runner_utils(path: str, names=LIBRARIES) -> bool:
    base = os.path.basename(path)
    return any(base.startswith(_SHARED_LIB_NAME.format(n)) for n in names)


def resolve_shared_libs(shared_libs: Iterable[str | os.PathLike], runner_utils: bool = True) -> tuple[str, ...]:
    """`shared_libs`, then the runner-utils libraries if `runner_utils`, as paths, once each.
    A path that names no file raises ValueError: the ExecutionEngine would only print a warning."""
    if isinstance(shared_libs, (str, bytes, os.PathLike)):
        raise TypeError(
            f"shared_libs: expected a list of paths, got {type(shared_libs).__name__} "
            f"{shared_libs!r}; write shared_libs=[path]"
        )
    paths = [os.fspath(p) for p in shared_libs]
    for p in paths:
        if not os.path.isfile(p):
            raise ValueError(f"shared_libs: {p!r} is not a file")
    extra = runner_utils_libraries() if runner_utils else ()
    for p in extra:
        if not os.path.isfile(p):
            raise ValueError(f"{ENV_VAR}: {p!r} is not a file")
    return tuple(dict.fromkeys(paths + list(extra)))


def install_fallbacks(engine: Any, shared_libs: Sequence[str], uses_bf16: Callable[[], bool] = lambda: True) -> None:
    """Gives `engine` a `memrefCopy` of its own unless libmlir_c_runner_utils is among
    `shared_libs`, and the soft-float builtins (soft_float.builtins, which asks `uses_bf16()`
    only where it would have to compile the bf16 ones)."""
    if not any(_is_runner_utils(p, LIBRARIES[:1]) for p in shared_libs):
        engine.raw_register_runtime("memrefCopy", fallback_memref_copy())
    for symbol, address in builtins(uses_bf16):
        engine.raw_register_runtime(symbol, address)


# --- memrefCopy without the library ---------------------------------------------------------


class _Unranked(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


def _byte_view(unranked: _Unranked, itemsize: int) -> np.ndarray:
    """A writable array of `itemsize`-byte opaque elements over the memref `unranked` describes."""
    rank = unranked.rank
    fields = read_ranked_descriptor(rank, unranked.descriptor, "memrefCopy's memref")
    return view_memref(
        fields[1] + fields[2] * itemsize, fields[3 : 3 + rank], fields[3 + rank :], np.dtype((np.void, itemsize)), None
    )


def _memref_copy(itemsize: int, source, target) -> None:
    """`memrefCopy(elemSize, UnrankedMemRefType<char> *src, UnrankedMemRefType<char> *dst)`."""
    try:
        _byte_view(target.contents, itemsize)[...] = _byte_view(source.contents, itemsize)
    except BaseException as e:  # noqa: BLE001 - nothing can cross back into native code
        print(f"memref_runtime: memrefCopy fallback failed: {e!r}", file=sys.stderr, flush=True)
        os.abort()  # a copy that did not happen must not go unnoticed


_MEMREF_COPY_TYPE = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.POINTER(_Unranked), ctypes.POINTER(_Unranked))
_KEPT_ALIVE: list = []  # the fallback's ctypes function


@functools.cache
def fallback_memref_copy() -> ctypes.c_void_p:
    """A `memrefCopy` for JIT code when libmlir_c_runner_utils is not loaded (raw_register_runtime's argument)."""
    cfunc = _MEMREF_COPY_TYPE(_memref_copy)
    _KEPT_ALIVE.append(cfunc)  # as long as the process: JIT code may call it at any time
    return ctypes.cast(cfunc, ctypes.c_void_p)


def missing_runner_utils_hint(missing: list[str], shared_libs: Sequence[str]) -> str:
    """A line for a link error whose `missing` symbols the runner-utils libraries define, or ""."""
    wanted = [s for s in missing if _RUNNER_UTILS_SYMBOL.match(s)]
    if not wanted:
        return ""
    names = ", ".join(_SHARED_LIB_NAME.format(n) for n in LIBRARIES)
    if any(_is_runner_utils(p) for p in shared_libs):
        return f"\n  {', '.join(wanted)}: not in the runner-utils libraries loaded ({', '.join(map(str, shared_libs))})"
    return (
        f"\n  {', '.join(wanted)} {'is' if len(wanted) == 1 else 'are'} defined by MLIR's runner-utils "
        f"libraries ({names}), which the {bindings().name!r} bindings do not ship; pass "
        f"shared_libs=[...] with their paths (from an LLVM build, or the xtc-mlir-python-bindings "
        f"wheel's mlir/lib), or set {ENV_VAR}"
    )
