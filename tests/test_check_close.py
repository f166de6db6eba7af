"""check_close: the success line, the failure message, the tolerance table, NaN and infinities."""

from __future__ import annotations

import re

import numpy as np
import pytest

from memref_runtime.testing import check_close
from memref_runtime.testing.numerics import TOLERANCES, Tolerance, compare, default_tolerance

ml_dtypes = pytest.importorskip("ml_dtypes")


def failure(*args, **kwargs) -> str:
    with pytest.raises(AssertionError) as info:
        check_close(*args, **kwargs)
    return str(info.value)


# --- passing ------------------------------------------------------------------------------


def test_success_prints_one_line_of_label_dtype_and_shape(capsys):
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    check_close("add", a, a.copy())
    check_close("add", a * (1 + 1e-7), a)  # other values, the same line
    check_close("total", 2.5, np.float64(2.5))
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == ("add: ok, float32, shape (3, 4)\n" * 2) + "total: ok, float64, shape ()\n"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_within_the_default_tolerance_passes_and_beyond_fails(dtype):
    rtol, atol = default_tolerance(dtype)
    expected = np.array([1.0, -250.0, 1e-3], dtype)
    inside = expected + (0.5 * (atol + rtol * np.abs(expected))).astype(expected.dtype)
    outside = expected + (3 * (atol + rtol * np.abs(expected))).astype(expected.dtype)
    assert compare("x", inside, expected) is None
    assert compare("x", outside, expected) is not None


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3", "float8_e3m4"])
def test_small_floats_one_unit_in_the_last_place_passes(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    expected = np.array([1.0, 2.0, 4.0], dtype)
    next_up = np.array([1.0 + float(ml_dtypes.finfo(dtype).eps), 2.0, 4.0]).astype(dtype)
    assert next_up[0] != expected[0]
    check_close(name, next_up, expected)
    assert "1 of 3 elements differ" in failure(name, np.array([1.5, 2.0, 4.0]).astype(dtype), expected)


def test_nan_matches_nan_and_inf_the_same_inf():
    values = np.array([np.nan, np.inf, -np.inf, 1.0])
    check_close("non-finite", values, values.copy())
    c = np.array([complex(np.nan, 1), complex(np.inf, 0), 1 + 1j], np.complex128)
    check_close("complex non-finite", c, c.copy())


def test_integers_and_bool_are_exact_unless_told():
    check_close("ints", np.arange(5, dtype=np.int8), np.arange(5, dtype=np.int8))
    check_close("bools", np.array([True, False]), np.array([True, False]))
    assert "exact" in failure("ints", np.int64([2**60 + 1]), np.int64([2**60]))
    check_close("ints within atol", np.int32([10, 21]), np.int32([10, 20]), atol=1)


def test_explicit_tolerance_wins():
    check_close("loose", np.float32([1.0]), np.float32([1.05]), rtol=0.1)
    text = failure("tight", np.float64([1.0]), np.float64([1.0 + 1e-12]), rtol=0, atol=0)
    assert "(float64, shape (1,); exact)" in text


# --- failing ------------------------------------------------------------------------------


def test_failure_names_label_count_first_index_errors_and_tolerance():
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    actual = expected.copy()
    actual[1, 2] = 7.5  # expected 6: absolute error 1.5, relative 0.25
    actual[2, 3] = 11.1  # expected 11: absolute error 0.1
    text = failure("matmul row 1", actual, expected)
    assert text.splitlines()[0] == (
        "matmul row 1: 2 of 12 elements differ (float32, shape (3, 4); rtol 1.3e-06, atol 1e-05 (the float32 default))"
    )
    assert "first mismatch at (1, 2): actual 7.5, expected 6.0" in text
    assert "largest absolute error 1.5 at (1, 2); largest relative error 0.25 at (1, 2)" in text
    assert "mismatches: (1, 2): 7.5 vs 6.0; (2, 3): 11.1 vs 11.0" in text


def test_failure_lists_at_most_five_mismatches():
    text = failure("many", np.ones(10), np.zeros(10))
    assert "10 of 10 elements differ" in text
    assert "mismatches (first 5 of 10): (0,): 1.0 vs 0.0;" in text and "(5,)" not in text


@pytest.mark.parametrize(
    "actual, expected, message",
    [
        ([np.nan, 1.0], [1.0, 1.0], "first mismatch at (0,): actual nan, expected 1.0"),
        ([1.0, 1.0], [np.nan, 1.0], "first mismatch at (0,): actual 1.0, expected nan"),
        ([np.inf], [-np.inf], "first mismatch at (0,): actual inf, expected -inf"),
        ([np.inf], [1e308], "first mismatch at (0,): actual inf, expected 1e+308"),
    ],
)
def test_non_finite_mismatches(actual, expected, message):
    text = failure("x", np.array(actual), np.array(expected))
    assert message in text and "NaN or an infinity on one side only: 1 of the mismatches" in text


def test_shape_and_dtype_are_checked():
    assert failure("s", np.zeros((2, 3)), np.zeros((3, 2))) == "s: shape differs: actual (2, 3), expected (3, 2)"
    assert failure("s", np.zeros(3), np.zeros(3)[None]) == "s: shape differs: actual (3,), expected (1, 3)"
    assert failure("d", np.zeros(3, np.float32), np.zeros(3)) == "d: dtype differs: actual float32, expected float64"
    assert (
        failure("d", np.zeros(3, np.int32), np.zeros(3, np.uint32)) == "d: dtype differs: actual int32, expected uint32"
    )


def test_python_numbers_take_the_dtype_of_the_other_side(capsys):
    check_close("jit scalar", 0.1, np.float32(0.1))  # an f32 result comes back as a Python float
    assert capsys.readouterr().err == "jit scalar: ok, float32, shape ()\n"
    assert "dtype differs" in failure("both python", 1, 1.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rtol and atol must be >= 0"):
        check_close("x", np.zeros(1), np.zeros(1), atol=-1)
    with pytest.raises(TypeError, match="masked array"):
        check_close("x", np.ma.masked_array([1.0], mask=[True]), np.zeros(1))
    with pytest.raises(TypeError, match="compares numbers"):
        check_close("x", np.array(["a"]), np.array(["a"]))


def test_the_tolerance_table():
    assert default_tolerance(np.float32) == Tolerance(1.3e-6, 1e-5)
    assert default_tolerance(np.int16) == Tolerance(0.0, 0.0) == default_tolerance(np.bool_)
    assert default_tolerance(ml_dtypes.float8_e4m3fn) == Tolerance(0.125, 2.0**-9)
    assert default_tolerance(ml_dtypes.float8_e5m2) == Tolerance(0.25, 2.0**-16)
    assert set(TOLERANCES) >= {"bfloat16", "float16", "float32", "float64", "complex64", "complex128"}


def test_docs_table_matches_the_code():
    """docs/numerics.md lists every default tolerance check_close uses."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "numerics.md").read_text()
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", doc, re.M))
    names = [
        "float8_e5m2",
        "float8_e4m3",
        "float8_e4m3fn",
        "float8_e3m4",
        "bfloat16",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    ]
    for name in names:
        dtype = np.dtype(getattr(ml_dtypes, name)) if name.startswith(("float8", "bfloat")) else np.dtype(name)
        rtol, atol = default_tolerance(dtype)
        assert rows[name].strip() == f"{rtol:g}, {atol:g}", name
