"""check_close: the numeric oracle of the suite, a JIT result against a NumPy reference.

A test that prints floats breaks when the opt level or vectorization changes the last bits;
`check_close` compares with a tolerance chosen by the dtype and prints one line that depends
only on the label, the shape and the dtype, so CHECK lines stay the same at every opt level.
A mismatch raises AssertionError with what a reader needs: how many elements differ, the first
one with both values, the largest errors and the tolerance used.

Rules: integers and bool compare exactly; floats and complex pass where
|actual - expected| <= atol + rtol * |expected|; NaN matches NaN at the same index (any sign
or payload) and nothing else; an infinity matches only an infinity of the same sign.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

from ..element_types import is_numpy_native
from ..interop import import_array, is_array_like

__all__ = ["check_close", "compare", "default_tolerance", "Tolerance", "TOLERANCES"]


class Tolerance(NamedTuple):
    rtol: float
    atol: float


# Default (rtol, atol) by dtype name: those of torch.testing.assert_close, which a reader may
# know already. The ml_dtypes floats not listed here (the f8 types) get rtol = eps (one unit
# in the last place near 1) and atol = the smallest subnormal (one unit near 0) from finfo.
TOLERANCES: dict[str, Tolerance] = {
    "bfloat16": Tolerance(1.6e-2, 1e-5),
    "float16": Tolerance(1e-3, 1e-5),
    "float32": Tolerance(1.3e-6, 1e-5),
    "float64": Tolerance(1e-7, 1e-7),
    "longdouble": Tolerance(1e-7, 1e-7),
    "complex64": Tolerance(1.3e-6, 1e-5),
    "complex128": Tolerance(1e-7, 1e-7),
    "clongdouble": Tolerance(1e-7, 1e-7),
}
_EXACT = Tolerance(0.0, 0.0)
_SHOWN_MISMATCHES = 5


def default_tolerance(dtype: DTypeLike) -> Tolerance:
    """The (rtol, atol) check_close uses for `dtype` when not told: the table, exact for integers and bool."""
    dtype = np.dtype(dtype)
    if dtype.kind in "biu":
        return _EXACT
    known = TOLERANCES.get(dtype.name)
    if known is not None:
        return known
    if not is_numpy_native(dtype):  # bf16, the f8 types
        import ml_dtypes

        info = ml_dtypes.finfo(dtype)
        return Tolerance(float(info.eps), float(info.smallest_subnormal))
    if dtype.kind == "f":
        return TOLERANCES["float64"]
    if dtype.kind == "c":
        return TOLERANCES["complex128"]
    raise TypeError(f"check_close compares numbers, bool and complex; got dtype {dtype}")


def _as_array(value, what: str) -> np.ndarray | None:
    """`value` as an array (a torch tensor, a JAX array, anything with DLPack or the array
    interface: a zero-copy NumPy view, bf16 included), or None for a Python number, which
    takes the other side's dtype."""
    if isinstance(value, (bool, int, float, complex)):
        return None
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError("check_close: a masked array hides elements; pass a.filled(value) or np.asarray(a)")
    if not isinstance(value, np.ndarray) and is_array_like(value):
        return np.asarray(import_array(value, what)[0])
    return np.asarray(value)


def _operands(label: str, actual, expected) -> tuple[np.ndarray, np.ndarray]:
    """`actual` and `expected` as arrays of one dtype and shape; AssertionError if they differ."""
    a, e = _as_array(actual, f"{label}: actual"), _as_array(expected, f"{label}: expected")
    if a is None:  # a Python number: the other side's dtype, or its own if both are numbers
        a = np.asarray(actual, dtype=None if e is None else e.dtype)
        if e is None:
            e = np.asarray(expected)
    elif e is None:
        e = np.asarray(expected, dtype=a.dtype)
    if a.dtype != e.dtype:
        raise AssertionError(f"{label}: dtype differs: actual {a.dtype.name}, expected {e.dtype.name}")
    if a.shape != e.shape:
        raise AssertionError(f"{label}: shape differs: actual {a.shape}, expected {e.shape}")
    return a, e


def _parts(x: np.ndarray) -> list[np.ndarray]:
    return [x.real, x.imag] if x.dtype.kind == "c" else [x]


def _close(a: np.ndarray, e: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Where `a` and `e` (float64 or complex128) agree, element by element."""
    with np.errstate(invalid="ignore", over="ignore"):
        finite = np.isfinite(a) & np.isfinite(e)
        ok = np.abs(a - e) <= tol.atol + tol.rtol * np.abs(e)
        if finite.all():
            return ok
        # NaN matches NaN, inf the same inf; the other part of a complex is compared as usual.
        part_ok = np.ones(a.shape, bool)
        for ap, ep in zip(_parts(a), _parts(e)):
            both_finite = np.isfinite(ap) & np.isfinite(ep)
            close = np.abs(ap - ep) <= tol.atol + tol.rtol * np.abs(ep)
            part_ok &= np.where(both_finite, close, (np.isnan(ap) & np.isnan(ep)) | (ap == ep))
        return np.where(finite, ok, part_ok)


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _index(flat: int, shape) -> tuple:
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()


def _describe_shape(a: np.ndarray) -> str:
    return f"{a.dtype.name}, shape {a.shape}"


def _report(label: str, a: np.ndarray, e: np.ndarray, wrong: np.ndarray, tol: Tolerance, given: bool) -> str:
    """The AssertionError text: counts, the first mismatches, the largest errors, the tolerance."""
    flat_wrong = np.flatnonzero(wrong)
    how = "given" if given else f"the {a.dtype.name} default"
    tolerance = "exact" if tol == _EXACT else f"rtol {tol.rtol:g}, atol {tol.atol:g} ({how})"
    # str(), not format(): a NumPy scalar prints in its own precision (float32 9.001, not 9.00100040435791).
    lines = [f"{label}: {flat_wrong.size} of {a.size} elements differ ({_describe_shape(a)}; {tolerance})"]
    first = _index(flat_wrong[0], a.shape)
    lines.append(f"  first mismatch at {first}: actual {a[first]!s}, expected {e[first]!s}")
    if a.dtype.kind in "biu":
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64)) if a.dtype.kind != "b" else (a != e).astype(float)
        ref = np.abs(e.astype(np.float64))
    else:
        wa, we = _wide(a), _wide(e)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(wa - we)
        ref = np.abs(we)
    finite = np.isfinite(diff)
    nonfinite = int(np.count_nonzero(wrong & ~finite))
    if finite.any():
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(diff == 0, 0.0, diff / ref)
        abs_at = _index(int(np.argmax(np.where(finite, diff, -1.0))), a.shape)
        rel_at = _index(int(np.argmax(np.where(finite, rel, -1.0))), a.shape)
        among = " (among finite values)" if nonfinite else ""
        lines.append(
            f"  largest absolute error{among} {diff[abs_at]:.6g} at {abs_at}; "
            f"largest relative error {rel[rel_at]:.6g} at {rel_at}"
        )
    if nonfinite:
        lines.append(f"  NaN or an infinity on one side only: {nonfinite} of the mismatches")
    if flat_wrong.size > 1:
        shown = [_index(i, a.shape) for i in flat_wrong[:_SHOWN_MISMATCHES]]
        more = f" (first {_SHOWN_MISMATCHES} of {flat_wrong.size})" if flat_wrong.size > _SHOWN_MISMATCHES else ""
        lines.append(f"  mismatches{more}: " + "; ".join(f"{i}: {a[i]!s} vs {e[i]!s}" for i in shown))
    return "\n".join(lines)


def mismatches(actual: np.ndarray, expected: np.ndarray, tol: Tolerance) -> np.ndarray:
    """Where arrays of one dtype and shape differ beyond `tol`, as a bool array."""
    if actual.dtype.kind in "biu":
        if tol == _EXACT:
            return actual != expected
        return ~_close(actual.astype(np.float64), expected.astype(np.float64), tol)
    return ~_close(_wide(actual), _wide(expected), tol)


def _check(label: str, actual, expected, rtol, atol) -> tuple[str | None, np.ndarray | None]:
    """(the failure text or None, `actual` as compared)."""
    try:
        a, e = _operands(label, actual, expected)
    except AssertionError as error:
        return str(error), None
    default = default_tolerance(a.dtype)
    tol = Tolerance(default.rtol if rtol is None else float(rtol), default.atol if atol is None else float(atol))
    if tol.rtol < 0 or tol.atol < 0:
        raise ValueError(f"check_close: rtol and atol must be >= 0, got rtol={tol.rtol}, atol={tol.atol}")
    wrong = mismatches(a, e, tol)
    return (_report(label, a, e, wrong, tol, rtol is not None or atol is not None) if wrong.any() else None), a


def compare(
    label: str, actual: object, expected: object, *, rtol: float | None = None, atol: float | None = None
) -> str | None:
    """What check_close would raise for these values (the AssertionError's text), or None if they agree."""
    return _check(label, actual, expected, rtol, atol)[0]


def check_close(
    label: str, actual: object, expected: object, *, rtol: float | None = None, atol: float | None = None
) -> None:
    """Checks `actual` against `expected` (same shape and dtype; a Python number takes the other
    side's dtype) within the dtype's default tolerance or the `rtol`/`atol` given; prints
    `<label>: ok, <dtype>, shape <shape>` to stderr, or raises AssertionError saying what differs."""
    failure, a = _check(label, actual, expected, rtol, atol)
    if failure is not None:
        raise AssertionError(failure)
    assert a is not None  # _check gives the array whenever there is no failure
    print(f"{label}: ok, {a.dtype.name}, shape {a.shape}", file=sys.stderr, flush=True)
