"""Arrays from any framework as NumPy views of their own memory, and NumPy arrays out to any
framework, zero-copy: DLPack (dlpack.py) in and out, the array interface and buffers in.

In, in this order (the first the object offers):
  - a torch.Tensor through `Tensor.numpy()`, a jax.Array on the CPU through `np.asarray`: both
    are zero-copy views of the framework's own memory, three times faster than a DLPack round
    trip; a dtype NumPy lacks (torch's bf16 and f8), or anything else they refuse, goes on
    to DLPack, which imports it or says why not. Typed calls take a plain contiguous CPU tensor
    without a view (`torch_quick`). A tensor with the negative bit set is refused: torch's own
    `__dlpack__` would export its memory un-negated;
  - `__dlpack__`/`__dlpack_device__` (DLPack >= 1.0 asked for, the legacy capsule accepted);
  - `__array_interface__`, then the buffer protocol (memoryview).
A NumPy scalar, a list or a number is no array here: the callers say what they expected.

Ownership: a view holds what keeps the memory valid: the tensor behind a torch view, the
buffer behind a JAX view, the ImportedTensor (whose collection calls the producer's deleter,
once) behind a DLPack view. A JAX array is immutable and DLPack's read-only flag is honoured:
their views are read-only, so a kernel that may write refuses them as it refuses a read-only
ndarray. Out: `to_dlpack` (views.py, the `__dlpack__` of MemRefArray) holds the array (and so its
owner: the JIT allocation, the engine, an input) until the consumer calls the deleter; a
read-only array or one with negative strides leaves as a copy, since torch ignores the read-only
flag and aborts on negative strides.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from . import dlpack as dl
from .element_types import element_type_for_dlpack, is_numpy_native
from .views import (
    MemRefArray,
    dlpack_copy_reason,
    row_major_strides,
    to_dlpack,
    view_memref,
)

__all__ = [
    "import_array",
    "importer",
    "as_ndarray",
    "is_array_like",
    "describe_foreign",
    "to_dlpack",
    "to_framework",
    "MemRefArray",
    "FRAMEWORKS",
]

FRAMEWORKS = ("numpy", "torch", "jax")


def _top_module(cls: type) -> str:
    return cls.__module__.partition(".")[0]


def _is_torch(cls: type) -> bool:
    torch = sys.modules.get("torch")  # a tensor exists only where torch was imported
    return torch is not None and issubclass(cls, torch.Tensor)


def _is_jax(cls: type) -> bool:
    jax = sys.modules.get("jax")
    return jax is not None and _top_module(cls) in ("jax", "jaxlib") and issubclass(cls, jax.Array)


# --- describing another framework's array ------------------------------------------------------


def _type_name(value) -> str:
    cls = type(value)
    if _is_torch(cls):
        return "torch.Tensor" if cls.__name__ == "Tensor" else f"torch.Tensor ({cls.__module__}.{cls.__qualname__})"
    if _is_jax(cls):
        return "jax.Array"
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


def _device_text(value) -> str | None:
    for read in (lambda: value.device, lambda: dl.device_name(*value.__dlpack_device__())):
        try:
            device = read()
        except Exception:  # noqa: BLE001 - a framework's own error: the next way, or no device named
            continue
        if not callable(device):  # older JAX: a method
            return str(device)
    return None


def describe_foreign(
    value: Any, view: np.ndarray | None = None, view_text: str | None = None, *, device: bool = True
) -> str:
    """What an error message calls `value`, in its framework's terms: `a torch.Tensor of dtype
    torch.float16, shape (4,), device cpu`; an object without dtype and shape by its type and
    `view_text` (the NumPy view made of it, described). `device=False`: without the device."""
    name = _type_name(value)
    try:
        dtype, shape = value.dtype, tuple(value.shape)
    except Exception:  # noqa: BLE001 - not a framework array: a buffer, an array-interface object
        return f"{name} object" + (f" holding {view_text}" if view_text else "")
    text = f"{name} of dtype {dtype}, shape {shape}"
    if view is not None and view.size > 1 and not view.flags.c_contiguous:
        text += f", strides {tuple(s // view.itemsize for s in view.strides)}"
    where = _device_text(value) if device else None
    if where is not None:
        text += f", device {where}"
    if _is_jax(type(value)):
        text += ", immutable"
    elif view is not None and not view.flags.writeable:
        text += ", exported read-only"
    return ("an " if name[0] in "aeiou" else "a ") + text


# --- in ---------------------------------------------------------------------------------------


def _lead(argument: str, expected: str | None) -> str:
    return f"{argument} expects {expected}, got " if expected else f"{argument}: got "


def _address(view: np.ndarray) -> int:
    return view.__array_interface__["data"][0]


def from_dlpack(value: Any, argument: str = "array", expected: str | None = None) -> tuple[np.ndarray, int, object]:
    """(a NumPy view, the address of its first element, the ImportedTensor that owns it) of a
    DLPack producer's memory, read from the DLPack structs themselves: every element type of the
    table (bf16, f8, bool, complex)."""
    lead = _lead(argument, expected)
    try:
        device = tuple(value.__dlpack_device__())
    except Exception as e:  # noqa: BLE001 - torch's meta tensors raise ValueError here
        raise ValueError(
            f"{lead}{describe_foreign(value)}, whose __dlpack_device__() names no DLPack device "
            f"({type(e).__name__}: {e}); memref arguments must be host (CPU) memory"
        ) from e
    if device[0] not in dl.HOST_DEVICES:
        raise ValueError(
            f"{lead}{describe_foreign(value, device=False)} on DLPack device "
            f"{dl.device_name(*device)}; memref arguments must be host (CPU) memory: copy it there "
            "first (tensor.cpu(), jax.device_put(a, jax.devices('cpu')[0]), cupy.asnumpy(a))"
        )
    try:
        try:
            capsule = value.__dlpack__(max_version=dl.VERSION)
        except TypeError:  # a producer from before DLPack 1.0 takes no max_version
            capsule = value.__dlpack__()
    except Exception as e:  # noqa: BLE001 - the producer's reason (requires grad, a conjugate view, ...)
        raise ValueError(
            f"{lead}{describe_foreign(value)}, which its __dlpack__() would not export: {type(e).__name__}: {e}"
        ) from e
    try:
        tensor = dl.ImportedTensor(capsule)  # from here on its deleter is called exactly once
    except (TypeError, BufferError) as e:  # not a DLPack capsule; another DLPack major version (released)
        raise ValueError(f"{lead}{describe_foreign(value)}: {e}") from None
    try:
        et = element_type_for_dlpack(*tensor.dtype)
    except (TypeError, ImportError) as e:
        raise type(e)(f"{lead}{describe_foreign(value)}: {e}") from None
    if tensor.device[0] not in dl.HOST_DEVICES:
        raise ValueError(
            f"{lead}{describe_foreign(value)}, whose tensor is on DLPack device "
            f"{dl.device_name(*tensor.device)}; memref arguments must be host (CPU) memory"
        )
    shape = tensor.shape
    strides = tensor.strides
    if strides is None:  # row-major
        strides = row_major_strides(shape)
    if not tensor.data and 0 not in shape:
        raise ValueError(f"{lead}{describe_foreign(value)}, whose DLPack tensor has a NULL data pointer")
    # A copy made for us would take writes the producer never sees: read-only, like the flag.
    read_only = tensor.read_only or tensor.copied or _is_jax(type(value))
    view = view_memref(tensor.data, shape, strides, et.dtype, tensor, read_only)
    return view, tensor.data, tensor


_TORCH_NUMPY_DTYPES: frozenset = frozenset()  # the torch dtypes Tensor.numpy() takes; set with torch's route


def _torch_numpy_dtypes() -> frozenset:
    torch = sys.modules["torch"]
    names = (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
    return frozenset(getattr(torch, n) for n in names if hasattr(torch, n))


def _from_torch(tensor, argument, expected):
    # Where Tensor.numpy() would refuse, its exception costs more than a whole DLPack round
    # trip: a dtype NumPy lacks (bf16, f8) and a tensor that requires grad go to DLPack
    # straight away, which imports them or says why torch will not.
    if tensor.dtype in _TORCH_NUMPY_DTYPES and not tensor.requires_grad:
        try:
            view = tensor.numpy()  # zero-copy; the view's base keeps the storage alive
        except Exception:  # noqa: BLE001 - meta, CUDA, a conjugate or negative view: DLPack says why
            pass
        else:
            return view, tensor.data_ptr(), None  # the tensor itself keeps its storage
    if tensor.is_neg():  # torch's __dlpack__ exports the memory as it is, un-negated: refuse it
        raise ValueError(
            f"{_lead(argument, expected)}{describe_foreign(tensor)} with the negative bit set "
            "(a lazy negation, such as t.conj().imag), whose memory holds the values "
            "un-negated; pass t.resolve_neg()"
        )
    return from_dlpack(tensor, argument, expected)


# torch_quick's shortcut: a value -> (data address, shape), or None for the usual route.
QuickRoute = Callable[[Any], tuple[int, Any] | None]


def torch_quick(dtype: np.dtype) -> QuickRoute | Literal[False] | None:
    """The typed calls' shortcut for the common torch argument, specialised for NumPy `dtype`:
    a function of a value giving (data address, shape) for a plain `torch.Tensor` of that dtype
    on the CPU, C-contiguous, without grad, conjugate or negative bit (what `Tensor.numpy()`
    would view as it is), else None, leaving the value to `importer`'s route and its errors.
    Without the ~0.8 µs of `Tensor.numpy()`. None while torch is not imported (ask again later);
    False where torch has no such dtype."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    if not is_numpy_native(dtype):  # ml_dtypes' bf16 and f8, which torch.from_numpy refuses:
        wanted = getattr(torch, dtype.name, None)  # torch names the same encodings the same way
        if not isinstance(wanted, torch.dtype):
            return False
    else:
        try:
            wanted = torch.from_numpy(np.empty(0, dtype)).dtype
        except (TypeError, RuntimeError):
            return False
    tensor_type, is_complex = torch.Tensor, dtype.kind == "c"

    def quick(value):
        if type(value) is not tensor_type:  # subclasses (Parameter, fake tensors) take the route
            return None
        try:
            if (
                value.dtype is not wanted
                or not value.is_cpu
                or value.requires_grad
                or not value.is_contiguous()
                or value.is_neg()
                or (is_complex and value.is_conj())
            ):
                return None
            address = value.data_ptr()  # an empty tensor's may be 0: the route gives it one
        except RuntimeError:  # a sparse or otherwise storage-less tensor
            return None
        return (address, value.shape) if address else None

    return quick


_JAX_HOST: dict = {}  # sharding -> whether it is one CPU device (shardings hash by their devices)


_NOT_SET = object()


def _from_jax(array, argument, expected):
    try:
        sharding = array.sharding
        host = _JAX_HOST.get(sharding)
        if host is None:
            devices = sharding.device_set
            host = _JAX_HOST[sharding] = len(devices) == 1 and next(iter(devices)).platform == "cpu"
            if len(_JAX_HOST) > 256:
                _JAX_HOST.clear()
    except Exception:  # noqa: BLE001 - a deleted array, a tracer: DLPack says what is wrong
        host = False
    if not host:
        return from_dlpack(array, argument, expected)  # another device: the error names it
    view = np.asarray(array)  # read-only: JAX arrays are immutable
    # JAX keeps what np.asarray copied (a layout other than row-major) in _npy_value; None
    # means the view is the buffer itself, whose address costs a fifth of the view's to read.
    if getattr(array, "_npy_value", _NOT_SET) is None:
        return view, array.unsafe_buffer_pointer(), None
    return view, _address(view), None


def _from_interface(value, argument, expected):
    view = np.asarray(value)  # zero-copy: the view's base is `value`
    return view, _address(view), None


def _from_buffer(value, argument, expected):
    try:
        view = np.asarray(memoryview(value))  # zero-copy; read-only for bytes
    except (TypeError, ValueError) as e:  # a buffer format with no NumPy dtype
        raise TypeError(
            f"{_lead(argument, expected)}{describe_foreign(value)}, whose buffer NumPy cannot read: {e}"
        ) from None
    return view, _address(view), None


def _has_buffer(value) -> bool:
    try:
        memoryview(value)
    except TypeError:
        return False
    return True


def _route_of_type(cls: type):
    """How to import instances of `cls`; None: never an array here; _per_value: it depends on the instance."""
    if issubclass(cls, (np.ndarray, np.generic, int, float, complex, str, list, tuple, dict, type(None))):
        return None  # an ndarray needs no import; a NumPy scalar or a number is not a memref
    if _is_torch(cls):
        global _TORCH_NUMPY_DTYPES
        _TORCH_NUMPY_DTYPES = _TORCH_NUMPY_DTYPES or _torch_numpy_dtypes()
        return _from_torch
    if _is_jax(cls):
        return _from_jax
    if hasattr(cls, "__dlpack__") and hasattr(cls, "__dlpack_device__"):
        return from_dlpack
    return _per_value


def _per_value(value):
    if hasattr(value, "__dlpack__") and hasattr(value, "__dlpack_device__"):
        return from_dlpack
    if hasattr(value, "__array_interface__"):
        return _from_interface
    return _from_buffer if _has_buffer(value) else None


_ROUTES: dict = {}


def _route(value):
    cls = type(value)
    try:
        route = _ROUTES[cls]
    except KeyError:
        route = _ROUTES[cls] = _route_of_type(cls)
    return _per_value(value) if route is _per_value else route


def is_array_like(value: object) -> bool:
    """Whether `value` is another framework's array that import_array takes (not an ndarray)."""
    return _route(value) is not None


# The function import_array calls for `value`, or None (an ndarray, a number, no array at all):
# (value, argument, expected) -> (view, address of its first element, what must outlive the
# reading beside `value`: the ImportedTensor of a DLPack import, else None).
importer = _route


def import_array(value: object, argument: str = "array", expected: str | None = None) -> tuple[np.ndarray, int]:
    """(a zero-copy NumPy view of `value`'s memory, the address of its first element), for an
    object is_array_like accepts; errors name `argument` (and `expected`, an MLIR type). The
    view keeps the memory valid."""
    route = _route(value)
    if route is None:
        raise TypeError(
            f"{_lead(argument, expected)}{type(value).__name__}, which is not an array: expected "
            "a numpy.ndarray or an object with __dlpack__, __array_interface__ or a buffer"
        )
    return route(value, argument, expected)[:2]


def as_ndarray(value: object, argument: str = "array") -> np.ndarray:
    """`value` if it is an ndarray, else a zero-copy NumPy view of its memory (import_array)."""
    return value if isinstance(value, np.ndarray) else import_array(value, argument)[0]


# --- out (to_dlpack, the capsule itself, is views.py's) -----------------------------------------


def to_framework(array: np.ndarray, framework: str) -> tuple[Any, bool]:
    """(`array` as `framework`'s array, whether that is a copy): torch shares the memory (a copy
    for negative strides, which torch lacks); JAX arrays are immutable, so JAX gets a copy."""
    if framework == "numpy":
        return array, False
    if framework == "torch":
        import torch

        copied = dlpack_copy_reason(array) is not None  # negative strides, which torch lacks
        return torch.from_dlpack(array.view(MemRefArray)), copied
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.array(array), True
    raise ValueError(f"framework: expected one of {', '.join(FRAMEWORKS)}, got {framework!r}")
