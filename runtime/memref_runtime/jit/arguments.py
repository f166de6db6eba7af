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
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, NoReturn

import numpy as np

from ..conversion import element_strides
from ..descriptors import MAX_RANK
from ..element_types import describe_dtype, dtypes_for_mlir
from ..interop import QuickRoute, describe_foreign, importer, torch_quick
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


def describe(value: object, view: np.ndarray | None = None) -> str:
    """What was given, as an error message names it; another framework's array in its own terms
    (`view`: the NumPy view made of it)."""
    if view is not None and value is not view:
        return describe_foreign(value, view, describe(view))
    if isinstance(value, np.ndarray):
        traits = (
            ("read-only " if not value.flags.writeable else "")
            + ("non-contiguous " if not value.flags.c_contiguous else "")
            + ("masked " if isinstance(value, _MaskedArray) else "")
        )
        text = with_article(f"{traits}{describe_dtype(value.dtype)} array of shape {value.shape}")
        return text if value.flags.c_contiguous else f"{text} and byte strides {value.strides}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _shape_text(shape) -> str:
    return "(" + ", ".join("?" if n is DYNAMIC else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


# --- strides of C-contiguous arrays --------------------------------------------------------

# The ranks almost every call uses, without a loop.
_CANONICAL: dict = {0: lambda s: (), 1: lambda s: (1,), 2: lambda s: (s[1], 1)}


def _strides_function(rank: int | None):
    return _CANONICAL.get(rank, row_major_strides)


# --- the converters ------------------------------------------------------------------------

# (value, frame) -> the words of one argument in the frame (the frame keeps what must outlive the call).
Converter = Callable[[Any, Any], tuple]
Frame = ctypes.Array  # a call's frame: c_int64 words


class Param(NamedTuple):
    """A parameter's bytes in the frame and its two converters, (value, frame) -> its words."""

    fmt: str  # struct format of the parameter's bytes in the frame
    size: int  # bytes, a multiple of the word
    needs_slot: bool  # a memref: its packed entry points at a slot holding the descriptor's address
    fast: Converter
    check: Converter


_UNRANKED_PADS = tuple((0,) * (2 * (MAX_RANK - r)) for r in range(MAX_RANK + 1))  # by rank: up to MAX_RANK


class MemRefParam:
    """One memref parameter: what it accepts, computed once from its type, and its converters.

    `check(value, frame)` takes every valid value: an ndarray, or another framework's array as
    a view of its memory, and raises the exact error otherwise. The fast path (`param().fast`)
    is a closure over the same constants, for the common case only.
    """

    def __init__(self, spec: MemRefSpec, where: str, frame_offset: int):
        self.spec, self.where = spec, where
        self.accepted = dtypes_for_mlir(spec.element)
        self.primary = self.accepted[0]  # the fast path's dtype, and the one results use
        self.align_mask = self.primary.alignment - 1
        self.rank, self.unranked = spec.rank, spec.shape is None
        self.static_dims = (
            () if spec.shape is None else tuple((i, n) for i, n in enumerate(spec.shape) if n is not DYNAMIC)
        )
        self.static_strides = (
            () if spec.strides is None else tuple((i, s) for i, s in enumerate(spec.strides) if s is not DYNAMIC)
        )
        self.offset: int = spec.offset or 0  # a static offset is honoured by pointing `aligned` back by it
        self.back = self.offset * self.primary.itemsize
        # An unranked argument reserves a descriptor of NumPy's largest rank.
        self.words = 2 + 3 + 2 * MAX_RANK if spec.shape is None else 3 + 2 * len(spec.shape)
        self.inner = frame_offset + 2 * WORD  # unranked: where its ranked descriptor sits in the frame
        self.strides_of = _strides_function(self.rank)
        self.expected = with_article(
            f"{'' if self.unranked else f'{self.rank}-d '}{' or '.join(d.name for d in self.accepted)} array"
        )
        # Another framework's C-contiguous array skips the view's checks where no static stride
        # needs comparing (`contiguous`).
        self.shortcut = not self.unranked and not self.static_strides
        # interop.torch_quick(primary), once torch is imported
        self.torch_route: QuickRoute | Literal[False] | None = None

    def param(self) -> Param:
        """The parameter's place in the frame and its two converters."""
        # A contiguous array fits any layout whose strides are all dynamic; static strides are checked.
        fast = self.check if self.static_strides else _fast_unranked(self) if self.unranked else _fast_ranked(self)
        return Param("q" * self.words, self.words * WORD, True, fast, self.check)

    def fields(self, address: int, shape: Sequence[int], strides: Sequence[int], frame: Frame) -> tuple:
        """The descriptor's words (an unranked one's, then its ranked descriptor padded to MAX_RANK)."""
        if self.unranked:
            r = len(shape)
            return (r, _addressof(frame) + self.inner, address, address, 0, *shape, *strides, *_UNRANKED_PADS[r])
        return (address, address - self.back, self.offset, *shape, *strides)

    def contiguous(self, address: int, shape: Sequence[int]) -> tuple | None:
        """The fields of another framework's C-contiguous array at `address` (its dtype and
        writability checked by the caller), or None where rank, static sizes or alignment refuse it."""
        if (
            len(shape) == self.rank
            and not address & self.align_mask
            and (not self.static_dims or all(shape[i] == n for i, n in self.static_dims))
        ):
            return (address, address - self.back, self.offset, *shape, *self.strides_of(shape))
        return None

    def check(self, value: Any, frame: Frame, original: object = None) -> tuple:
        """`value`'s words, or the exact error. `original`: the other framework's array `value`
        is a view of, which the errors name."""
        if not isinstance(value, np.ndarray):
            return self.check_foreign(value, frame)
        given = _Given(value, original)
        self._check_type(value, given)
        address = self._check_memory(value, given, original is not None)
        strides = (
            row_major_strides(value.shape)
            if self.spec.identity
            else element_strides(value, f"{self.where} ({self.spec.mlir})")
        )
        for i, s in self.static_strides:
            if value.shape[i] > 1 and strides[i] != s:
                raise ValueError(
                    f"{self.where} expects {self.spec.mlir} (element strides "
                    f"{_shape_text(self.spec.strides)}), got {given}, element strides {strides}"
                )
        return self.fields(address, value.shape, strides, frame)

    def check_foreign(self, value: object, frame: Frame) -> tuple:
        """Another framework's array (or no array at all): a plain contiguous CPU torch tensor's
        fields straight away, else a view of its memory, checked as an ndarray."""
        if self.shortcut:
            route = self.torch_route
            if route is None:
                route = self.torch_route = torch_quick(self.primary)  # None again until torch is imported
            got = route(value) if route else None
            if got is not None:
                taken = self.contiguous(*got)
                if taken is not None:
                    return taken
        take = importer(value)
        if take is None:
            raise TypeError(f"{self.where} expects {self.spec.mlir} ({self.expected}), got {describe(value)}")
        # The fast path's test on the view, whose address came with it (a read-only view's own
        # costs more than the rest); the frame keeps what the reading needs beside `value` (a
        # DLPack import's owner).
        view, address, keep = take(value, self.where, self.spec.mlir)
        if keep is not None:
            kept = frame.__dict__  # a ctypes array's own attributes
            kept["_views"] = [*kept.get("_views", ()), keep]
        if self.shortcut and view.dtype is self.primary:
            flags = view.flags
            if flags.c_contiguous and (flags.writeable or not self.spec.writable):
                taken = self.contiguous(address, view.shape)
                if taken is not None:
                    return taken
        return self.check(view, frame, value)

    def _check_type(self, value: np.ndarray, given: _Given) -> None:
        """Mask, dtype, rank and static sizes."""
        spec, where = self.spec, self.where
        if isinstance(value, _MaskedArray):  # the native code would read the masked elements too
            raise TypeError(
                f"{where} expects {spec.mlir} ({self.expected}), got {given}, whose mask "
                "would be dropped; pass a.filled(fill_value) to replace the masked elements, "
                "or np.asarray(a) to ignore the mask"
            )
        if value.dtype not in self.accepted:
            native = value.dtype.newbyteorder("=")
            error = ValueError if not value.dtype.isnative and native in self.accepted else TypeError
            hint = "; convert it with a.astype(a.dtype.newbyteorder('='))" if error is ValueError else ""
            raise error(f"{where} expects {spec.mlir} ({self.expected}), got {given}{hint}")
        if not self.unranked and value.ndim != self.rank:
            raise ValueError(f"{where} expects {spec.mlir} ({self.expected}), got {given}")
        for i, n in self.static_dims:
            if value.shape[i] != n:
                raise ValueError(f"{where} expects {spec.mlir} (shape {_shape_text(spec.shape)}), got {given}")

    def _check_memory(self, value: np.ndarray, given: _Given, foreign: bool) -> int:
        """Writability, contiguity (an identity layout) and alignment; the address of the data."""
        spec, where = self.spec, self.where
        if spec.writable and not value.flags.writeable:
            raise ValueError(
                f"{where} expects {spec.mlir}, got {given}; the native code may "
                "write into it, so pass a writable copy (np.array(a))"
            )
        if spec.identity and not value.flags.c_contiguous:
            copy = "a contiguous copy (t.contiguous() for torch)" if foreign else "np.ascontiguousarray(a)"
            raise ValueError(
                f"{where} expects {spec.mlir}, whose identity layout assumes a C-contiguous "
                f"array, got {given}; pass {copy}, or declare the "
                "parameter with a strided layout (strided<[?, ...], offset: ?>)"
            )
        address = value.ctypes.data
        if address & self.align_mask:
            raise ValueError(
                f"{where} expects {spec.mlir}, got {given} at address {address:#x}, "
                f"not aligned to {self.primary.alignment} bytes; pass a copy (np.array(a))"
            )
        return address


class _Given:
    """What an error message says was given, described only when one is raised."""

    __slots__ = ("value", "original")

    def __init__(self, value, original):
        self.value, self.original = value, original

    def __str__(self) -> str:
        return describe(self.value) if self.original is None else describe(self.original, self.value)


# The fast paths take a writable C-contiguous ndarray of the exact dtype: the buffer protocol
# checks writability and contiguity in one step, faster than reading `flags`. Closures over the
# parameter's constants: a call reads them from cells, not from the object's attributes.


def _fast_ranked(p: MemRefParam):
    check, check_foreign, primary, rank, align_mask = p.check, p.check_foreign, p.primary, p.rank, p.align_mask
    static_dims, back, offset, strides_of = p.static_dims, p.back, p.offset, p.strides_of

    def fast(value, frame):
        if type(value) is not _ndarray and type(value) is not _MemRefArray:
            return check(value, frame) if isinstance(value, _ndarray) else check_foreign(value, frame)
        if value.dtype is not primary or value.ndim != rank:
            return check(value, frame)
        try:
            address = _addressof(_from_buffer(value))  # type: ignore[arg-type]  # numpy's stubs: a buffer from 3.12
        except (TypeError, ValueError, BufferError):  # read-only, strided or empty
            return check(value, frame)
        shape = value.shape
        if address & align_mask:
            return check(value, frame)
        for i, n in static_dims:
            if shape[i] != n:
                return check(value, frame)
        return (address, address - back, offset, *shape, *strides_of(shape))

    return fast


def _fast_unranked(p: MemRefParam):
    check, primary, align_mask, fields = p.check, p.primary, p.align_mask, p.fields

    def fast(value, frame):
        if (type(value) is not _ndarray and type(value) is not _MemRefArray) or value.dtype is not primary:
            return check(value, frame)
        try:
            address = _addressof(_from_buffer(value))  # type: ignore[arg-type]  # numpy's stubs: a buffer from 3.12
        except (TypeError, ValueError, BufferError):
            return check(value, frame)
        if address & align_mask:
            return check(value, frame)
        return fields(address, value.shape, row_major_strides(value.shape), frame)

    return fast


def memref_param(spec: MemRefSpec, where: str, frame_offset: int) -> Param:
    """The place and converters of a memref parameter whose descriptor starts at `frame_offset`."""
    return MemRefParam(spec, where, frame_offset).param()


_INT_TYPES = frozenset({int, bool} | {np.dtype(c).type for c in "bBhHiIlLqQ"})
_FLOAT_TYPES = frozenset({float, int} | {np.dtype(c).type for c in "efdbBhHiIlLqQ"})
_COMPLEX_TYPES = frozenset({complex, np.complex64, np.complex128})
_BOOL_TYPES = frozenset({bool, np.bool_})


_INT_RANGES = {  # kind -> (lowest, one past the highest) for `bits` wide values
    "int": lambda bits: (-(2 ** (bits - 1)), 2**bits),  # signless: either reading
    "sint": lambda bits: (-(2 ** (bits - 1)), 2 ** (bits - 1)),
    "uint": lambda bits: (0, 2**bits),
}


def scalar_check(spec: ScalarSpec, where: str) -> Converter:
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
            return v - 2**bits  # signless packs signed: the same bits
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

    convert = {
        "bool": to_bool,
        "int": to_int,
        "sint": to_int,
        "uint": to_int,
        "float": to_float,
        "complex": to_complex,
    }[kind]
    if kind == "complex":
        return lambda value, frame: convert(value)
    return lambda value, frame: (convert(value),)


def scalar_param(spec: ScalarSpec, where: str) -> Param:
    kind, fmt = spec.scalar.kind, spec.scalar.fmt
    size = -(-struct.calcsize("=" + fmt) // WORD) * WORD
    check = scalar_check(spec, where)
    accepted = {
        "bool": _BOOL_TYPES,
        "int": _INT_TYPES,
        "sint": _INT_TYPES,
        "uint": _INT_TYPES,
        "float": _FLOAT_TYPES,
        "complex": _COMPLEX_TYPES,
    }[kind]
    if kind == "complex":

        def fast(value, frame):
            return (value.real, value.imag) if type(value) in accepted else check(value, frame)
    else:

        def fast(value, frame):
            return (value,) if type(value) in accepted else check(value, frame)

    padding = size - struct.calcsize("=" + fmt)
    return Param(fmt + "x" * padding, size, False, fast, check)


def unsupported(spec: UnsupportedSpec, where: str) -> NoReturn:
    raise TypeError(f"{where} has type {spec.mlir}, which JitModule cannot pass: {spec.reason}")
