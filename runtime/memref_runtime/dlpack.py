"""DLPack's ABI (dlpack.h, version 1.1) in ctypes: the structs, the codes, and its capsules.

The Python side of the protocol (the array API standard):

  producer.__dlpack_device__()                -> (device type, device id)
  producer.__dlpack__(max_version=(1, 1))     -> a PyCapsule "dltensor_versioned" holding a
                                                 DLManagedTensorVersioned* (a producer older
                                                 than DLPack 1.0 takes no max_version and gives
                                                 "dltensor", a DLManagedTensor*)

Ownership: the consumer that takes the tensor renames the capsule "used_dltensor[_versioned]";
from then on the capsule's destructor leaves the tensor alone and the consumer calls the
tensor's `deleter` exactly once, when it no longer reads the memory (ImportedTensor does, when
it is collected). A capsule nobody took calls the deleter itself when it is collected: ours
(new_capsule) do, through _destroy_capsule.

No NumPy here: interop.py reads these structs into arrays, views.py (to_dlpack) fills them from arrays.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Callable, Sequence

# --- dlpack.h --------------------------------------------------------------------------------

VERSION = (1, 1)  # DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION of the header these structs follow


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.c_void_p),  # int64_t[ndim]
        ("strides", ctypes.c_void_p),  # int64_t[ndim] in elements; NULL: row-major (legacy only)
        ("byte_offset", ctypes.c_uint64),
    ]


# The deleter fields are read as plain addresses: a ctypes function object per read would cost
# more than the call.
class DLManagedTensor(ctypes.Structure):
    """The legacy (DLPack < 1.0) managed tensor."""

    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    """The managed tensor of DLPack >= 1.0: the fields up to `flags` stay where they are in
    every later version, so that a consumer can always read the version and call the deleter."""

    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void (*deleter)(DLManagedTensor[Versioned]* self)

# DLDeviceType
kDLCPU, kDLCUDA, kDLCUDAHost, kDLROCMHost = 1, 2, 3, 11
DEVICE_NAMES = {
    1: "kDLCPU",
    2: "kDLCUDA",
    3: "kDLCUDAHost",
    4: "kDLOpenCL",
    7: "kDLVulkan",
    8: "kDLMetal",
    9: "kDLVPI",
    10: "kDLROCM",
    11: "kDLROCMHost",
    12: "kDLExtDev",
    13: "kDLCUDAManaged",
    14: "kDLOneAPI",
    15: "kDLWebGPU",
    16: "kDLHexagon",
    17: "kDLMAIA",
    18: "kDLTrn",
}
# Memory the CPU reads and writes as its own: plain host memory, and pinned host memory
# (cudaMallocHost, hipMallocHost), which a GPU framework may report for a host tensor.
HOST_DEVICES = frozenset({kDLCPU, kDLCUDAHost, kDLROCMHost})

# DLDataTypeCode
kDLInt, kDLUInt, kDLFloat, kDLOpaqueHandle, kDLBfloat, kDLComplex, kDLBool = range(7)
kDLFloat8_e3m4, kDLFloat8_e4m3, kDLFloat8_e4m3b11fnuz, kDLFloat8_e4m3fn = 7, 8, 9, 10
kDLFloat8_e4m3fnuz, kDLFloat8_e5m2, kDLFloat8_e5m2fnuz, kDLFloat8_e8m0fnu = 11, 12, 13, 14
TYPE_CODE_NAMES = {
    0: "kDLInt",
    1: "kDLUInt",
    2: "kDLFloat",
    3: "kDLOpaqueHandle",
    4: "kDLBfloat",
    5: "kDLComplex",
    6: "kDLBool",
    7: "kDLFloat8_e3m4",
    8: "kDLFloat8_e4m3",
    9: "kDLFloat8_e4m3b11fnuz",
    10: "kDLFloat8_e4m3fn",
    11: "kDLFloat8_e4m3fnuz",
    12: "kDLFloat8_e5m2",
    13: "kDLFloat8_e5m2fnuz",
    14: "kDLFloat8_e8m0fnu",
    15: "kDLFloat6_e2m3fn",
    16: "kDLFloat6_e3m2fn",
    17: "kDLFloat4_e2m1fn",
}

# DLManagedTensorVersioned.flags
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1
FLAG_IS_SUBBYTE_TYPE_PADDED = 1 << 2

# Capsule names. PyCapsule keeps the `const char*` it is given, so these bytes objects live as
# long as the module (for ever): never pass a temporary.
VERSIONED, LEGACY = b"dltensor_versioned", b"dltensor"
USED = {VERSIONED: b"used_dltensor_versioned", LEGACY: b"used_dltensor"}


def device_name(device_type: int, device_id: int = 0) -> str:
    """`kDLCUDA:0`: a DLPack device as dlpack.h names it."""
    return f"{DEVICE_NAMES.get(device_type, f'device type {device_type}')}:{device_id}"


def type_name(code: int, bits: int, lanes: int = 1) -> str:
    """`kDLFloat bits 16`: a DLPack data type as dlpack.h names it."""
    name = f"{TYPE_CODE_NAMES.get(code, f'type code {code}')} bits {bits}"
    return name if lanes == 1 else f"{name} lanes {lanes}"


# --- the capsule C API -------------------------------------------------------------------------
# Own function pointers (PYFUNCTYPE: called with the GIL, a Python error raised): setting
# argtypes on ctypes.pythonapi's shared ones could clash with another library's.


def _api(name: str, restype, *argtypes):
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # receives the dying PyObject*
_capsule_new = _api("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR)
_capsule_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _api("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
# The destructor gets a capsule whose reference count is already 0: these take it as a plain
# address, so that ctypes never makes a new reference to it.
_dying_is_valid = _api("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_dying_get_pointer = _api("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)


def capsule_kind(capsule: object) -> bytes | None:
    """VERSIONED or LEGACY for a DLPack capsule nobody has taken yet, else None."""
    for name in (VERSIONED, LEGACY):
        if _capsule_is_valid(capsule, name):
            return name
    return None


# --- in: a producer's tensor ---------------------------------------------------------------------

# deleter address -> a ctypes function calling it (one per producer library)
_DELETERS: dict[int, Callable[[int], None]] = {}


def _call_deleter(deleter: int, managed: int) -> None:
    call = _DELETERS.get(deleter)
    if call is None:
        call = _DELETERS[deleter] = DELETER(deleter)
    call(managed)


# The two managed structs as raw bytes, read with one struct call: (version, manager_ctx,
# deleter, flags, DLTensor) and (DLTensor, manager_ctx, deleter); a DLTensor is (data,
# device type, device id, ndim, code, bits, lanes, shape, strides, byte_offset).
_TENSOR = "QiiiBBHQQQ"
_VERSIONED = struct.Struct("=IIQQQ" + _TENSOR)
_LEGACY = struct.Struct("=" + _TENSOR + "QQ")
assert _VERSIONED.size == ctypes.sizeof(DLManagedTensorVersioned) and _LEGACY.size == ctypes.sizeof(DLManagedTensor)
_HEADER = struct.Struct("=IIQQ")  # what every DLPack major version keeps: version, manager_ctx, deleter


class ImportedTensor:
    """A producer's DLPack tensor, taken from its capsule: the fields of its DLTensor, read once.

    Ownership: from the capsule's renaming on, the producer's memory stays valid until this
    object calls the deleter, exactly once, when it is collected. Keep this object alive as
    long as anything reads the memory (the arrays made from it hold it as their owner).
    """

    __slots__ = (
        "_managed",
        "_deleter",
        "versioned",
        "version",
        "flags",
        "data",
        "device",
        "shape",
        "strides",
        "dtype",
        "__weakref__",
    )
    _managed: int
    _deleter: int | None
    versioned: bool
    version: tuple[int, int] | None  # None: a legacy capsule, which carries no version
    flags: int
    data: int
    device: tuple[int, int]
    shape: tuple[int, ...]
    strides: tuple[int, ...] | None  # None: row-major
    dtype: tuple[int, int, int]  # DLPack (code, bits, lanes)

    def __init__(self, capsule: object) -> None:
        self._deleter = None  # __del__ runs even if this raises
        kind = capsule_kind(capsule)
        if kind is None:
            raise TypeError(f"expected a DLPack capsule named 'dltensor_versioned' or 'dltensor', got {capsule!r}")
        managed = self._managed = _capsule_get_pointer(capsule, kind)
        _capsule_set_name(capsule, USED[kind])  # the tensor is ours: its deleter is ours to call
        self.versioned = kind == VERSIONED
        if self.versioned:
            major, minor, _, self._deleter = _HEADER.unpack(ctypes.string_at(managed, _HEADER.size))
            self.version = (major, minor)
            if major != VERSION[0]:  # another layout: only the version and the deleter may be read
                raise BufferError(
                    f"DLPack {major}.{minor} tensor: this runtime reads DLPack {VERSION[0]}.x, whose layout differs"
                )
            fields = _VERSIONED.unpack(ctypes.string_at(managed, _VERSIONED.size))
            self.flags, tensor = fields[4], fields[5:]
        else:
            fields = _LEGACY.unpack(ctypes.string_at(managed, _LEGACY.size))
            self._deleter, self.version, self.flags, tensor = fields[-1], None, 0, fields[:-2]
        data, device_type, device_id, ndim, code, bits, lanes, shape, strides, byte_offset = tensor
        self.data = data + byte_offset if data else 0
        self.device = (device_type, device_id)
        self.dtype = (code, bits, lanes)
        if not 0 <= ndim <= 64:
            raise BufferError(f"DLPack tensor of {ndim} dimensions: NumPy arrays have at most 64")
        self.shape = struct.unpack(f"={ndim}q", ctypes.string_at(shape, 8 * ndim)) if ndim else ()
        # NULL strides: row-major (DLPack < 1.2 allows it, the legacy tensor often does it).
        self.strides = struct.unpack(f"={ndim}q", ctypes.string_at(strides, 8 * ndim)) if ndim and strides else None

    @property
    def read_only(self) -> bool:
        return bool(self.flags & FLAG_READ_ONLY)

    @property
    def copied(self) -> bool:
        return bool(self.flags & FLAG_IS_COPIED)

    def __del__(self):
        deleter, self._deleter = self._deleter, None
        if deleter:  # NULL: the producer gave no way to release it
            _call_deleter(deleter, self._managed)


# --- out: a capsule over our memory -----------------------------------------------------------------

# struct address -> (the struct's buffer, what keeps the memory alive): what consumers hold.
# An entry goes when the consumer calls the deleter, or with a capsule nobody took.
_EXPORTED: dict[int, tuple] = {}
_EXPORTED_LOCK = threading.Lock()  # a consumer may call the deleter from a thread of its own


@DELETER
def _delete_exported(managed):
    with _EXPORTED_LOCK:
        _EXPORTED.pop(managed, None)


@_CAPSULE_DESTRUCTOR
def _destroy_capsule(capsule):
    # Renamed "used_...": a consumer took the tensor and calls the deleter itself.
    for name in (VERSIONED, LEGACY):
        if _dying_is_valid(capsule, name):
            _delete_exported(_dying_get_pointer(capsule, name))
            return


_DELETE_EXPORTED = ctypes.cast(_delete_exported, ctypes.c_void_p).value


def new_capsule(
    owner: object,
    data: int,
    shape: Sequence[int],
    strides: Sequence[int],
    dtype: tuple,
    *,
    versioned: bool,
    version: tuple = VERSION,
    flags: int = 0,
) -> object:
    """A DLPack capsule over `data` (strides in elements, dtype (code, bits, lanes)), on the CPU.

    Ownership: `owner`, whatever keeps the memory valid, is held until the consumer calls
    the deleter (or until the capsule goes, if nobody takes it).
    """
    ndim = len(shape)
    managed_type = DLManagedTensorVersioned if versioned else DLManagedTensor
    size = ctypes.sizeof(managed_type)
    # One buffer: the managed struct, then shape[ndim] and strides[ndim].
    buffer = (ctypes.c_int64 * (-(-size // 8) + 2 * ndim))()
    managed = managed_type.from_buffer(buffer)
    address = ctypes.addressof(buffer)
    dims = (ctypes.c_int64 * (2 * ndim)).from_address(address + 8 * -(-size // 8))
    dims[:] = [*shape, *strides]
    tensor = managed.dl_tensor
    tensor.data, tensor.ndim, tensor.byte_offset = data, ndim, 0
    tensor.device.device_type, tensor.device.device_id = kDLCPU, 0
    tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = dtype
    tensor.shape = tensor.strides = None
    if ndim:
        tensor.shape, tensor.strides = ctypes.addressof(dims), ctypes.addressof(dims) + 8 * ndim
    managed.deleter = _DELETE_EXPORTED
    if versioned:
        managed.version.major, managed.version.minor = version
        managed.flags = flags
    with _EXPORTED_LOCK:
        _EXPORTED[address] = (buffer, owner)
    return _capsule_new(address, VERSIONED if versioned else LEGACY, _destroy_capsule)


def exported_count() -> int:
    """How many tensors this process exported are still held by a consumer or a capsule."""
    return len(_EXPORTED)
