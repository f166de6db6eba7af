"""Argument converters of a call plan: a Python value in, the words it puts in the packed frame.

Each parameter gets two functions of (value, frame): `fast` for the common case (a writable
C-contiguous ndarray of the exact dtype, a Python number of the exact type), which hands
anything unusual to `check`, and `check`, which accepts every valid value and raises the exact
error otherwise: it names the function, the argument, the MLIR type expected and what was given.

Another framework's array (a torch tensor, a JAX array, a DLPack producer, ...) is taken by
`check` as a zero-copy NumPy view of its memory (interop.py), which the frame keeps (`_views`)
as long as the call, or the bound call, that reads it; errors name the original in its terms.
"""

from __future__ import annotations

import ctypes
import math
import numbers
import operator
import struct
from typing import NamedTuple

import numpy as np

from ..conversion import element_strides
from ..descriptors import MAX_RANK
from ..element_types import describe_dtype, dtypes_for_mlir
from ..interop import describe_foreign, importer, torch_quick
from ..views import MemRefArray, row_major_strides
from .signatures import DYNAMIC, MemRefSpec, ScalarSpec, UnsupportedSpec

WORD = 8

_addressof = ctypes.addressof
_from_buffer = ctypes.c_char.from_buffer
_ndarray = np.ndarray
_MemRefArray = MemRefArray  # results passed back in take the fast path too
_MaskedArray = np.ma.MaskedArray


# --- describing values for error messages --------------------------------------------------

def with_article(text: str) -> str:
    """`text` after "a" or "an", as it is read: an int8, an object, a uint8 (you-int), a float32."""
    return ("an " if text[:1] in ("a", "e", "i", "o") else "a ") + text


def describe(value, view: np.ndarray | None = None) -> str:
    """What was given, as an error message names it; another framework's array in its own terms
    (`view`: the NumPy view made of it)."""
    if view is not None and value is not view:
        return describe_foreign(value, view, describe(view))
    if isinstance(value, np.ndarray):
        traits = ("read-only " if not value.flags.writeable else "") + (
            "non-contiguous " if not value.flags.c_contiguous else "") + (
            "masked " if isinstance(value, _MaskedArray) else "")
        text = with_article(f"{traits}{describe_dtype(value.dtype)} array of shape {value.shape}")
        return text if value.flags.c_contiguous else f"{text} and byte strides {value.strides}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _shape_text(shape) -> str:
    return "(" + ", ".join("?" if n is DYNAMIC else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


# --- strides of C-contiguous arrays --------------------------------------------------------

# The ranks almost every call uses, without a loop.
_CANONICAL = {0: lambda s: (), 1: lambda s: (1,), 2: lambda s: (s[1], 1)}


def _strides_function(rank: int | None):
    return _CANONICAL.get(rank, row_major_strides)


# --- the converters ------------------------------------------------------------------------

class _Param(NamedTuple):
    fmt: str  # struct format of the parameter's bytes in the frame
    size: int  # bytes, a multiple of the word
    needs_slot: bool  # a memref: its packed entry points at a slot holding the descriptor's address
    fast: object
    check: object


def memref_param(spec: MemRefSpec, where: str, frame_offset: int) -> _Param:
    accepted = dtypes_for_mlir(spec.element)
    dtype = accepted[0]
    itemsize, align_mask = dtype.itemsize, dtype.alignment - 1
    rank, unranked = spec.rank, spec.shape is None
    static_dims = () if unranked else tuple((i, n) for i, n in enumerate(spec.shape) if n is not DYNAMIC)
    static_strides = () if spec.strides is None else tuple(
        (i, s) for i, s in enumerate(spec.strides) if s is not DYNAMIC)
    offset = spec.offset or 0  # a static offset is honoured by pointing `aligned` back by it
    back = offset * itemsize
    # An unranked argument reserves a descriptor of NumPy's largest rank.
    words = 2 + 3 + 2 * MAX_RANK if unranked else 3 + 2 * rank
    inner = frame_offset + 2 * WORD  # unranked: where its ranked descriptor sits in the frame
    pads = [(0,) * (2 * (MAX_RANK - r)) for r in range(MAX_RANK + 1)] if unranked else None
    expected = with_article(f"{'' if unranked else f'{rank}-d '}{' or '.join(d.name for d in accepted)} array")

    def fields(address, shape, strides, frame):
        if unranked:
            r = len(shape)
            return (r, _addressof(frame) + inner, address, address, 0, *shape, *strides, *pads[r])
        return (address, address - back, offset, *shape, *strides)

    def contiguous(address, shape):
        """The fields of another framework's C-contiguous array at `address` (its dtype and
        writability checked by the caller), or None where rank, static sizes or alignment refuse it."""
        if len(shape) == rank and not address & align_mask and (
                not static_dims or all(shape[i] == n for i, n in static_dims)):
            return (address, address - back, offset, *shape, *strides_of(shape))
        return None

    def check(value, frame, original=None):
        """`original`: the other framework's array `value` is a view of, which the errors name."""
        if not isinstance(value, np.ndarray):
            if quick:  # a plain contiguous CPU torch tensor: its fields straight away
                torch_route = torch_state[0]
                if torch_route is None:
                    torch_route = torch_state[0] = torch_quick(primary)  # None again until torch is imported
                got = torch_route(value) if torch_route else None
                if got is not None:
                    taken = contiguous(*got)
                    if taken is not None:
                        return taken
            take = importer(value)
            if take is None:
                raise TypeError(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}")
            # Another framework's array: a view of its memory. The fast path's test on the view,
            # whose address came with it (a read-only view's own costs more than the rest); the
            # frame keeps what the reading needs beside `value` (a DLPack import's owner).
            view, address, keep = take(value, where, spec.mlir)
            if keep is not None:
                kept = frame.__dict__  # a ctypes array's own attributes
                kept["_views"] = [*kept.get("_views", ()), keep]
            if quick and view.dtype is primary:
                flags = view.flags
                if flags.c_contiguous and (flags.writeable or not writable):
                    taken = contiguous(address, view.shape)
                    if taken is not None:
                        return taken
            return check(view, frame, value)
        given = lambda: describe(value) if original is None else describe(original, value)  # noqa: E731
        if isinstance(value, _MaskedArray):  # the native code would read the masked elements too
            raise TypeError(f"{where} expects {spec.mlir} ({expected}), got {given()}, whose mask "
                            "would be dropped; pass a.filled(fill_value) to replace the masked elements, "
                            "or np.asarray(a) to ignore the mask")
        if value.dtype not in accepted:
            native = value.dtype.newbyteorder("=")
            error = ValueError if not value.dtype.isnative and native in accepted else TypeError
            hint = "; convert it with a.astype(a.dtype.newbyteorder('='))" if error is ValueError else ""
            raise error(f"{where} expects {spec.mlir} ({expected}), got {given()}{hint}")
        if not unranked and value.ndim != rank:
            raise ValueError(f"{where} expects {spec.mlir} ({expected}), got {given()}")
        for i, n in static_dims:
            if value.shape[i] != n:
                raise ValueError(f"{where} expects {spec.mlir} (shape {_shape_text(spec.shape)}), "
                                 f"got {given()}")
        if spec.writable and not value.flags.writeable:
            raise ValueError(f"{where} expects {spec.mlir}, got {given()}; the native code may "
                             "write into it, so pass a writable copy (np.array(a))")
        if spec.identity and not value.flags.c_contiguous:
            copy = "np.ascontiguousarray(a)" if original is None else "a contiguous copy (t.contiguous() for torch)"
            raise ValueError(f"{where} expects {spec.mlir}, whose identity layout assumes a C-contiguous "
                             f"array, got {given()}; pass {copy}, or declare the "
                             "parameter with a strided layout (strided<[?, ...], offset: ?>)")
        address = value.ctypes.data
        if address & align_mask:
            raise ValueError(f"{where} expects {spec.mlir}, got {given()} at address {address:#x}, "
                             f"not aligned to {dtype.alignment} bytes; pass a copy (np.array(a))")
        strides = (row_major_strides(value.shape) if spec.identity
                   else element_strides(value, f"{where} ({spec.mlir})"))
        for i, s in static_strides:
            if value.shape[i] > 1 and strides[i] != s:
                raise ValueError(
                    f"{where} expects {spec.mlir} (element strides "
                    f"{_shape_text(spec.strides)}), got {given()}, element strides {strides}")
        return fields(address, value.shape, strides, frame)

    strides_of = _strides_function(rank)
    primary = accepted[0]
    torch_state = [None]  # interop.torch_quick(primary), once torch is imported

    # The fast paths take a writable C-contiguous ndarray of the exact dtype: the buffer
    # protocol checks writability and contiguity in one step, faster than reading `flags`.
    def fast(value, frame):
        if (type(value) is not _ndarray and type(value) is not _MemRefArray) or value.dtype is not primary \
                or value.ndim != rank:
            return check(value, frame)
        try:
            address = _addressof(_from_buffer(value))
        except (TypeError, ValueError, BufferError):  # read-only, strided or empty
            return check(value, frame)
        shape = value.shape
        if address & align_mask:
            return check(value, frame)
        for i, n in static_dims:
            if shape[i] != n:
                return check(value, frame)
        return (address, address - back, offset, *shape, *strides_of(shape))

    def fast_unranked(value, frame):
        if (type(value) is not _ndarray and type(value) is not _MemRefArray) or value.dtype is not primary:
            return check(value, frame)
        try:
            address = _addressof(_from_buffer(value))
        except (TypeError, ValueError, BufferError):
            return check(value, frame)
        if address & align_mask:
            return check(value, frame)
        return fields(address, value.shape, row_major_strides(value.shape), frame)

    quick, writable = not unranked and not static_strides, spec.writable

    if unranked:
        fast = fast_unranked
    # A contiguous array fits any layout whose strides are all dynamic; static strides are checked.
    chosen = check if static_strides else fast
    return _Param("q" * words, words * WORD, True, chosen, check)


_INT_TYPES = frozenset({int, bool} | {np.dtype(c).type for c in "bBhHiIlLqQ"})
_FLOAT_TYPES = frozenset({float, int} | {np.dtype(c).type for c in "efdbBhHiIlLqQ"})
_COMPLEX_TYPES = frozenset({complex, np.complex64, np.complex128})
_BOOL_TYPES = frozenset({bool, np.bool_})


_INT_RANGES = {  # kind -> (lowest, one past the highest) for `bits` wide values
    "int": lambda bits: (-(2 ** (bits - 1)), 2 ** bits),  # signless: either reading
    "sint": lambda bits: (-(2 ** (bits - 1)), 2 ** (bits - 1)),
    "uint": lambda bits: (0, 2 ** bits),
}


def scalar_check(spec: ScalarSpec, where: str):
    kind, bits, fmt = spec.scalar.kind, spec.scalar.bits, spec.scalar.fmt

    def fail(error, expected, value, extra=""):
        raise error(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}{extra}")

    def to_int(value):
        if isinstance(value, (float, complex, np.floating, np.complexfloating)):
            fail(TypeError, "an integer", value, "; convert it explicitly, e.g. int(x)")
        try:
            v = operator.index(value)
        except TypeError:
            fail(TypeError, "an integer", value)
        low, high = _INT_RANGES[kind](bits)
        if not low <= v < high:
            fail(ValueError, f"an integer in [{low}, {high - 1}]", value)
        if kind == "int" and v >= 2 ** (bits - 1):
            return v - 2 ** bits  # signless packs signed: the same bits
        return v

    out_of_range = f", out of range for {spec.mlir}"

    def to_float(value):
        if isinstance(value, (complex, np.complexfloating)) or not isinstance(value, numbers.Real):
            fail(TypeError, "a real number", value)
        try:
            v = float(value)  # an int beyond f64 raises; an np.longdouble beyond f64 becomes inf
            if math.isinf(v) and v != value:
                raise OverflowError
            struct.pack("=" + fmt, v)
        except OverflowError:
            fail(ValueError, "a real number", value, out_of_range)
        return v

    def to_bool(value):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, (int, np.integer)) and value in (0, 1):
            return bool(value)
        fail(TypeError, "a bool", value)

    def to_complex(value):
        if not isinstance(value, numbers.Complex):
            fail(TypeError, "a complex number", value)
        try:
            c = complex(value)  # as float() above: raises, or gives inf for an np.clongdouble
            if (math.isinf(c.real) or math.isinf(c.imag)) and c != value:
                raise OverflowError
            struct.pack("=" + fmt, c.real, c.imag)
        except OverflowError:
            fail(ValueError, "a complex number", value, out_of_range)
        return c.real, c.imag

    convert = {"bool": to_bool, "int": to_int, "sint": to_int, "uint": to_int,
               "float": to_float, "complex": to_complex}[kind]
    if kind == "complex":
        return lambda value, frame: convert(value)
    return lambda value, frame: (convert(value),)


def scalar_param(spec: ScalarSpec, where: str) -> _Param:
    kind, fmt = spec.scalar.kind, spec.scalar.fmt
    size = -(-struct.calcsize("=" + fmt) // WORD) * WORD
    check = scalar_check(spec, where)
    accepted = {"bool": _BOOL_TYPES, "int": _INT_TYPES, "sint": _INT_TYPES, "uint": _INT_TYPES,
                "float": _FLOAT_TYPES, "complex": _COMPLEX_TYPES}[kind]
    if kind == "complex":
        def fast(value, frame):
            return (value.real, value.imag) if type(value) in accepted else check(value, frame)
    else:
        def fast(value, frame):
            return (value,) if type(value) in accepted else check(value, frame)
    padding = size - struct.calcsize("=" + fmt)
    return _Param(fmt + "x" * padding, size, False, fast, check)


def unsupported(spec: UnsupportedSpec, where: str):
    raise TypeError(f"{where} has type {spec.mlir}, which JitModule cannot pass: {spec.reason}")
