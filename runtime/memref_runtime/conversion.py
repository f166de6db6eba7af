"""NumPy arrays <-> memref descriptors, zero-copy.

Ownership: a descriptor made from an array keeps that array alive (``_keepalive``), so a
temporary descriptor wrapped in ``ctypes.pointer`` stays valid; an array made from a
descriptor keeps its ``owner`` (by default the descriptor itself) alive through ``.base``.

NumPy -> memref: ``allocated`` and ``aligned`` both point at the view's first element
(``a.ctypes.data``) and ``offset`` is 0, whatever base buffer the view was cut from. NumPy
has already folded the view's offset into its data pointer, so this is the exact address
the native code must use, and it is valid for any view (negative strides included).
memref -> NumPy: the first element is ``aligned + offset * itemsize``; strides in
elements are multiplied by the real item size.

Arrays of other frameworks (torch, JAX, anything with ``__dlpack__``, ``__array_interface__`` or a
buffer) become NumPy views of their own memory first (interop.py), which the descriptor keeps.
The arrays made from descriptors are views.py's (view_memref, MemRefArray), as interop's are.
"""

from __future__ import annotations

import ctypes
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

from .descriptors import (
    MAX_RANK,
    UnrankedMemRefDescriptor,
    descriptor_layout,
    descriptor_packer,
    ranked_descriptor_type,
)
from .element_types import element_type_for_ctype, element_type_for_dtype
from .interop import import_array, is_array_like
from .views import (  # noqa: F401 - MemRefArray and row_major_strides: public names of this module too
    MemRefArray,
    row_major_strides,
    view_memref,
)

# Descriptors made from read-only arrays, by address: an array made back from one (through the
# descriptor or any ctypes pointer to it) is read-only too. Weak: an entry goes with its descriptor.
_READ_ONLY: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _check_array(nparray, argument: str):
    if not isinstance(nparray, np.ndarray):
        raise TypeError(
            f"{argument}: expected an array (a numpy.ndarray, or an object with __dlpack__, "
            f"__array_interface__ or a buffer), got {type(nparray).__name__}"
            + ("; wrap it in np.asarray(..., dtype=...)" if isinstance(nparray, (list, tuple)) else "")
        )
    if isinstance(nparray, np.ma.MaskedArray):  # native code would read the data and lose the mask
        raise TypeError(
            f"{argument}: expected a numpy.ndarray, got a masked array, whose mask a memref "
            "cannot carry; pass a.filled(value) or np.asarray(a) explicitly"
        )
    return element_type_for_dtype(nparray.dtype, argument)


def element_strides(nparray: np.ndarray, argument: str) -> tuple:
    """NumPy byte strides as element strides; exact, or a ValueError naming the stride."""
    itemsize, shape, strides = nparray.itemsize, nparray.shape, nparray.strides
    result, contiguous, empty = [], itemsize, nparray.size == 0
    for axis in range(nparray.ndim - 1, -1, -1):
        s, n = strides[axis], shape[axis]
        if s % itemsize == 0:
            result.append(s // itemsize)
        elif n <= 1 or empty:  # never stepped along: any stride is as good as the true one
            result.append(contiguous // itemsize)
        else:
            raise ValueError(
                f"{argument}: stride {s} bytes on axis {axis} is not a multiple of the item "
                f"size {itemsize} ({nparray.dtype.name}); a memref counts strides in elements. "
                "Copy the array (np.ascontiguousarray) first"
            )
        contiguous *= max(n, 1)
    return tuple(reversed(result))


class _RankedPlan(NamedTuple):
    """What converting an array of one (dtype, rank) needs, computed once."""

    cls: type
    pack_into: Callable[..., None]
    itemsize: int
    alignment: int
    contiguous_strides: dict  # byte strides of C-contiguous arrays -> element strides


_RANKED_PLANS: dict = {}
_STRIDES_CACHE_LIMIT = 1024  # distinct shapes remembered per (dtype, rank); then start over


def _contiguous_element_strides(cache: dict, byte_strides: tuple, itemsize: int) -> tuple:
    if len(cache) >= _STRIDES_CACHE_LIMIT:
        cache.clear()
    strides = cache[byte_strides] = tuple(s // itemsize for s in byte_strides)
    return strides


def _ranked_plan(nparray, argument: str) -> _RankedPlan:
    et = _check_array(nparray, argument)
    cls = ranked_descriptor_type(nparray.ndim, et.ctype)
    plan = _RankedPlan(
        cls,
        cls._packer_.pack_into,  # type: ignore[attr-defined]  # descriptors._finish sets it
        et.dtype.itemsize,
        et.dtype.alignment,
        {},
    )
    _RANKED_PLANS[nparray.dtype, nparray.ndim] = plan
    return plan


def _other_array(value, argument: str):
    """An ndarray subclass as it is; another framework's array as a NumPy view of its memory."""
    if isinstance(value, np.ndarray):
        return value
    return import_array(value, argument)[0] if is_array_like(value) else value


def get_ranked_memref_descriptor(nparray: np.ndarray, *, argument: str = "nparray") -> ctypes.Structure:
    """Returns a ranked memref descriptor for the given numpy array (or torch tensor, JAX array,
    DLPack producer, array-interface object or buffer: through a zero-copy view of it)."""
    if type(nparray) is np.ndarray or type(nparray) is MemRefArray:
        plan = _RANKED_PLANS.get((nparray.dtype, nparray.ndim))
    else:
        nparray, plan = _other_array(nparray, argument), None
    cls, pack_into, itemsize, alignment, contiguous_strides = plan or _ranked_plan(nparray, argument)
    try:
        # A writable C-contiguous array hands out its address through the buffer protocol,
        # three times faster than `nparray.ctypes`. Its strides are multiples of the item
        # size on every axis longer than 1, the only axes the native code steps along.
        # (numpy's stubs give ndarray its buffer only for Python 3.12 and later.)
        address = ctypes.addressof(ctypes.c_char.from_buffer(nparray))  # type: ignore[arg-type]
        byte_strides = nparray.strides
        strides = contiguous_strides.get(byte_strides) or _contiguous_element_strides(
            contiguous_strides, byte_strides, itemsize
        )
        read_only = False
    except (TypeError, ValueError, BufferError):  # read-only, strided or empty
        address = nparray.ctypes.data
        strides = element_strides(nparray, argument)
        read_only = not nparray.flags.writeable
    if address % alignment:
        raise ValueError(
            f"{argument}: expected data aligned to {alignment} bytes for "
            f"{nparray.dtype.name}, got address {address:#x}; copy the array first"
        )
    desc = cls()
    pack_into(desc, 0, address, address, 0, *nparray.shape, *strides)
    desc._keepalive = nparray
    if read_only:
        _READ_ONLY[ctypes.addressof(desc)] = desc
    return desc


def get_unranked_memref_descriptor(nparray: np.ndarray, *, argument: str = "nparray") -> UnrankedMemRefDescriptor:
    """Returns a generic/unranked memref descriptor for the given numpy array (or any array
    get_ranked_memref_descriptor takes)."""
    ranked = get_ranked_memref_descriptor(nparray, argument=argument)
    desc = UnrankedMemRefDescriptor(type(ranked)._rank_, ctypes.addressof(ranked))
    desc._keepalive = ranked
    return desc


def _structure_of(value, kind: type | None = None):
    """The descriptor itself, given the descriptor or a ctypes pointer to it."""
    if isinstance(value, ctypes.Structure):
        return value
    try:
        return value[0]
    except (TypeError, IndexError, ValueError):
        pass
    raise TypeError(
        f"memref: expected a {(kind or ctypes.Structure).__name__} or a ctypes pointer to one, "
        f"got {type(value).__name__}"
    )


def descriptor_to_numpy(desc: ctypes.Structure, owner: object = None) -> np.ndarray:
    """A view of the memory a ranked descriptor struct describes; keeps `owner` (default: desc) alive."""
    rank, ctype, packer = descriptor_layout(type(desc))
    fields = packer.unpack_from(desc)
    dtype = element_type_for_ctype(ctype).dtype
    address = fields[1] + fields[2] * dtype.itemsize
    read_only = bool(_READ_ONLY) and ctypes.addressof(desc) in _READ_ONLY
    return view_memref(
        address, fields[3 : 3 + rank], fields[3 + rank :], dtype, desc if owner is None else owner, read_only
    )


def ranked_memref_to_numpy(ranked_memref: object) -> np.ndarray:
    """Converts ranked memrefs to numpy arrays."""
    return descriptor_to_numpy(_structure_of(ranked_memref))


def read_ranked_descriptor(rank: int, descriptor: int, where: str) -> tuple:
    """The fields of the ranked descriptor at address `descriptor` that an unranked memref of
    `rank` points at; a rank NumPy cannot have, or NULL, is garbage and raises ValueError."""
    if not 0 <= rank <= MAX_RANK:
        raise ValueError(
            f"{where} is an unranked memref of rank {rank}, expected 0..{MAX_RANK}: "
            f"NumPy arrays have at most {MAX_RANK} dimensions"
        )
    if not descriptor:
        raise ValueError(f"{where} is an unranked memref that points at no ranked descriptor (NULL)")
    packer = descriptor_packer(rank)
    return packer.unpack(ctypes.string_at(descriptor, packer.size))


def unranked_to_numpy(rank: int, descriptor: int, dtype: np.dtype, owner: object) -> np.ndarray:
    """A view of the ranked descriptor at address `descriptor`, of rank `rank` and element `dtype`."""
    fields = read_ranked_descriptor(rank, descriptor, "unranked_memref")
    return view_memref(
        fields[1] + fields[2] * dtype.itemsize,
        fields[3 : 3 + rank],
        fields[3 + rank :],
        dtype,
        owner,
        bool(_READ_ONLY) and descriptor in _READ_ONLY,
    )


def _dtype_of(np_dtype) -> np.dtype:
    if isinstance(np_dtype, type) and issubclass(np_dtype, (ctypes._SimpleCData, ctypes.Structure)):
        return element_type_for_ctype(np_dtype).dtype
    dtype = np.dtype(np_dtype)
    return element_type_for_dtype(dtype, argument="np_dtype").dtype


def unranked_memref_to_numpy(unranked_memref: object, np_dtype: DTypeLike | type) -> np.ndarray:
    """Converts unranked memrefs to numpy arrays."""
    desc = _structure_of(unranked_memref, UnrankedMemRefDescriptor)
    return unranked_to_numpy(desc.rank, desc.descriptor, _dtype_of(np_dtype), desc)


def move_aligned_ptr_by_offset(aligned_ptr: Any, offset: int) -> Any:
    """Moves the supplied ctypes pointer ahead by `offset` elements."""
    address = ctypes.cast(aligned_ptr, ctypes.c_void_p).value or 0
    return ctypes.cast(address + offset * ctypes.sizeof(aligned_ptr._type_), type(aligned_ptr))
