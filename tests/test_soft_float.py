"""The soft-float builtins every engine gets: the bf16 ones compiled by the runtime round as
compiler-rt does, through the calling convention JIT code calls them with."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")
ml_dtypes = pytest.importorskip("ml_dtypes")

from memref_runtime import JitModule  # noqa: E402
from memref_runtime.jit import soft_float  # noqa: E402

pytestmark = pytest.mark.jit

# Calls the builtins by name, as LLVM's own lowering of an fptrunc would on a host without bf16
# instructions (the engine resolves them to what install_fallbacks registered).
CALLS = r"""
llvm.func @__truncsfbf2(f32) -> bf16
llvm.func @__truncdfbf2(f64) -> bf16
func.func @convert(%a: memref<?xf32>, %b: memref<?xf64>, %ra: memref<?xi16>, %rb: memref<?xi16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf64>
    %bx = llvm.call @__truncsfbf2(%x) : (f32) -> bf16
    %by = llvm.call @__truncdfbf2(%y) : (f64) -> bf16
    %ix = arith.bitcast %bx : bf16 to i16
    %iy = arith.bitcast %by : bf16 to i16
    memref.store %ix, %ra[%i] : memref<?xi16>
    memref.store %iy, %rb[%i] : memref<?xi16>
  }
  return
}
"""


def special_values() -> tuple[np.ndarray, np.ndarray]:
    """f32 and f64 inputs: every class of value, ties, and f64 values that round wrongly when
    rounded twice (to f32, then to bf16)."""
    rng = np.random.default_rng(7)
    f32 = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ties = (rng.integers(0, 2**16, 2000, dtype=np.uint32) << 16 | 0x8000).view(np.float32)  # exactly halfway
    named = np.array(
        [
            0.0,
            -0.0,
            1.0,
            -1.0,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
            3.4e38,
            -3.4e38,
            1e-45,
            -1e-45,
            1e-40,
            np.finfo(np.float32).max,
            np.finfo(np.float32).tiny,
        ],
        np.float32,
    )
    f32 = np.concatenate([f32, ties, named])
    f64 = rng.standard_normal(f32.size) * np.exp2(rng.integers(-140, 140, f32.size))
    # A bf16 midpoint plus less than half an f32 ulp: f32 rounds it onto the midpoint, and a
    # second rounding to even would then go down half the time; the direct rounding goes up.
    mids = (rng.integers(0, 0x7F7F, 4000, dtype=np.uint32) << 16 | 0x8000).view(np.float32).astype(np.float64)
    f64[:4000] = mids * (1 + 2.0**-40)
    f64[4000 : 4000 + named.size] = named
    return f32, f64


def _bf16_value(bits: int) -> Fraction:
    """The value of bf16 `bits`; inf as 2**128, where rounding to nearest overflows to it."""
    magnitude = 2**128 if bits & 0x7FFF == 0x7F80 else Fraction(float(np.uint32(bits << 16).view(np.float32)))
    return -abs(magnitude) if bits & 0x8000 else abs(magnitude)


def nearest_bf16(x: float) -> int:
    """The bits of the bf16 nearest to `x` (ties to even), exactly: ml_dtypes rounds f64 through
    f32 first, which is off by one ulp where the second rounding meets a tie the first made."""
    with np.errstate(over="ignore"):
        approximate = int(np.float64(x).astype(ml_dtypes.bfloat16).view(np.uint16))
    if math.isinf(x):
        return approximate
    candidates = [
        b
        for b in (approximate - 1, approximate, approximate + 1)
        if b >> 15 == approximate >> 15 and (b & 0x7F80 != 0x7F80 or b & 0x7F == 0)
    ]
    exact = Fraction(x)
    return min(candidates, key=lambda b: (abs(_bf16_value(b) - exact), b & 1))


def test_the_compiled_bf16_builtins_round_to_nearest_even_as_compiler_rt_does():
    with np.errstate(all="ignore"):  # NaN, inf and overflow on purpose
        f32, f64 = special_values()
    registered = dict(soft_float.builtins())
    compiled = dict(soft_float.compiled_builtins())
    if any(registered[name].value != compiled[name] for name in soft_float.COMPILED_BUILTINS):
        pytest.skip("this libgcc_s has the bf16 builtins: engines get those, not the compiled ones")
    jit = JitModule(CALLS)
    got_a, got_b = np.zeros(f32.size, np.int16), np.zeros(f64.size, np.int16)
    jit.convert(f32, f64, got_a, got_b)
    with np.errstate(all="ignore"):
        expected_a = f32.astype(ml_dtypes.bfloat16).view(np.uint16)  # one rounding: exact
    expected_b = np.array([nearest_bf16(x) if not math.isnan(x) else 0 for x in f64], np.uint16)
    for got, source, expected in ((got_a, f32, expected_a), (got_b, f64, expected_b)):
        nan = np.isnan(source)
        got_bits, expected_bits = got[~nan].view(np.uint16), expected[~nan]
        wrong = np.flatnonzero(got_bits != expected_bits)
        assert wrong.size == 0, (
            f"{source.dtype} -> bf16: {wrong.size} differ, first {source[~nan][wrong[0]]!r}: "
            f"{got_bits[wrong[0]]:#06x}, expected {expected_bits[wrong[0]]:#06x}"
        )
        # NaN stays NaN, quiet, with its sign.
        bits = got[nan].view(np.uint16)
        assert np.all((bits & 0x7F80) == 0x7F80) and np.all(bits & 0x0040)
        assert np.array_equal(bits >> 15, np.signbit(source[nan]).astype(np.uint16))


def test_a_bf16_engine_gets_a_bf16_truncation_whatever_the_libgcc():
    names = [name for name, _ in soft_float.builtins()]
    assert set(soft_float.COMPILED_BUILTINS) <= set(names)
    assert len(names) == len(set(names))  # libgcc's, where it has them, are not given twice


def test_a_bf16_kernel_links_and_rounds_f64_once():
    """Whether LLVM rounds inline (MLIR 22 here) or calls __truncdfbf2 (torch-mlir's newer LLVM)."""
    jit = JitModule("""
func.func @f(%a: tensor<?xbf16>, %b: tensor<?xf64>) -> (tensor<?xbf16>, tensor<?xbf16>) {
  %s = arith.addf %a, %a : tensor<?xbf16>
  %t = arith.truncf %b : tensor<?xf64> to tensor<?xbf16>
  return %s, %t : tensor<?xbf16>, tensor<?xbf16>
}""")
    with np.errstate(all="ignore"):
        traps = special_values()[1][:2000]  # f64 -> bf16 where rounding through f32 goes wrong
    a = np.linspace(-3, 3, traps.size).astype(ml_dtypes.bfloat16)
    b = traps
    s, t = jit.f(a, b)
    assert np.array_equal(
        np.asarray(s).view(np.uint16), (a.astype(np.float32) * 2).astype(ml_dtypes.bfloat16).view(np.uint16)
    )
    assert np.asarray(t).view(np.uint16).tolist() == [nearest_bf16(x) for x in b]


def test_a_module_without_bf16_does_not_pay_for_compiling_them(monkeypatch):
    def compiled():
        raise AssertionError("the bf16 builtins were compiled for a module without bf16")

    monkeypatch.setattr(soft_float, "compiled_builtins", compiled)
    jit = JitModule("func.func @twice_f64(%a: f64) -> f64 {\n  %r = arith.addf %a, %a : f64\n  return %r : f64\n}")
    assert jit.twice_f64(1.5) == 3.0
