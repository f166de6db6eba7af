"""NumPy arrays over memory NumPy did not allocate, and NumPy arrays out through DLPack.

`view_memref` makes an array of an address, sizes and strides in elements (a memref's own
terms); its `.base` is the raw memory, whose `.owner` keeps that memory alive as long as any
view of it. `MemRefArray` is such a view (what JitModule returns, what a callback receives)
that also leaves through DLPack as bf16 and f8, where NumPy's own `__dlpack__` refuses:
`to_dlpack` makes the capsule (dlpack.py is the ABI it fills in).

This module is the bottom of the array side: conversion.py (array <-> descriptor) and
interop.py (other frameworks' arrays in) make their views here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeVar, overload

import numpy as np

from . import dlpack as dl
from .element_types import dlpack_type_for_dtype


class _MemRefView:
    """The base of an array made from a memref: the raw memory and what keeps it alive."""

    __slots__ = ("__array_interface__", "owner")
    __array_interface__: dict[str, Any]
    owner: object


_ndarray_base = np.ndarray.base.__get__


class MemRefArray(np.ndarray):
    """A NumPy array over a memref's memory (what JitModule returns, what a callback receives)
    that also leaves through DLPack as bf16 and f8, where NumPy's own `__dlpack__` refuses.

    Everything else is NumPy's: it prints as an `array(...)`, what a computation on it makes
    is a plain ndarray, and it pickles as one. Its slices and views stay MemRefArrays.
    """

    @property
    def base(self) -> Any:
        """As for every array view_memref makes: the raw memory, whose `.owner` keeps it alive
        (NumPy puts a plain array between them, since a subclass is made as a view of one)."""
        base = _ndarray_base(self)
        if type(base) is np.ndarray:
            inner = _ndarray_base(base)
            if type(inner) is _MemRefView:
                return inner
        return base

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return to_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[Literal[1], Literal[0]]:
        return (1, 0)  # kDLCPU, device 0

    def __array_wrap__(self, array, context=None, return_scalar=False):
        if array is self:  # an in-place operation (out=self): it stays what it is
            return self
        array = array.view(np.ndarray) if type(array) is not np.ndarray else array
        return array[()] if return_scalar else array

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))

    def __reduce__(self):
        return self.view(np.ndarray).__reduce__()


def row_major_strides(shape: Sequence[int]) -> tuple:
    """Element strides of a C-contiguous (row-major) array of `shape`: what an identity layout
    assumes, and what DLPack means by no strides."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def _interface_typestr(dtype: np.dtype) -> tuple[str, np.dtype | None]:
    """The typestr NumPy reads back, and the dtype to view as when typestr loses it (ml_dtypes)."""
    try:
        if np.dtype(dtype.str) == dtype:
            return dtype.str, None
    except TypeError:  # ml_dtypes spellings such as '<f1' that NumPy cannot parse back
        pass
    return f"|V{dtype.itemsize}", dtype


_TYPESTR_CACHE: dict = {}
_Array = TypeVar("_Array", bound=np.ndarray)


@overload
def view_memref(
    address: int,
    shape: Sequence[int],
    strides: Sequence[int],
    dtype: np.dtype,
    owner: object,
    read_only: bool = False,
    *,
    array_type: None = None,
) -> np.ndarray: ...
@overload
def view_memref(
    address: int,
    shape: Sequence[int],
    strides: Sequence[int],
    dtype: np.dtype,
    owner: object,
    read_only: bool = False,
    *,
    array_type: type[_Array],
) -> _Array: ...
def view_memref(
    address: int,
    shape: Sequence[int],
    strides: Sequence[int],
    dtype: np.dtype,
    owner: object,
    read_only: bool = False,
    *,
    array_type: type[np.ndarray] | None = None,
) -> np.ndarray:
    """An array over native memory, writable unless `read_only`: `address` of the first element,
    strides in elements; its `.base.owner` is `owner`, kept alive as long as the array. Of
    `array_type` (an ndarray subclass, e.g. MemRefArray) if given."""
    cached = _TYPESTR_CACHE.get(dtype)
    if cached is None:
        cached = _TYPESTR_CACHE[dtype] = _interface_typestr(dtype)
    typestr, view_as = cached
    itemsize = dtype.itemsize
    for n in shape:
        if n < 0:
            raise ValueError(f"memref: sizes must be >= 0, got {n} among the {len(shape)} sizes")
    base = _MemRefView()
    base.owner = owner
    base.__array_interface__ = {
        "version": 3,
        "data": (address, read_only),
        "typestr": typestr,
        "shape": tuple(shape),
        "strides": tuple(s * itemsize for s in strides),
    }
    array = np.asarray(base)
    if array_type is not None:
        return array.view(view_as or array.dtype, array_type)
    return array if view_as is None else array.view(view_as)


# --- out through DLPack -----------------------------------------------------------------------


def _version(max_version) -> tuple[int, int] | None:
    """The DLPack version to export for a consumer's `max_version`; None: the legacy capsule."""
    if max_version is None:
        return None
    major, minor = (int(v) for v in max_version)
    if major < 1:
        return None
    return min((major, minor), dl.VERSION)


def dlpack_copy_reason(array: np.ndarray) -> str | None:
    """Why `array` can leave through DLPack only as a copy, or None."""
    if not array.flags.writeable:  # torch ignores the read-only flag; a constant global's memory is read-only
        return "is read-only (torch ignores DLPack's read-only flag, and a write into a constant global would crash)"
    if array.size and any(s < 0 for s, n in zip(array.strides, array.shape) if n > 1):
        return f"has negative strides {array.strides} (torch.from_dlpack aborts the process on one)"
    if any(s % array.itemsize for s in array.strides):
        return f"has byte strides {array.strides}, not multiples of the item size {array.itemsize}"
    return None


def to_dlpack(
    array: np.ndarray,
    *,
    stream: object = None,
    max_version: tuple[int, int] | None = None,
    dl_device: tuple[int, int] | None = None,
    copy: bool | None = None,
) -> object:
    """A DLPack capsule over `array`'s memory (the `__dlpack__` of the array API standard, for
    every element type of the table: bf16 and f8 too). It holds `array` until the consumer is done.

    An array that is read-only (a view of a `memref.get_global`, of a read-only input) or has
    negative strides leaves as a C-contiguous copy (flag IS_COPIED), which `copy=False` refuses;
    `copy=True` always copies. `stream` means nothing for host memory and is ignored."""
    del stream
    if dl_device is not None and tuple(dl_device) != (dl.kDLCPU, 0):
        raise BufferError(
            f"cannot export to DLPack device {dl.device_name(*dl_device)}: the array is host memory (kDLCPU:0)"
        )
    if not copy:
        reason = dlpack_copy_reason(array)
        if reason is not None and copy is False:
            raise BufferError(f"the array {reason}: it leaves through DLPack only as a copy; call without copy=False")
        copy = reason is not None
    flags = 0
    if copy:
        array, flags = np.array(array, order="C"), dl.FLAG_IS_COPIED
    dtype = array.dtype
    dltype = dlpack_type_for_dtype(dtype) if dtype.isnative else None
    if dltype is None:
        raise BufferError(
            f"dtype {dtype} has no DLPack data type here (the element types of MLIR memrefs in native byte order)"
        )
    version = _version(max_version)
    strides = tuple(s // dtype.itemsize for s in array.strides)
    address = array.__array_interface__["data"][0]
    return dl.new_capsule(
        array,
        address,
        array.shape,
        strides,
        dltype,
        versioned=version is not None,
        version=version or dl.VERSION,
        flags=flags,
    )
