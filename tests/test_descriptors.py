"""Descriptor layouts: upstream's fields and sizes, one cached class per (rank, element type)."""

import ctypes

import numpy as np
import pytest
from support.arrays import sample_values, supported_element_types

from memref_runtime import element_type_for_dtype, ranked_descriptor_type
from memref_runtime.descriptors import descriptor_layout
from memref_runtime.np_to_memref import (
    C64,
    F16,
    UnrankedMemRefDescriptor,
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    make_zero_d_memref_descriptor,
)

I64 = ctypes.sizeof(ctypes.c_longlong)
CTYPES = [ctypes.c_float, ctypes.c_double, ctypes.c_bool, ctypes.c_int8, ctypes.c_uint64, F16, C64]


@pytest.mark.parametrize("rank", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("ctype", CTYPES, ids=lambda c: c.__name__)
def test_ranked_layout_matches_the_c_struct(rank, ctype):
    cls = make_nd_memref_descriptor(rank, ctype)
    assert [name for name, _ in cls._fields_] == ["allocated", "aligned", "offset", "shape", "strides"]
    assert ctypes.sizeof(cls) == I64 * (3 + 2 * rank)
    assert (cls.allocated.offset, cls.aligned.offset, cls.offset.offset) == (0, I64, 2 * I64)
    assert cls.shape.offset == 3 * I64 and cls.shape.size == rank * I64
    assert cls.strides.offset == (3 + rank) * I64 and cls.strides.size == rank * I64
    # Upstream code does pointer arithmetic on `aligned`: it must be a typed pointer.
    assert dict(cls._fields_)["aligned"] is ctypes.POINTER(ctype)


@pytest.mark.parametrize("ctype", CTYPES, ids=lambda c: c.__name__)
def test_zero_d_layout_has_no_sizes_or_strides(ctype):
    cls = make_zero_d_memref_descriptor(ctype)
    assert [name for name, _ in cls._fields_] == ["allocated", "aligned", "offset"]
    assert ctypes.sizeof(cls) == 3 * I64
    assert dict(cls._fields_)["aligned"] is ctypes.POINTER(ctype)


def test_unranked_layout():
    assert [name for name, _ in UnrankedMemRefDescriptor._fields_] == ["rank", "descriptor"]
    assert ctypes.sizeof(UnrankedMemRefDescriptor) == 2 * I64
    assert UnrankedMemRefDescriptor.descriptor.offset == I64


@pytest.mark.parametrize("rank", [1, 2, 3])
def test_layout_is_upstreams_byte_for_byte(rank):
    upstream = pytest.importorskip("mlir.runtime")
    ours = make_nd_memref_descriptor(rank, ctypes.c_float)
    theirs = upstream.make_nd_memref_descriptor(rank, ctypes.c_float)
    assert ctypes.sizeof(ours) == ctypes.sizeof(theirs)
    for (name, _), (their_name, _) in zip(ours._fields_, theirs._fields_):
        assert name == their_name
        assert getattr(ours, name).offset == getattr(theirs, their_name).offset
    assert ctypes.sizeof(make_zero_d_memref_descriptor(ctypes.c_float)) == ctypes.sizeof(
        upstream.make_zero_d_memref_descriptor(ctypes.c_float)
    )


def test_classes_are_cached_per_rank_and_element_type():
    assert make_nd_memref_descriptor(2, ctypes.c_float) is make_nd_memref_descriptor(2, ctypes.c_float)
    assert make_zero_d_memref_descriptor(ctypes.c_float) is make_zero_d_memref_descriptor(ctypes.c_float)
    assert make_nd_memref_descriptor(2, ctypes.c_float) is not make_nd_memref_descriptor(3, ctypes.c_float)
    assert make_nd_memref_descriptor(2, ctypes.c_float) is not make_nd_memref_descriptor(2, ctypes.c_double)
    assert ranked_descriptor_type(0, ctypes.c_float) is make_zero_d_memref_descriptor(ctypes.c_float)
    assert ranked_descriptor_type(2, ctypes.c_float) is make_nd_memref_descriptor(2, ctypes.c_float)


@pytest.mark.parametrize(
    "mlir_name, dtype", supported_element_types(), ids=[d.name for _, d in supported_element_types()]
)
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (0, 2)], ids=str)
def test_conversion_reuses_one_class_per_rank_and_dtype(mlir_name, dtype, shape):
    ctype = element_type_for_dtype(dtype).ctype
    first = sample_values(dtype, int(np.prod(shape))).reshape(shape)
    second = sample_values(dtype, int(np.prod(shape))).reshape(shape)[::-1] if shape else first.copy()
    types = {type(get_ranked_memref_descriptor(a)) for a in (first, first, second)}
    assert types == {ranked_descriptor_type(len(shape), ctype)}
    # The unranked descriptor points at a descriptor of the same cached class.
    assert type(get_unranked_memref_descriptor(first)._keepalive) is ranked_descriptor_type(len(shape), ctype)


def test_pointer_types_are_reused_too():
    a = np.zeros((2, 2), np.float32)
    assert type(ctypes.pointer(get_ranked_memref_descriptor(a))) is type(
        ctypes.pointer(get_ranked_memref_descriptor(a + 1))
    )


def test_negative_rank_raises_value_error():
    with pytest.raises(ValueError, match="rank: expected an int >= 0, got -1"):
        make_nd_memref_descriptor(-1, ctypes.c_float)


@pytest.mark.parametrize("rank", [1.0, True, "2", None])
def test_rank_of_the_wrong_type_raises_type_error(rank):
    with pytest.raises(TypeError, match="rank: expected an int >= 0"):
        make_nd_memref_descriptor(rank, ctypes.c_float)


def test_numpy_integer_rank_gives_the_same_class():
    assert make_nd_memref_descriptor(np.int64(2), ctypes.c_float) is make_nd_memref_descriptor(2, ctypes.c_float)


@pytest.mark.parametrize("dtype", [np.float32, "f32", np.dtype("f4"), 4, None])
def test_bad_element_ctype_raises_type_error(dtype):
    with pytest.raises(TypeError, match="ctypes element type"):
        make_nd_memref_descriptor(1, dtype)
    with pytest.raises(TypeError, match="ctypes element type"):
        make_zero_d_memref_descriptor(dtype)


def test_descriptor_layout_reads_foreign_classes_with_upstreams_fields():
    class Foreign(ctypes.Structure):
        _fields_ = [
            ("allocated", ctypes.c_longlong),
            ("aligned", ctypes.POINTER(ctypes.c_int16)),
            ("offset", ctypes.c_longlong),
            ("shape", ctypes.c_longlong * 3),
            ("strides", ctypes.c_longlong * 3),
        ]

    class Foreign0d(ctypes.Structure):
        _fields_ = Foreign._fields_[:3]

    rank, ctype, packer = descriptor_layout(Foreign)
    assert (rank, ctype, packer.size) == (3, ctypes.c_int16, ctypes.sizeof(Foreign))
    rank, ctype, packer = descriptor_layout(Foreign0d)
    assert (rank, ctype, packer.size) == (0, ctypes.c_int16, ctypes.sizeof(Foreign0d))


def test_descriptor_layout_rejects_other_structures():
    class NotADescriptor(ctypes.Structure):
        _fields_ = [("x", ctypes.c_int), ("y", ctypes.c_int)]

    with pytest.raises(TypeError, match="NotADescriptor"):
        descriptor_layout(NotADescriptor)
