"""A DLPack producer of our own, from dlpack.h's structs: what the protocol lets a producer do, a counting deleter."""

from __future__ import annotations

import ctypes


class DLPackProducer:
    """A DLPack producer over `array` (a NumPy array), built by hand from dlpack.h's structs:
    `versioned=False` is a producer from before DLPack 1.0 (its __dlpack__ takes no
    max_version); `device`, `flags`, `dtype` (code, bits, lanes), `major`, `row_major` (NULL
    strides) and `byte_offset` say what it reports. `deleted` counts the calls of its deleter,
    `capsules` holds what it handed out (they have no destructor: a capsule nobody took is
    never released)."""

    def __init__(
        self, array, *, versioned=True, device=(1, 0), flags=0, dtype=None, major=1, row_major=False, byte_offset=0
    ):
        from memref_runtime import dlpack as dl
        from memref_runtime.element_types import dlpack_type_for_dtype

        self.array, self.versioned, self.dl_device, self.flags, self.major = array, versioned, device, flags, major
        self.dtype_code = dtype or dlpack_type_for_dtype(array.dtype)
        self.row_major, self.byte_offset = row_major, byte_offset
        self.deleted, self.capsules = 0, []
        self._structs = []  # what a consumer may read until it calls the deleter
        self._deleter = dl.DELETER(self._delete)  # alive as long as the producer
        self._dl = dl
        if not versioned:  # the old signature, without max_version
            self.__dlpack__ = lambda stream=None: self._export(False)

    def _delete(self, address):
        self.deleted += 1

    @property
    def dtype(self):  # as a framework's array has them, for error messages
        from memref_runtime.element_types import dlpack_type_for_dtype

        same = self.dtype_code == dlpack_type_for_dtype(self.array.dtype)
        return self.array.dtype if same else self._dl.type_name(*self.dtype_code)

    @property
    def shape(self):
        return self.array.shape

    def __dlpack_device__(self):
        return self.dl_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._export(max_version is not None and max_version[0] >= 1)

    def _export(self, versioned: bool):
        dl, a = self._dl, self.array
        managed = (dl.DLManagedTensorVersioned if versioned else dl.DLManagedTensor)()
        dims = (ctypes.c_int64 * (2 * a.ndim))(*a.shape, *(s // a.itemsize for s in a.strides))
        tensor = managed.dl_tensor
        tensor.data = a.__array_interface__["data"][0] - self.byte_offset
        tensor.byte_offset = self.byte_offset
        tensor.device.device_type, tensor.device.device_id = self.dl_device
        tensor.ndim = a.ndim
        tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = self.dtype_code
        tensor.shape = ctypes.addressof(dims) if a.ndim else None
        tensor.strides = ctypes.addressof(dims) + 8 * a.ndim if a.ndim and not self.row_major else None
        managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        if versioned:
            managed.version.major, managed.version.minor = self.major, 0
            managed.flags = self.flags
        self._structs.append((managed, dims))
        new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
            ("PyCapsule_New", ctypes.pythonapi)
        )
        self.capsules.append(new(ctypes.addressof(managed), dl.VERSIONED if versioned else dl.LEGACY, None))
        return self.capsules[-1]


def capsule_name(capsule) -> bytes:
    """The name a PyCapsule has now (a consumer renames the capsules it takes)."""
    get = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    return get(capsule)
