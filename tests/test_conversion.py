"""NumPy <-> memref descriptors without native code: every layout, exact, checked."""

import ctypes

import numpy as np
import pytest
from support.arrays import (
    address_of,
    assert_descriptor_matches,
    assert_same_view,
    sample_values,
    supported_element_types,
)

from memref_runtime import descriptor_to_numpy, element_type_for_dtype
from memref_runtime.np_to_memref import (
    UnrankedMemRefDescriptor,
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    make_zero_d_memref_descriptor,
    move_aligned_ptr_by_offset,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)

ELEMENT_TYPES = supported_element_types()
DTYPES = [dtype for _, dtype in ELEMENT_TYPES]
DTYPE_IDS = [dtype.name for dtype in DTYPES]


def ranked_round_trip(array):
    return ranked_memref_to_numpy(ctypes.pointer(get_ranked_memref_descriptor(array)))


def unranked_round_trip(array):
    return unranked_memref_to_numpy(ctypes.pointer(get_unranked_memref_descriptor(array)), array.dtype)


ROUND_TRIPS = [ranked_round_trip, unranked_round_trip]


# --- every element type, both directions --------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
def test_every_element_type_round_trips(dtype, round_trip):
    array = sample_values(dtype, 12).reshape(3, 4)
    result = round_trip(array)
    assert_same_view(result, array)
    assert np.array_equal(result.astype(np.complex128), array.astype(np.complex128))


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_descriptor_fields(dtype):
    array = sample_values(dtype, 6).reshape(2, 3)
    desc = get_ranked_memref_descriptor(array)
    assert type(desc)._fields_[1][1] is ctypes.POINTER(element_type_for_dtype(dtype).ctype)
    assert_descriptor_matches(desc, array)
    unranked = get_unranked_memref_descriptor(array)
    assert unranked.rank == 2
    ranked = type(desc).from_address(unranked.descriptor)
    assert_descriptor_matches(ranked, array)


def test_bool_round_trips_as_one_byte_i1():
    array = np.array([[True, False, True], [False, False, True]])
    desc = get_ranked_memref_descriptor(array)
    assert list(desc.strides) == [3, 1]  # one byte per element
    assert ctypes.cast(desc.aligned, ctypes.c_void_p).value == array.ctypes.data
    for round_trip in ROUND_TRIPS:
        result = round_trip(array)
        assert result.dtype == np.bool_
        assert np.array_equal(result, array)
        result[0, 1] = True
        assert array[0, 1]
        array[0, 1] = False


def test_ranked_memref_to_numpy_takes_the_struct_or_a_pointer_to_it():
    array = np.arange(6.0).reshape(2, 3)
    desc = get_ranked_memref_descriptor(array)
    assert_same_view(ranked_memref_to_numpy(desc), array)
    assert_same_view(ranked_memref_to_numpy(ctypes.pointer(desc)), array)
    unranked = get_unranked_memref_descriptor(array)
    assert_same_view(unranked_memref_to_numpy(unranked, np.float64), array)
    assert_same_view(unranked_memref_to_numpy(ctypes.pointer(unranked), np.float64), array)


@pytest.mark.parametrize("np_dtype", [np.float32, np.dtype(np.float32), "float32", ctypes.c_float])
def test_unranked_memref_to_numpy_accepts_dtype_spellings(np_dtype):
    array = np.arange(4, dtype=np.float32)
    result = unranked_memref_to_numpy(ctypes.pointer(get_unranked_memref_descriptor(array)), np_dtype)
    assert_same_view(result, array)


# --- rank 0 -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=DTYPE_IDS)
def test_rank_0_both_ways(dtype):
    array = sample_values(dtype, 3)[1:2].reshape(())
    desc = get_ranked_memref_descriptor(array)
    assert type(desc) is make_zero_d_memref_descriptor(element_type_for_dtype(dtype).ctype)
    assert_descriptor_matches(desc, array)
    for result in (
        ranked_memref_to_numpy(ctypes.pointer(desc)),
        unranked_memref_to_numpy(ctypes.pointer(get_unranked_memref_descriptor(array)), dtype),
    ):
        assert result.shape == ()
        assert_same_view(result, array)


def test_rank_0_view_is_writable_and_honours_offset():
    base = np.arange(5.0)
    desc = make_zero_d_memref_descriptor(ctypes.c_double)()
    desc.allocated = base.ctypes.data
    desc.aligned = base.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    desc.offset = 3
    view = ranked_memref_to_numpy(ctypes.pointer(desc))
    assert view.shape == () and view == base[3]
    view[()] = -7.0
    assert base[3] == -7.0


def test_unranked_rank_0_from_a_hand_made_descriptor():
    base = np.arange(4, dtype=np.int32)
    ranked = make_zero_d_memref_descriptor(ctypes.c_int32)(
        base.ctypes.data, base.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)), 2
    )
    unranked = UnrankedMemRefDescriptor(0, ctypes.addressof(ranked))
    view = unranked_memref_to_numpy(ctypes.pointer(unranked), np.int32)
    assert view.shape == () and view == base[2]


# --- zero-size dimensions -----------------------------------------------------------------


ZERO_SIZE = [
    np.zeros((0,), np.float32),
    np.zeros((3, 0), np.float64),
    np.zeros((0, 4, 2), np.int16),
    np.zeros((2, 0, 0, 5), np.complex64),
    np.arange(10.0)[5:5],
    np.arange(12.0).reshape(3, 4)[:, 2:2],
    np.arange(12.0).reshape(3, 4)[::-1, 3:1],
    np.arange(24, dtype=np.int8).reshape(2, 3, 4).transpose(2, 0, 1)[:, :, 3:],
]


@pytest.mark.parametrize("array", ZERO_SIZE, ids=lambda a: f"{a.shape}{a.dtype}")
@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
def test_zero_size_dimensions_round_trip(array, round_trip):
    desc = get_ranked_memref_descriptor(array)
    assert list(desc.shape) == list(array.shape)
    result = round_trip(array)
    assert result.shape == array.shape and result.dtype == array.dtype and result.size == 0
    assert address_of(result) == address_of(array)


@pytest.mark.parametrize("shape", [(0,), (4, 0), (0, 3, 2)], ids=str)
def test_zero_size_memref_made_by_hand(shape):
    backing = np.zeros(1, np.float32)
    rank = len(shape)
    desc = make_nd_memref_descriptor(rank, ctypes.c_float)()
    desc.allocated = backing.ctypes.data
    desc.aligned = backing.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
    desc.shape[:] = shape
    desc.strides[:] = [1] * rank
    assert ranked_memref_to_numpy(ctypes.pointer(desc)).shape == shape
    unranked = UnrankedMemRefDescriptor(rank, ctypes.addressof(desc))
    assert unranked_memref_to_numpy(ctypes.pointer(unranked), np.float32).shape == shape


# --- strides ------------------------------------------------------------------------------


def _strided_cases():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    row = np.arange(5, dtype=np.int64)
    return {
        "negative": np.arange(10.0)[::-1],
        "negative-2d": a[::-1, :, ::-2],
        "slice-step": a[:, 1::2, ::3],
        "transpose": a.T,
        "transpose-axes": a.transpose(1, 2, 0),
        "column": a[:, :, 2],
        "broadcast": np.broadcast_to(row, (4, 5)),
        "broadcast-inner": np.broadcast_to(row[:, None], (5, 3)),
        "broadcast-0d": np.broadcast_to(np.float64(2.5), (3, 2)),
        "newaxis": row[None, :, None],
        "fortran": np.asfortranarray(a),
        "complex-real-part": np.arange(6, dtype=np.complex128).real,  # stride 16 on 8-byte floats
    }


STRIDED = _strided_cases()


@pytest.mark.parametrize("name", list(STRIDED))
@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
def test_strided_views_round_trip_exactly(name, round_trip):
    view = STRIDED[name]
    assert_descriptor_matches(get_ranked_memref_descriptor(view), view)
    assert_same_view(round_trip(view), view)


def test_strides_are_counted_in_elements():
    view = np.arange(60, dtype=np.float32).reshape(3, 4, 5)[::-1, 1::2, ::-3]
    desc = get_ranked_memref_descriptor(view)
    assert list(desc.strides) == [s // 4 for s in view.strides] == [-20, 10, -3]


def test_broadcast_views_are_read_only_and_accepted():
    view = np.broadcast_to(np.arange(3.0), (4, 3))
    assert not view.flags.writeable
    desc = get_ranked_memref_descriptor(view)
    assert list(desc.strides) == [0, 1]
    assert_same_view(ranked_memref_to_numpy(desc), view)


def test_as_strided_byte_stride_raises_naming_the_stride_and_argument():
    buffer = np.zeros(64, np.float32)
    view = np.lib.stride_tricks.as_strided(buffer, shape=(3, 4), strides=(16, 6))
    with pytest.raises(ValueError, match=r"^lhs: stride 6 bytes on axis 1"):
        get_ranked_memref_descriptor(view, argument="lhs")


def test_odd_stride_on_an_axis_never_stepped_along_is_harmless():
    buffer = np.arange(16, dtype=np.float32)
    length_1 = np.lib.stride_tricks.as_strided(buffer, shape=(1, 4), strides=(7, 4))
    assert np.array_equal(ranked_round_trip(length_1), length_1)
    empty = np.lib.stride_tricks.as_strided(buffer, shape=(0, 4), strides=(7, 4))
    assert ranked_round_trip(empty).shape == (0, 4)


def test_misaligned_data_raises_value_error():
    raw = np.zeros(17, np.uint8)
    misaligned = np.frombuffer(raw.data, dtype=np.float32, count=4, offset=1)
    assert misaligned.ctypes.data % 4
    with pytest.raises(ValueError, match="aligned"):
        get_ranked_memref_descriptor(misaligned)


# --- offsets ------------------------------------------------------------------------------


def test_memref_to_numpy_honours_a_hand_set_offset():
    base = np.arange(10.0)
    desc = get_ranked_memref_descriptor(base)
    desc.offset = 3
    desc.shape[0] = 4
    view = ranked_memref_to_numpy(ctypes.pointer(desc))
    assert np.array_equal(view, base[3:7])
    assert address_of(view) == address_of(base) + 3 * base.itemsize
    view[0] = -1.0
    assert base[3] == -1.0


def test_hand_made_2d_descriptor_with_offset_and_strides():
    base = np.arange(20, dtype=np.int32)
    desc = make_nd_memref_descriptor(2, ctypes.c_int32)()
    desc.allocated = base.ctypes.data
    desc.aligned = base.ctypes.data_as(ctypes.POINTER(ctypes.c_int32))
    desc.offset = 1
    desc.shape[:] = [3, 4]
    desc.strides[:] = [1, 3]  # column-major over base[1:13]
    expected = base[1:13].reshape(4, 3).T
    view = ranked_memref_to_numpy(ctypes.pointer(desc))
    assert np.array_equal(view, expected) and view.strides == expected.strides
    unranked = UnrankedMemRefDescriptor(2, ctypes.addressof(desc))
    assert np.array_equal(unranked_memref_to_numpy(ctypes.pointer(unranked), np.int32), expected)


def test_negative_strides_with_offset_from_the_end():
    base = np.arange(6.0)
    desc = get_ranked_memref_descriptor(base)
    desc.offset = 5
    desc.strides[0] = -1
    assert np.array_equal(ranked_memref_to_numpy(desc), base[::-1])


@pytest.mark.parametrize(
    "make_view",
    [
        lambda b: b[3:9:2],
        lambda b: b[7:1:-3],
        lambda b: b.reshape(3, 4)[1:, 2:],
        lambda b: b[11:11],
    ],
    ids=["step", "negative", "2d", "empty-at-end"],
)
def test_numpy_view_to_memref_points_at_the_first_element_with_offset_0(make_view):
    base = np.arange(12.0)
    view = make_view(base)
    desc = get_ranked_memref_descriptor(view)
    assert_descriptor_matches(desc, view)
    assert_same_view(ranked_memref_to_numpy(desc), view)


def test_move_aligned_ptr_by_offset():
    base = np.arange(8, dtype=np.int16)
    pointer = base.ctypes.data_as(ctypes.POINTER(ctypes.c_int16))
    moved = move_aligned_ptr_by_offset(pointer, 5)
    assert type(moved) is type(pointer)
    assert moved[0] == base[5]
    assert ctypes.cast(moved, ctypes.c_void_p).value == base.ctypes.data + 5 * 2


# --- views: writable, and what they are made of -------------------------------------------


@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
def test_views_are_writable_and_writes_reach_the_memory(round_trip):
    base = np.zeros((4, 6), np.float32)
    source = base[1:, ::-2]
    view = round_trip(source)
    assert view.flags.writeable
    view[...] = np.arange(view.size, dtype=np.float32).reshape(view.shape)
    expected = np.zeros((4, 6), np.float32)
    expected[1:, ::-2] = np.arange(9, dtype=np.float32).reshape(3, 3)
    assert np.array_equal(base, expected)


def test_descriptor_to_numpy_owner_is_kept():
    array = np.arange(3.0)
    owner = object()
    view = descriptor_to_numpy(get_ranked_memref_descriptor(array), owner=owner)
    assert view.base.owner is owner


# --- checked input ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint16, np.complex64, np.float16])
def test_non_native_byte_order_raises_value_error(dtype):
    swapped = np.arange(4).astype(np.dtype(dtype).newbyteorder("S"))
    with pytest.raises(ValueError, match="byte order"):
        get_ranked_memref_descriptor(swapped)
    with pytest.raises(ValueError, match="byte order"):
        get_unranked_memref_descriptor(swapped)


BAD_ARRAYS = {
    "object": np.array([object(), 1], dtype=object),
    "structured": np.zeros(3, dtype=[("a", "<f4"), ("b", "u1")]),
    "datetime64": np.array(["2024-01-01", "2025-06-30"], dtype="datetime64[D]"),
    "timedelta64": np.array([1, 2], dtype="timedelta64[s]"),
    "str": np.array(["ab", "c"]),
    "bytes": np.array([b"ab", b"c"]),
    "void": np.zeros(2, dtype="V3"),
}


@pytest.mark.parametrize("name", list(BAD_ARRAYS))
@pytest.mark.parametrize("convert", [get_ranked_memref_descriptor, get_unranked_memref_descriptor])
def test_unsupported_dtypes_raise_type_error_naming_the_dtype(name, convert):
    array = BAD_ARRAYS[name]
    with pytest.raises(TypeError) as info:
        convert(array)
    assert array.dtype.name in str(info.value) and repr(array.dtype.str) in str(info.value)


def test_unranked_memref_to_numpy_rejects_bad_dtypes():
    unranked = get_unranked_memref_descriptor(np.zeros(2, np.float32))
    with pytest.raises(TypeError, match="object"):
        unranked_memref_to_numpy(unranked, object)
    with pytest.raises(ValueError, match="byte order"):
        unranked_memref_to_numpy(unranked, ">f4" if np.little_endian else "<f4")


def test_unranked_with_garbage_rank_or_null_pointer_raises():
    with pytest.raises(ValueError, match="rank"):
        unranked_memref_to_numpy(UnrankedMemRefDescriptor(-1, 8), np.float32)
    with pytest.raises(ValueError, match="NULL"):
        unranked_memref_to_numpy(UnrankedMemRefDescriptor(1, None), np.float32)


def test_ranked_memref_to_numpy_rejects_non_descriptors():
    with pytest.raises(TypeError, match="memref"):
        ranked_memref_to_numpy(42)


def test_ndarray_subclass_is_accepted():
    class Subclass(np.ndarray):
        pass

    array = np.arange(6.0).reshape(2, 3)
    desc = get_ranked_memref_descriptor(array.view(Subclass))
    assert_same_view(ranked_memref_to_numpy(desc), array)


# --- read-only memory stays read-only, masks are not dropped, garbage ranks are refused -------


def read_only_slice():
    a = np.arange(6.0)[::2]
    a.setflags(write=False)
    return a


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.broadcast_to(np.arange(3, dtype=np.float32), (2, 3)),
        lambda: np.frombuffer(bytes(16), dtype=np.float32),
        read_only_slice,
    ],
    ids=["broadcast", "bytes", "flag"],
)
def test_views_of_read_only_arrays_are_read_only(make):
    a = make()
    desc = get_ranked_memref_descriptor(a)
    for view in (
        ranked_memref_to_numpy(desc),
        ranked_memref_to_numpy(ctypes.pointer(desc)),
        unranked_memref_to_numpy(ctypes.pointer(get_unranked_memref_descriptor(a)), a.dtype),
    ):
        assert not view.flags.writeable
        np.testing.assert_array_equal(view, a)
        with pytest.raises(ValueError, match="read-only"):
            view[...] = 0
    writable = np.arange(4.0)
    assert ranked_memref_to_numpy(get_ranked_memref_descriptor(writable)).flags.writeable
    assert ranked_memref_to_numpy(get_ranked_memref_descriptor(writable[::2])).flags.writeable


def test_masked_arrays_are_refused():
    m = np.ma.masked_array(np.arange(4.0), mask=[0, 1, 0, 1])
    with pytest.raises(TypeError, match="nparray: .*masked array.*filled"):
        get_ranked_memref_descriptor(m)
    with pytest.raises(TypeError, match="masked array"):
        get_unranked_memref_descriptor(m)


@pytest.mark.parametrize("rank", [-1, 65, 1 << 20])
def test_unranked_descriptor_with_an_impossible_rank_raises(rank):
    inner = get_ranked_memref_descriptor(np.arange(4.0))
    bogus = UnrankedMemRefDescriptor(rank, ctypes.addressof(inner))
    with pytest.raises(ValueError, match=f"rank {rank}, expected 0..64"):
        unranked_memref_to_numpy(ctypes.pointer(bogus), np.float64)
