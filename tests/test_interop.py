"""Arrays from any framework, without one installed: DLPack producers built by hand from
dlpack.h (tests/support/dlpack_producer.py), NumPy's own `__dlpack__`, the array interface and
buffers in; MemRefArray's DLPack export out. Zero-copy, every element type, the deleter called
exactly once. The torch and JAX cases are tests/test_interop_torch.py and test_interop_jax.py."""

from __future__ import annotations

import array
import ctypes
import gc
import pickle

import numpy as np
import pytest
from support.arrays import address_of, sample_values, supported_element_types
from support.dlpack_producer import DLPackProducer, capsule_name
from support.engine import HAVE_JIT
from support.paths import mlir_input

from memref_runtime import dlpack as dl
from memref_runtime import interop
from memref_runtime.conversion import MemRefArray, view_memref
from memref_runtime.element_types import dlpack_type_for_dtype, element_type_for_dlpack
from memref_runtime.np_to_memref import (
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    ranked_memref_to_numpy,
)

ELEMENT_TYPES = supported_element_types()
IDS = [dtype.name for _, dtype in ELEMENT_TYPES]

# (code, bits) of each dtype, read off dlpack.h's DLDataTypeCode by hand.
DLPACK_TYPES = {
    "bool": (6, 8),
    "int8": (0, 8),
    "int16": (0, 16),
    "int32": (0, 32),
    "int64": (0, 64),
    "uint8": (1, 8),
    "uint16": (1, 16),
    "uint32": (1, 32),
    "uint64": (1, 64),
    "float16": (2, 16),
    "float32": (2, 32),
    "float64": (2, 64),
    "complex64": (5, 64),
    "complex128": (5, 128),
    "bfloat16": (4, 16),
    "float8_e3m4": (7, 8),
    "float8_e4m3": (8, 8),
    "float8_e4m3fn": (10, 8),
    "float8_e5m2": (12, 8),
}


class Consumer:
    """Only `__dlpack__` and `__dlpack_device__` of `source`: what interop sees of a producer."""

    def __init__(self, source):
        self.source = source

    def __dlpack__(self, **kwargs):
        return self.source.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.source.__dlpack_device__()


class Exported:
    """A producer whose one capsule is `capsule`, made already."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def layouts(base: np.ndarray) -> dict[str, np.ndarray]:
    """Views of a (4, 6) base: every kind of layout a DLPack tensor can describe."""
    return {
        "contiguous": base,
        "transposed": base.T,
        "offset": base[1:, 2:],
        "strided": base[::2, 1::3],
        "negative": base[::-1, ::-2],
        "zero stride": np.broadcast_to(base[:1], (3, 4, 6)),
        "0-d": base[1, 2],
        "empty": base[:0],
        "empty inner": base[:, 3:3],
    }


@pytest.mark.parametrize("mlir_name, dtype", ELEMENT_TYPES, ids=IDS)
def test_every_element_type_has_its_dlpack_type(mlir_name, dtype):
    assert dlpack_type_for_dtype(dtype) == (*DLPACK_TYPES[dtype.name], 1)
    assert element_type_for_dlpack(*DLPACK_TYPES[dtype.name]).dtype == dtype


@pytest.mark.parametrize("mlir_name, dtype", ELEMENT_TYPES, ids=IDS)
@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_every_element_type_leaves_and_comes_back_zero_copy(mlir_name, dtype, versioned):
    base = sample_values(dtype, 24).reshape(4, 6)
    for name, view in layouts(base).items():
        if not view.flags.writeable or any(s < 0 for s in view.strides):
            continue  # those leave as copies: test_read_only_and_negative_strides_leave_as_copies
        exported = view.view(MemRefArray)
        capsule = exported.__dlpack__(max_version=(1, 1) if versioned else None)
        assert capsule_name(capsule) == (dl.VERSIONED if versioned else dl.LEGACY)
        back, address, _ = interop.from_dlpack(Exported(capsule))
        assert capsule_name(capsule) == dl.USED[dl.VERSIONED if versioned else dl.LEGACY], name
        assert back.dtype == dtype and back.shape == view.shape, name
        assert back.tobytes() == view.tobytes(), name
        if view.size:
            assert address == address_of(view) == address_of(back), name
            assert back.strides == view.strides or view.size <= 1, name


@pytest.mark.parametrize("versioned", [True, False], ids=["versioned", "legacy"])
def test_a_producer_is_read_zero_copy_in_every_layout(versioned):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    for name, view in layouts(base).items():
        producer = DLPackProducer(view, versioned=versioned)
        desc = get_ranked_memref_descriptor(producer)
        assert producer.deleted == 0, name  # the descriptor keeps the tensor: no deleter yet
        assert capsule_name(producer.capsules[-1]) == dl.USED[dl.VERSIONED if versioned else dl.LEGACY], name
        if view.size:
            assert desc.allocated == address_of(view), name
        if view.ndim:
            assert list(desc.shape) == list(view.shape), name
            strides = [s // view.itemsize for s, n in zip(view.strides, view.shape)]
            assert all(a == b for a, b, n in zip(desc.strides, strides, view.shape) if n > 1), name
        np.testing.assert_array_equal(ranked_memref_to_numpy(desc), view)
        del desc
        gc.collect()
        assert producer.deleted == 1, name


def test_the_deleter_is_called_exactly_once_when_the_last_view_goes():
    producer = DLPackProducer(np.arange(6.0))
    view = interop.as_ndarray(producer)
    desc = get_unranked_memref_descriptor(view[2:])
    slices = [view[1:], view[::2]]
    del view
    gc.collect()
    assert producer.deleted == 0
    del slices
    gc.collect()
    assert producer.deleted == 0  # the descriptor still holds a view
    del desc
    gc.collect()
    assert producer.deleted == 1
    gc.collect()
    assert producer.deleted == 1


def test_null_strides_mean_row_major_and_byte_offset_is_honoured():
    base = np.arange(12, dtype=np.int32)
    producer = DLPackProducer(base[4:].reshape(2, 4), row_major=True, byte_offset=16)
    view = interop.as_ndarray(producer)
    assert address_of(view) == address_of(base) + 16
    np.testing.assert_array_equal(view, [[4, 5, 6, 7], [8, 9, 10, 11]])


def test_a_legacy_producer_gets_the_call_without_max_version():
    producer = DLPackProducer(np.arange(3.0), versioned=False)
    np.testing.assert_array_equal(interop.as_ndarray(producer), [0, 1, 2])
    assert capsule_name(producer.capsules[0]) == b"used_dltensor"


def test_another_dlpack_major_version_is_refused_and_released():
    producer = DLPackProducer(np.arange(3.0), major=2)
    with pytest.raises(
        ValueError,
        match=r"^x: got a support\.dlpack_producer\.DLPackProducer of dtype float64, "
        r"shape \(3,\), device kDLCPU:0: DLPack 2\.0 tensor: this runtime reads "
        r"DLPack 1\.x",
    ):
        interop.as_ndarray(producer, "x")
    gc.collect()
    assert producer.deleted == 1  # "the consumer must call the deleter", dlpack.h says


def test_a_vector_data_type_is_refused_and_released():
    producer = DLPackProducer(np.arange(4, dtype=np.float32), dtype=(2, 32, 4))
    with pytest.raises(TypeError, match=r"DLPack data type kDLFloat bits 32 lanes 4 is a vector of 4 lanes"):
        interop.as_ndarray(producer, "x")
    gc.collect()
    assert producer.deleted == 1


def test_a_device_that_is_not_the_host_is_refused_before_any_export():
    producer = DLPackProducer(np.arange(3.0), device=(2, 1))  # kDLCUDA, device 1
    with pytest.raises(
        ValueError,
        match=r"^x: got a support\.dlpack_producer\.DLPackProducer of dtype float64, "
        r"shape \(3,\) on DLPack device kDLCUDA:1; memref arguments must be host "
        r"\(CPU\) memory",
    ):
        get_ranked_memref_descriptor(producer, argument="x")
    assert producer.capsules == []
    pinned = DLPackProducer(np.arange(3.0), device=(3, 0))  # kDLCUDAHost: host memory
    np.testing.assert_array_equal(interop.as_ndarray(pinned), [0, 1, 2])


def test_the_read_only_and_copied_flags_make_read_only_views():
    for flag in (dl.FLAG_READ_ONLY, dl.FLAG_IS_COPIED):
        view = interop.as_ndarray(DLPackProducer(np.arange(3.0), flags=flag))
        assert not view.flags.writeable
    assert interop.as_ndarray(DLPackProducer(np.arange(3.0))).flags.writeable
    # The legacy struct has no flags: its tensors are writable.
    assert interop.as_ndarray(DLPackProducer(np.arange(3.0), flags=dl.FLAG_READ_ONLY, versioned=False)).flags.writeable


def test_numpy_producers_and_consumers():
    a = np.arange(6, dtype=np.complex64).reshape(2, 3)
    view = interop.as_ndarray(Consumer(a.T))  # NumPy's own __dlpack__, versioned
    assert address_of(view) == address_of(a) and view.strides == a.T.strides
    read_only = np.arange(3.0)
    read_only.flags.writeable = False
    assert not interop.as_ndarray(Consumer(read_only)).flags.writeable  # NumPy sets DLPack's flag
    result = np.arange(4, dtype=np.float32).view(MemRefArray)
    back = np.from_dlpack(result)  # NumPy as the consumer of ours
    assert address_of(back) == address_of(result) and type(back) is np.ndarray


class Interface:
    """An object with only `__array_interface__`, over `array`'s memory."""

    def __init__(self, array):
        self.array, self.__array_interface__ = array, array.__array_interface__


def _buffers():
    """(name, the object, the address of its first element, dtype, values): buffers and an array interface."""
    doubles = array.array("d", [1, 2, 3])
    raw = bytearray(b"\x01\x02\x03")
    ints = (ctypes.c_int32 * 3)(1, 2, 3)
    shorts = np.arange(1, 4, dtype=np.int16)
    longs = np.arange(1, 4, dtype=np.int64)
    return [
        ("array.array", doubles, doubles.buffer_info()[0], np.float64),
        ("bytearray", raw, ctypes.addressof(ctypes.c_char.from_buffer(raw)), np.uint8),
        ("ctypes", ints, ctypes.addressof(ints), np.int32),
        ("memoryview", memoryview(shorts), address_of(shorts), np.int16),
        ("__array_interface__", Interface(longs), address_of(longs), np.int64),
    ]


def test_buffers_and_array_interfaces_are_read_zero_copy():
    for name, value, address, dtype in _buffers():
        desc = get_ranked_memref_descriptor(value)
        view = ranked_memref_to_numpy(desc)
        assert desc.allocated == address, name
        assert view.dtype == dtype and view.tolist() == [1, 2, 3], name
        view[0] = 7  # writable, and the same memory
        assert interop.as_ndarray(value)[0] == 7, name


def test_numbers_strings_and_numpy_scalars_are_not_arrays():
    for value in (1, 2.5, 1j, "abc", [1, 2], (1,), None, np.float32(1), np.int64(3)):
        assert not interop.is_array_like(value), value
    assert interop.is_array_like(b"abc")  # bytes are a (read-only) buffer
    assert not interop.as_ndarray(b"abc").flags.writeable


# --- MemRefArray: out through DLPack, NumPy everywhere else ----------------------------------------


def bf16_result(n: int = 4) -> MemRefArray:
    import ml_dtypes

    return np.arange(n, dtype=np.float32).astype(ml_dtypes.bfloat16).view(MemRefArray)


def test_memref_arrays_behave_as_numpy_arrays():
    pytest.importorskip("ml_dtypes")
    r = np.arange(6, dtype=np.float32).reshape(2, 3).view(MemRefArray)
    assert repr(r) == repr(np.arange(6, dtype=np.float32).reshape(2, 3)) and str(r) == str(r.view(np.ndarray))
    assert type(r + 1) is np.ndarray and type(np.sqrt(r)) is np.ndarray and type(r.sum()) is np.float32
    assert type(r[0]) is MemRefArray and type(r.T) is MemRefArray  # views keep exporting
    same = r
    same += 1  # in place: the same array
    assert same is r and r[0, 0] == 1
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is np.ndarray and np.array_equal(back, r)
    assert repr(bf16_result()) == repr(bf16_result().view(np.ndarray)) and repr(bf16_result()).startswith("array(")


def test_bf16_leaves_through_dlpack_where_numpys_export_refuses():
    pytest.importorskip("ml_dtypes")
    r = bf16_result()
    with pytest.raises(BufferError):
        r.view(np.ndarray).__dlpack__()  # NumPy's own
    before = dl.exported_count()
    tensor = dl.ImportedTensor(r.__dlpack__(max_version=(1, 1)))
    assert tensor.dtype == (dl.kDLBfloat, 16, 1) and tensor.data == address_of(r) and tensor.version == (1, 1)
    assert r.__dlpack_device__() == (dl.kDLCPU, 0)
    assert dl.exported_count() == before + 1
    del tensor  # the consumer is done: our deleter runs
    assert dl.exported_count() == before
    r.__dlpack__()  # a capsule nobody takes releases the export when it goes
    gc.collect()
    assert dl.exported_count() == before


def test_export_versions_flags_and_refusals():
    r = np.arange(4.0).view(MemRefArray)
    assert dl.ImportedTensor(r.__dlpack__(max_version=(1, 0))).version == (1, 0)
    assert dl.ImportedTensor(r.__dlpack__(max_version=(2, 3))).version == (1, 1)
    assert not dl.ImportedTensor(r.__dlpack__()).versioned
    copied = dl.ImportedTensor(r.__dlpack__(max_version=(1, 1), copy=True))
    assert copied.copied and copied.data != address_of(r)
    with pytest.raises(BufferError, match=r"^cannot export to DLPack device kDLCUDA:0"):
        r.__dlpack__(dl_device=(dl.kDLCUDA, 0))
    assert dl.ImportedTensor(r.__dlpack__(dl_device=(dl.kDLCPU, 0))).data == address_of(r)


def test_read_only_and_negative_strides_leave_as_copies():
    r = np.arange(4.0).view(MemRefArray)
    r.flags.writeable = False  # a view of a global: torch would ignore the flag and write
    for view in (r, np.arange(4.0)[::-1].view(MemRefArray)):
        tensor = dl.ImportedTensor(view.__dlpack__(max_version=(1, 1)))
        assert tensor.copied and tensor.data != address_of(view) and tensor.strides == (1,)
        assert np.array_equal(view_memref(tensor.data, (4,), (1,), view.dtype, tensor), view)
        with pytest.raises(BufferError, match="leaves through DLPack only as a copy; call without copy=False"):
            view.__dlpack__(copy=False)


# --- typed calls (no framework needed: a producer of our own) -------------------------------------

# @total(a): the sum of an f64 memref (shared with tests/test_memory.py); @same(a): a itself.
KERNELS = (
    mlir_input("sum_f64.mlir").read_text()
    + r"""
func.func @same(%a: memref<?xf64>) -> memref<?xf64> {
  return %a : memref<?xf64>
}
"""
)


@pytest.fixture(scope="module")
def kernels():
    """KERNELS, compiled once for the module: what is checked is how long a DLPack import lives."""
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    return JitModule(KERNELS)


@pytest.mark.jit
def test_a_typed_call_keeps_a_dlpack_import_until_it_returns_and_a_bound_call_longer(kernels):
    producer = DLPackProducer(np.arange(5.0))
    assert kernels.total(producer) == 10.0
    gc.collect()
    assert producer.deleted == 1
    bound = kernels.total.bind(producer)
    gc.collect()
    assert producer.deleted == 1  # the bound call's frame holds the import
    assert bound() == 10.0 and bound() == 10.0
    del bound
    gc.collect()
    assert producer.deleted == 2


@pytest.mark.jit
def test_a_result_viewing_a_dlpack_input_keeps_the_import(kernels):
    producer = DLPackProducer(np.arange(5.0))
    r = kernels.same(producer)
    assert address_of(r) == address_of(producer.array)
    gc.collect()
    assert producer.deleted == 1  # the call's own import went with its frame ...
    del r
    gc.collect()
    assert producer.deleted == 2  # ... and the result's (Ownership's) with the result


@pytest.mark.jit
def test_results_passed_back_in_are_memref_arrays_on_the_fast_path(kernels):
    r = kernels.same(np.arange(4.0))
    assert type(r) is MemRefArray
    assert kernels.total(r) == 6.0 and kernels.total(r[1:]) == 6.0
    assert get_ranked_memref_descriptor(r).allocated == address_of(r)


def test_the_lit_probe_finds_the_frameworks_without_importing_them():
    import importlib.util
    import sys
    from pathlib import Path

    from memref_runtime.lit.interpreter import probe

    found = probe(sys.executable, "mlir", [str(Path(__file__).resolve().parent.parent / "runtime")])
    assert found.has_torch == (importlib.util.find_spec("torch") is not None)
    assert found.has_jax == (importlib.util.find_spec("jax") is not None)
