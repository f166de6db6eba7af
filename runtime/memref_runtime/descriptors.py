"""ctypes layouts of memref descriptors, one class per (rank, element type), cached.

A ranked descriptor is ``{allocated, aligned, offset, sizes[rank], strides[rank]}``,
every field 64 bits wide; offset and strides count elements. An unranked descriptor is
``{rank, void* to a ranked descriptor}``. Field names follow upstream's ``mlir.runtime``
(``shape`` holds the sizes) so code written against it reads ours unchanged.
"""

from __future__ import annotations

import ctypes
import functools
import operator
import struct
from typing import Any

_I64 = ctypes.c_longlong


class UnrankedMemRefDescriptor(ctypes.Structure):
    """Creates a ctype struct for memref descriptor"""

    _fields_ = [("rank", _I64), ("descriptor", ctypes.c_void_p)]


MAX_RANK = 64  # NumPy's limit on ndim: a larger rank read from native memory is garbage


@functools.cache
def descriptor_packer(rank: int) -> struct.Struct:
    """The raw layout of a ranked descriptor, {allocated, aligned, offset, sizes, strides}: int64s."""
    return struct.Struct(f"={3 + 2 * rank}q")


def _validate_rank(rank) -> int:
    if isinstance(rank, bool):
        raise TypeError(f"rank: expected an int >= 0, got {rank!r}")
    try:
        rank = operator.index(rank)  # NumPy integers too, as upstream accepts them
    except TypeError:
        raise TypeError(f"rank: expected an int >= 0, got {type(rank).__name__} {rank!r}") from None
    if rank < 0:
        raise ValueError(f"rank: expected an int >= 0, got {rank}")
    return rank


def _validate_ctype(ctype):
    if not (isinstance(ctype, type) and issubclass(ctype, ctypes._SimpleCData | ctypes.Structure)):
        raise TypeError(f"dtype: expected a ctypes element type (c_float, F16, C64, ...), got {ctype!r}")
    return ctype


def _finish(cls: Any, rank: int, ctype: type) -> type:
    # The raw layout lets conversions pack and unpack a descriptor in one struct call. (`cls` is
    # Any: the attributes set here are not in the type of a class made at run time.)
    cls._rank_ = rank
    cls._element_ctype_ = ctype
    cls._packer_ = descriptor_packer(rank)
    assert ctypes.sizeof(cls) == cls._packer_.size
    return cls


def make_nd_memref_descriptor(rank: int, dtype: type) -> type:
    """The ranked descriptor class for `rank` and ctypes element type `dtype` (cached)."""
    return _nd_descriptor_class(_validate_rank(rank), _validate_ctype(dtype))


@functools.cache  # keyed by a validated int rank: one class per (rank, element type)
def _nd_descriptor_class(rank: int, ctype: type) -> type:
    class MemRefDescriptor(ctypes.Structure):
        """A ranked memref descriptor."""

        _fields_ = [
            ("allocated", _I64),
            ("aligned", ctypes.POINTER(ctype)),
            ("offset", _I64),
            ("shape", _I64 * rank),
            ("strides", _I64 * rank),
        ]

    MemRefDescriptor.__name__ = MemRefDescriptor.__qualname__ = f"MemRefDescriptor_{rank}d_{ctype.__name__}"
    return _finish(MemRefDescriptor, rank, ctype)


@functools.cache
def make_zero_d_memref_descriptor(dtype: type) -> type:
    """The 0-d descriptor class (no sizes or strides) for ctypes element type `dtype` (cached)."""
    ctype = _validate_ctype(dtype)

    class MemRefDescriptor(ctypes.Structure):
        """A 0-d memref descriptor."""

        _fields_ = [("allocated", _I64), ("aligned", ctypes.POINTER(ctype)), ("offset", _I64)]

    MemRefDescriptor.__name__ = MemRefDescriptor.__qualname__ = f"MemRefDescriptor_0d_{ctype.__name__}"
    return _finish(MemRefDescriptor, 0, ctype)


def ranked_descriptor_type(rank: int, ctype: type) -> type:
    """The class get_ranked_memref_descriptor builds: 0-d layout for rank 0, else n-d."""
    return make_zero_d_memref_descriptor(ctype) if rank == 0 else make_nd_memref_descriptor(rank, ctype)


def descriptor_layout(cls: type) -> tuple[int, type, struct.Struct]:
    """(rank, element ctype, raw packer) of any ranked descriptor class with upstream's fields."""
    try:
        return cls._rank_, cls._element_ctype_, cls._packer_  # type: ignore[attr-defined]  # set by _finish
    except AttributeError:
        pass
    names = [f[0] for f in getattr(cls, "_fields_", ())]
    if names[:3] != ["allocated", "aligned", "offset"] or names[3:] not in ([], ["shape", "strides"]):
        raise TypeError(
            f"memref: expected a ranked memref descriptor (fields allocated, aligned, offset"
            f"[, shape, strides]), got {cls.__name__} with fields {names}"
        )
    # A Structure subclass's fields are its class attributes, unknown to its type.
    rank = cls.shape.size // ctypes.sizeof(_I64) if names[3:] else 0  # type: ignore[attr-defined]
    ctype = dict(cls._fields_)["aligned"]._type_  # type: ignore[attr-defined]
    return rank, ctype, descriptor_packer(rank)
