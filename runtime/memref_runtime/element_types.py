"""Element types: NumPy dtype <-> ctypes type <-> MLIR element type <-> DLPack data type."""

from __future__ import annotations

import ctypes
import importlib
import threading
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

from . import dlpack as dl

# ml_dtypes (optional: bf16 and the f8 types have no NumPy dtype without it) is imported on first
# need, not with this module: its import costs ~0.6 s of CPU at version 0.7 (more than NumPy and
# the MLIR bindings together), paid by every process that imports memref_runtime, each lit test
# among them, while most never see a bf16 or f8 array. `element_types.ml_dtypes` (and
# np_to_memref's) still names the module, or None without it: module __getattr__ below.
_NOT_TRIED = object()
_ml_dtypes: Any = _NOT_TRIED
_ml_dtypes_lock = threading.Lock()


class C128(ctypes.Structure):
    """A ctype representation for MLIR's Double Complex."""

    _fields_ = [("real", ctypes.c_double), ("imag", ctypes.c_double)]


class C64(ctypes.Structure):
    """A ctype representation for MLIR's Float Complex."""

    _fields_ = [("real", ctypes.c_float), ("imag", ctypes.c_float)]


class F16(ctypes.Structure):
    """A ctype representation for MLIR's Float16."""

    _fields_ = [("f16", ctypes.c_int16)]


class BF16(ctypes.Structure):
    """A ctype representation for MLIR's BFloat16."""

    _fields_ = [("bf16", ctypes.c_int16)]


class F8E5M2(ctypes.Structure):
    """A ctype representation for MLIR's Float8E5M2."""

    _fields_ = [("f8E5M2", ctypes.c_int8)]


class F8E4M3(ctypes.Structure):
    """A ctype representation for MLIR's Float8E4M3."""

    _fields_ = [("f8E4M3", ctypes.c_int8)]


class F8E3M4(ctypes.Structure):
    """A ctype representation for MLIR's Float8E3M4."""

    _fields_ = [("f8E3M4", ctypes.c_int8)]


class F8E4M3FN(ctypes.Structure):
    """A ctype representation for MLIR's Float8E4M3FN."""

    _fields_ = [("f8E4M3FN", ctypes.c_int8)]


class ElementType(NamedTuple):
    """One element type as MLIR, NumPy and ctypes name it."""

    mlir: str  # MLIR spelling, signless for integers: "f32", "i8", "complex<f64>"
    dtype: np.dtype
    ctype: type


# (MLIR name, NumPy dtype name, ctypes type, DLPack type code); dtypes from NumPy itself. A
# DLPack data type is (code, bits = 8 * itemsize, lanes = 1): bool is one byte, as in NumPy.
_NUMPY_TABLE = (
    ("i1", "bool", ctypes.c_bool, dl.kDLBool),
    ("i8", "int8", ctypes.c_int8, dl.kDLInt),
    ("i16", "int16", ctypes.c_int16, dl.kDLInt),
    ("i32", "int32", ctypes.c_int32, dl.kDLInt),
    ("i64", "int64", ctypes.c_int64, dl.kDLInt),
    ("i8", "uint8", ctypes.c_uint8, dl.kDLUInt),
    ("i16", "uint16", ctypes.c_uint16, dl.kDLUInt),
    ("i32", "uint32", ctypes.c_uint32, dl.kDLUInt),
    ("i64", "uint64", ctypes.c_uint64, dl.kDLUInt),
    ("f16", "float16", F16, dl.kDLFloat),
    ("f32", "float32", ctypes.c_float, dl.kDLFloat),
    ("f64", "float64", ctypes.c_double, dl.kDLFloat),
    ("complex<f32>", "complex64", C64, dl.kDLComplex),
    ("complex<f64>", "complex128", C128, dl.kDLComplex),
)

# (MLIR name, ml_dtypes attribute, ctypes type, DLPack type code): only with ml_dtypes installed.
_ML_DTYPES_TABLE = (
    ("bf16", "bfloat16", BF16, dl.kDLBfloat),
    ("f8E5M2", "float8_e5m2", F8E5M2, dl.kDLFloat8_e5m2),
    ("f8E4M3", "float8_e4m3", F8E4M3, dl.kDLFloat8_e4m3),
    ("f8E3M4", "float8_e3m4", F8E3M4, dl.kDLFloat8_e3m4),
    ("f8E4M3FN", "float8_e4m3fn", F8E4M3FN, dl.kDLFloat8_e4m3fn),
)

# MLIR names that map onto another entry's dtype: signed/unsigned spellings and index.
_MLIR_ALIASES = {
    "index": "int64",
    "si8": "int8",
    "si16": "int16",
    "si32": "int32",
    "si64": "int64",
    "ui8": "uint8",
    "ui16": "uint16",
    "ui32": "uint32",
    "ui64": "uint64",
}


def _install_hint(what: str) -> ImportError:
    return ImportError(
        f"{what} needs the ml_dtypes package for its NumPy dtype; install it with: pip install ml_dtypes"
    )


def _add(rows, by_dtype, by_mlir, by_ctype, by_dlpack) -> None:
    for mlir_name, dtype, ctype, code in rows:
        et = ElementType(mlir_name, dtype, ctype)
        by_dtype[dtype] = et
        by_mlir.setdefault(mlir_name, et)  # signed wins for signless names
        by_ctype[ctype] = et
        by_dlpack[code, 8 * dtype.itemsize] = et


def _build_tables():
    """The tables of NumPy's own types; _load_ml_dtypes adds ml_dtypes' to them."""
    by_dtype: dict[np.dtype, ElementType] = {}
    by_mlir: dict[str, ElementType] = {}
    by_ctype: dict[type, ElementType] = {}
    by_dlpack: dict[tuple, ElementType] = {}
    _add([(m, np.dtype(d), c, code) for m, d, c, code in _NUMPY_TABLE], by_dtype, by_mlir, by_ctype, by_dlpack)
    for alias, dtype_name in _MLIR_ALIASES.items():
        by_mlir[alias] = by_dtype[np.dtype(dtype_name)]._replace(mlir=alias)
    # Platform spellings of the same C types (c_long is c_int64 on LP64, etc.).
    for spelling in (
        ctypes.c_long,
        ctypes.c_longlong,
        ctypes.c_ulong,
        ctypes.c_ulonglong,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_short,
        ctypes.c_ushort,
        ctypes.c_byte,
        ctypes.c_ubyte,
    ):
        by_ctype.setdefault(spelling, by_dtype[np.dtype(spelling)])
    return by_dtype, by_mlir, by_ctype, by_dlpack


_BY_DTYPE, _BY_MLIR, _BY_CTYPE, _BY_DLPACK = _build_tables()
_ML_DTYPES_CTYPES = {c: (m, a) for m, a, c, _ in _ML_DTYPES_TABLE}
_ML_DTYPES_MLIR = {m: a for m, a, _, _ in _ML_DTYPES_TABLE}
_ML_DTYPES_DLPACK = {(code, 8 * ctypes.sizeof(c)): a for _, a, c, code in _ML_DTYPES_TABLE}
_DLPACK_OF = {et.dtype: (code, bits, 1) for (code, bits), et in _BY_DLPACK.items()}


def _load_ml_dtypes() -> Any:
    """ml_dtypes, imported once (its types then join the tables), or None where it is not installed."""
    global _ml_dtypes
    with _ml_dtypes_lock:
        if _ml_dtypes is _NOT_TRIED:
            try:
                module: Any = importlib.import_module("ml_dtypes")
            except ModuleNotFoundError:  # pragma: no cover - depends on the environment
                module = None
            if module is not None:
                rows = [(m, np.dtype(getattr(module, a)), c, code) for m, a, c, code in _ML_DTYPES_TABLE]
                _add(rows, _BY_DTYPE, _BY_MLIR, _BY_CTYPE, _BY_DLPACK)
                _DLPACK_OF.update((dtype, (code, 8 * dtype.itemsize, 1)) for _, dtype, _, code in rows)
                _STRUCT_VIEWS.update((np.dtype(c), dtype) for _, dtype, c, _ in rows)
            _ml_dtypes = module
    return _ml_dtypes


def __getattr__(name: str) -> Any:
    if name == "ml_dtypes":  # the module or None, as upstream's np_to_memref has it
        return _load_ml_dtypes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_numpy_native(dtype: DTypeLike) -> bool:
    """A dtype of NumPy itself, not one of ml_dtypes (bf16, the f8 types), which NumPy files
    under kind 'V' and cannot save, print or take `finfo` of by itself."""
    dtype = np.dtype(dtype)
    return not (type(dtype).__module__.startswith("ml_dtypes") or dtype.type.__module__.startswith("ml_dtypes"))


def describe_dtype(dtype: DTypeLike) -> str:
    """A short human description of a dtype for error messages."""
    dtype = np.dtype(dtype)
    order = {"<": "little-endian ", ">": "big-endian "}.get(dtype.byteorder, "")
    return f"{order}{dtype.name} ('{dtype.str}')"


def element_type_for_dtype(dtype: DTypeLike, argument: str = "array") -> ElementType:
    """The element type of a NumPy dtype; TypeError/ValueError naming it if unsupported."""
    et = _BY_DTYPE.get(dtype)
    if et is not None:
        return et
    dtype = np.dtype(dtype)  # np.float32, "f4", ...: hash unlike the dtype they name
    et = _BY_DTYPE.get(dtype)
    if et is not None:
        return et
    if _load_ml_dtypes() is not None and dtype in _BY_DTYPE:  # one of its dtypes, or the message lists them
        return _BY_DTYPE[dtype]
    if not dtype.isnative and dtype.newbyteorder("=") in _BY_DTYPE:
        raise ValueError(
            f"{argument}: expected native byte order, got {describe_dtype(dtype)}; "
            f"convert it first, e.g. a.astype(a.dtype.newbyteorder('='))"
        )
    raise TypeError(
        f"{argument}: dtype {describe_dtype(dtype)} has no MLIR element type; expected one of "
        + ", ".join(sorted({str(d) for d in _BY_DTYPE}))
    )


def element_type_for_mlir(name: object) -> ElementType:
    """The element type of an MLIR element type (a string or an `ir.Type`)."""
    name = str(name)
    et = _BY_MLIR.get(name)
    if et is not None:
        return et
    if _load_ml_dtypes() is not None and name in _BY_MLIR:
        return _BY_MLIR[name]
    if name in _ML_DTYPES_MLIR:
        raise _install_hint(f"MLIR element type {name}")
    raise TypeError(f"MLIR element type {name} has no NumPy dtype here; supported: " + ", ".join(sorted(_BY_MLIR)))


def dtypes_for_mlir(name: str) -> tuple[np.dtype, ...]:
    """Every dtype an array of MLIR element type `name` may have, its own (element_type_for_mlir's)
    first: a signless integer takes either sign (i8: int8, uint8), any other type its one dtype."""
    et = element_type_for_mlir(name)
    if name.startswith("i") and name[1:].isdigit():
        return tuple(d for d, e in _BY_DTYPE.items() if e.mlir == name)
    return (et.dtype,)


def element_type_for_ctype(ctype: type) -> ElementType:
    """The element type of a ctypes element type (c_float, F16, C64, ...)."""
    et = _BY_CTYPE.get(ctype)
    if et is not None:
        return et
    if ctype in _ML_DTYPES_CTYPES:
        if _load_ml_dtypes() is None:
            raise _install_hint(ctype.__name__)
        return _BY_CTYPE[ctype]
    try:
        return element_type_for_dtype(np.dtype(ctype), argument=f"ctype {ctype.__name__}")
    except (TypeError, ValueError):
        raise TypeError(f"ctype {getattr(ctype, '__name__', ctype)!r} is not an MLIR element type") from None


def element_type_for_dlpack(code: int, bits: int, lanes: int = 1) -> ElementType:
    """The element type of a DLPack data type (code, bits, lanes); TypeError naming it if none."""
    et = _BY_DLPACK.get((code, bits)) if lanes == 1 else None
    if et is not None:
        return et
    name = dl.type_name(code, bits, lanes)
    if lanes != 1:
        raise TypeError(f"DLPack data type {name} is a vector of {lanes} lanes; a memref element is one value")
    if (code, bits) in _ML_DTYPES_DLPACK:
        if _load_ml_dtypes() is None:
            raise _install_hint(f"DLPack data type {name}")
        return _BY_DLPACK[code, bits]
    _load_ml_dtypes()  # the message lists its types too
    raise TypeError(
        f"DLPack data type {name} has no MLIR element type here; supported: "
        + ", ".join(f"{dl.type_name(*k)} ({e.mlir})" for k, e in sorted(_BY_DLPACK.items()))
    )


def dlpack_type_for_dtype(dtype: DTypeLike) -> tuple[int, int, int] | None:
    """The DLPack data type (code, bits, lanes) of a NumPy dtype the table has, else None."""
    found = _DLPACK_OF.get(dtype)
    if found is None:
        dtype = np.dtype(dtype)
        found = _DLPACK_OF.get(dtype)
        if found is None and not is_numpy_native(dtype) and _load_ml_dtypes() is not None:
            found = _DLPACK_OF.get(dtype)
    return found


def as_ctype(dtp: DTypeLike) -> type:
    """Converts dtype to ctype."""
    et = _BY_DTYPE.get(dtp)
    if et is None:
        et = element_type_for_dtype(np.dtype(dtp), argument="dtype")
    return et.ctype


# Arrays of the element structs (as np.ctypeslib.as_array makes them) and the dtype they view as.
_STRUCT_VIEWS = {np.dtype(c): et.dtype for c, et in _BY_CTYPE.items() if issubclass(c, ctypes.Structure)}
_ML_DTYPES_STRUCTS = {np.dtype(c): attr for c, (_, attr) in _ML_DTYPES_CTYPES.items()}


def to_numpy(array: np.ndarray) -> np.ndarray:
    """Converts ctypes array back to numpy dtype array."""
    view = _STRUCT_VIEWS.get(array.dtype)
    if view is not None:
        return array.view(view)
    if array.dtype in _ML_DTYPES_STRUCTS:
        if _load_ml_dtypes() is None:
            raise _install_hint(_ML_DTYPES_STRUCTS[array.dtype])
        return array.view(_STRUCT_VIEWS[array.dtype])
    return array
