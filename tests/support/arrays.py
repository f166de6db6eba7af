"""Arrays of every supported element type, and the checks that a conversion kept the view itself."""

from __future__ import annotations

import ctypes

import numpy as np


def supported_element_types() -> list[tuple[str, np.dtype]]:
    """Every element type the runtime supports, as (MLIR name, NumPy dtype); ml_dtypes ones if present."""
    table = [
        ("i1", np.dtype(np.bool_)),
        ("i8", np.dtype(np.int8)),
        ("i16", np.dtype(np.int16)),
        ("i32", np.dtype(np.int32)),
        ("i64", np.dtype(np.int64)),
        ("i8", np.dtype(np.uint8)),
        ("i16", np.dtype(np.uint16)),
        ("i32", np.dtype(np.uint32)),
        ("i64", np.dtype(np.uint64)),
        ("f16", np.dtype(np.float16)),
        ("f32", np.dtype(np.float32)),
        ("f64", np.dtype(np.float64)),
        ("complex<f32>", np.dtype(np.complex64)),
        ("complex<f64>", np.dtype(np.complex128)),
    ]
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover
        return table
    return table + [
        ("bf16", np.dtype(ml_dtypes.bfloat16)),
        ("f8E5M2", np.dtype(ml_dtypes.float8_e5m2)),
        ("f8E4M3", np.dtype(ml_dtypes.float8_e4m3)),
        ("f8E3M4", np.dtype(ml_dtypes.float8_e3m4)),
        ("f8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn)),
    ]


def sample_values(dtype: np.dtype, n: int) -> np.ndarray:
    """`n` distinct-ish values of `dtype`, exactly representable (small integers, halves)."""
    if dtype == np.bool_:
        return np.arange(n) % 3 == 0
    if dtype.kind in "iu":
        return (np.arange(n) % 100 + 1).astype(dtype)
    if dtype.kind == "c":
        return (np.arange(n) % 8 + 0.5 - 1j * (np.arange(n) % 5)).astype(dtype)
    # floats, including ml_dtypes' (kind 'V' for some versions): halves up to 7 fit every f8.
    return ((np.arange(n) % 15) * 0.5 - 3.0).astype(np.float32).astype(dtype)


def address_of(array: np.ndarray) -> int:
    """The address of the array's first element (what NumPy -> memref -> NumPy must keep)."""
    return array.__array_interface__["data"][0]


def aligned_address(desc) -> int:
    """A descriptor's aligned pointer, as an int (0 for NULL)."""
    return ctypes.cast(desc.aligned, ctypes.c_void_p).value or 0


def assert_same_view(result: np.ndarray, original: np.ndarray):
    """Same dtype, shape, byte strides, first-element address and bytes: the same view."""
    assert result.dtype == original.dtype
    assert result.shape == original.shape
    assert result.strides == original.strides
    assert address_of(result) == address_of(original)
    assert result.tobytes() == original.tobytes()
    if original.size:
        assert np.shares_memory(result, original)


def assert_descriptor_matches(desc, array: np.ndarray):
    """The documented NumPy -> memref choice: both pointers at the first element, offset 0."""
    assert desc.allocated == aligned_address(desc) == address_of(array)
    assert desc.offset == 0
    if array.ndim:
        assert list(desc.shape) == list(array.shape)
        assert [s * array.itemsize for s in desc.strides] == list(array.strides)
