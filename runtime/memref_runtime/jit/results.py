"""Results of a call plan: the C interface's results struct, and arrays over returned memrefs.

Who owns a returned memref's memory: an input it points into (kept alive, nothing freed), the
engine for a `memref.get_global` (read-only, never freed), or a NativeAllocation that frees the
buffer the JIT code malloc'ed once the last view of it is collected.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..conversion import read_ranked_descriptor
from ..element_types import C64, C128, element_type_for_mlir
from ..interop import as_ndarray
from ..views import MemRefArray, view_memref
from .signatures import MemRefSpec, ScalarSpec

GLOBAL_ALLOCATED = 0xDEADBEEF  # what memref.get_global's lowering puts in `allocated`

_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes, _free.restype = [ctypes.c_void_p], None
# NumPy 2's np.lib.array_utils.byte_bounds, or NumPy 1's np.byte_bounds (gone from NumPy 2's stubs).
_byte_bounds = getattr(getattr(np.lib, "array_utils", np), "byte_bounds", None) or np.byte_bounds  # type: ignore[attr-defined]


class NativeAllocation:
    """Memory the JIT code allocated (malloc) and handed to Python: freed once no view needs it.

    The JIT resolves `malloc` and `free` through the process's symbol table, so libc's `free`
    is the allocator that matches; every array made from the memory has this as `.base.owner`.
    """

    __slots__ = ("address", "__weakref__")

    def __init__(self, address: int):
        self.address = address

    def __del__(self, _free=_free):
        _free(self.address)


_LAYOUT_CTYPES = {  # a scalar's ctypes type, for the layout of a struct of results
    "?": ctypes.c_bool,
    "b": ctypes.c_int8,
    "h": ctypes.c_int16,
    "i": ctypes.c_int32,
    "q": ctypes.c_int64,
    "B": ctypes.c_uint8,
    "H": ctypes.c_uint16,
    "I": ctypes.c_uint32,
    "Q": ctypes.c_uint64,
    "e": ctypes.c_uint16,
    "f": ctypes.c_float,
    "d": ctypes.c_double,
    "ff": C64,
    "dd": C128,
}


def result_piece(spec: ScalarSpec | MemRefSpec) -> tuple[str, type]:
    """(struct format, ctypes layout type) of one result inside the results struct."""
    if isinstance(spec, ScalarSpec):
        return spec.scalar.fmt, _LAYOUT_CTYPES[spec.scalar.fmt]
    words = 2 if spec.shape is None else 3 + 2 * len(spec.shape)
    return "q" * words, ctypes.c_int64 * words


def _results_struct(pieces) -> type:
    return type("Results", (ctypes.Structure,), {"_fields_": [(f"r{i}", ctype) for i, (_, ctype) in enumerate(pieces)]})


def through_out_param(results: tuple) -> bool:
    """Whether the C interface returns `results` through a first out-parameter (a struct the
    caller allocates): a memref, a complex number, or several results; else the one scalar is
    returned (a call reads it from a trailing packed slot, a callback returns it)."""
    return len(results) > 1 or (
        len(results) == 1 and (isinstance(results[0], MemRefSpec) or results[0].scalar.kind == "complex")
    )


def results_layout(results: tuple) -> tuple[str, int]:
    """(struct format, size in bytes) of the struct that carries several or complex results
    through the C interface's out-parameter, padded as C lays it out (ctypes says where)."""
    pieces = [result_piece(s) for s in results]
    layout = _results_struct(pieces)
    fmt, at = "=", 0
    for i, (piece, _) in enumerate(pieces):
        offset = getattr(layout, f"r{i}").offset
        fmt, at = fmt + "x" * (offset - at) + piece, offset + struct.calcsize("=" + piece)
    return fmt, ctypes.sizeof(layout)


def result_offsets(results: tuple) -> tuple[int, ...]:
    """The byte offset of each result inside that struct."""
    layout = _results_struct([result_piece(s) for s in results])
    return tuple(getattr(layout, f"r{i}").offset for i in range(len(results)))


def view_ranked(fields: Sequence[int], dtype: np.dtype, owner: object) -> MemRefArray:
    """A view of what a ranked descriptor's fields (allocated, aligned, offset, sizes, strides)
    describe, keeping `owner` alive: a MemRefArray, which leaves through DLPack with every
    element type (bf16 and f8 too). A global's view is read-only: a constant global lives
    in read-only memory, where a write would crash the process."""
    rank = (len(fields) - 3) // 2
    aligned = fields[1] or 0  # None: a NULL pointer passed by value to a callback
    array = view_memref(
        aligned + fields[2] * dtype.itemsize,
        fields[3 : 3 + rank],
        fields[3 + rank :],
        dtype,
        owner,
        array_type=MemRefArray,
    )
    if fields[0] == GLOBAL_ALLOCATED:
        array.flags.writeable = False
    return array


class Ownership:
    """Who owns the memory a call's memref results point into; one NativeAllocation per buffer."""

    __slots__ = ("args", "memref_positions", "engine_owner", "allocations")

    def __init__(self, args: tuple, memref_positions: tuple[int, ...], engine_owner: object) -> None:
        self.args, self.memref_positions, self.engine_owner = args, memref_positions, engine_owner
        self.allocations: dict[int, NativeAllocation] = {}

    def owner_for(self, allocated: int, aligned: int) -> object:
        """Who keeps a returned memref's memory alive (and frees it, if anyone does)."""
        if allocated == GLOBAL_ALLOCATED:
            return self.engine_owner
        for i in self.memref_positions:
            array = self.args[i]
            if not isinstance(array, np.ndarray):  # another framework's: a view of the same memory
                array = as_ndarray(array)
            low, high = _byte_bounds(array)
            if low <= allocated < high or low <= aligned < high or allocated == low:
                return array  # a view of an input: keep the input alive, free nothing
        owner = self.allocations.get(allocated)
        if owner is None:
            owner = self.allocations[allocated] = NativeAllocation(allocated)
        return owner


# (a result's fields, the call's Ownership or None) -> the Python value.
Decoder = Callable[[Sequence[int], Any], Any]


def memref_decoder(spec: MemRefSpec, where: str) -> Decoder:
    dtype = element_type_for_mlir(spec.element).dtype

    def to_array(fields, ownership: Ownership):
        return view_ranked(fields, dtype, ownership.owner_for(fields[0], fields[1]))

    if spec.shape is not None:
        return to_array

    def unranked_to_array(fields, ownership):
        rank, descriptor = fields
        # The callee copied the ranked descriptor to the heap for us; we read it and free it
        # (after a garbage rank the pointer may be garbage too: it is left alone).
        ranked = read_ranked_descriptor(rank, descriptor, where)
        _free(descriptor)
        return to_array(ranked, ownership)

    return unranked_to_array


def scalar_decoder(spec: ScalarSpec) -> Decoder:
    if spec.scalar.kind == "complex":
        return lambda fields, ownership: complex(*fields)
    return lambda fields, ownership: fields[0]
