# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""check_close, the numeric oracle: one line per passing check, whatever the last bits of the
values are, and an AssertionError that says what differs when a check fails."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_close, log, run

# out = a * b + c, element-wise (linalg.generic), on dynamic f32 and f64 tensors.
MODULE = r"""
#id = affine_map<(i) -> (i)>
func.func @fma32(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>) -> tensor<?xf32> {
  %p = arith.mulf %a, %b : tensor<?xf32>
  %r = arith.addf %p, %c : tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @sum64(%a: tensor<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = tensor.dim %a, %c0 : tensor<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
    %x = tensor.extract %a[%i] : tensor<?xf64>
    %t = arith.addf %acc, %x : f64
    scf.yield %t : f64
  }
  return %s : f64
}
"""


def show_failure(label, actual, expected, **tolerance):
    """Runs a check that must fail and logs its message."""
    try:
        check_close(label, actual, expected, **tolerance)
    except AssertionError as e:
        log("AssertionError:", e)
    else:
        log(label, "passed, which it must not")


# CHECK-LABEL: TEST: testPassingChecksPrintOneStableLine
# CHECK-NEXT: fma32 on 1000 random values: ok, float32, shape (1000,)
# CHECK-NEXT: sum64 of 257 random values: ok, float64, shape ()
# CHECK-NEXT: NaN and infinities where NumPy has them: ok, float32, shape (3,)
# CHECK-NEXT: integers, exactly: ok, int32, shape (2, 3)
def testPassingChecksPrintOneStableLine():
    jit = JitModule(MODULE)
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    # Within the f32 tolerance; the line shows no values, so it stays the same at every opt
    # level even where vectorized code or another order of summation changes the last bits.
    check_close("fma32 on 1000 random values", jit.fma32(a, b, c), a * b + c)
    x = rng.standard_normal(257)
    check_close("sum64 of 257 random values", jit.sum64(x), np.float64(x.sum()))
    check_close(
        "NaN and infinities where NumPy has them",
        jit.fma32(np.array([np.inf, 1, np.nan], np.float32), np.ones(3, np.float32), np.zeros(3, np.float32)),
        np.array([np.inf, 1, np.nan], np.float32),
    )
    check_close(
        "integers, exactly", np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(6, dtype=np.int32).reshape(2, 3)
    )


run(testPassingChecksPrintOneStableLine)


# CHECK-LABEL: TEST: testFailingChecksSayWhatDiffers
# CHECK-NEXT: AssertionError: fma32: 2 of 6 elements differ (float32, shape (6,); rtol 1.3e-06, atol 1e-05 (the float32 default))
# CHECK-NEXT:   first mismatch at (2,): actual 5.0, expected 5.5{{$}}
# CHECK-NEXT:   largest absolute error 0.5 at (2,); largest relative error 0.0909091 at (2,)
# CHECK-NEXT:   mismatches: (2,): 5.0 vs 5.5; (4,): 9.0 vs 9.001{{$}}
# CHECK-NEXT: AssertionError: loose: 1 of 2 elements differ (float32, shape (2,); rtol 0.1, atol 0 (given))
# CHECK-NEXT:   first mismatch at (1,): actual 2.0, expected 2.5{{$}}
# CHECK-NEXT:   largest absolute error 0.5 at (1,); largest relative error 0.2 at (1,)
# CHECK-NEXT: AssertionError: non-finite: 2 of 3 elements differ (float64, shape (3,); rtol 1e-07, atol 1e-07 (the float64 default))
# CHECK-NEXT:   first mismatch at (0,): actual nan, expected 1.0{{$}}
# CHECK-NEXT:   largest absolute error (among finite values) 0 at (2,); largest relative error 0 at (2,)
# CHECK-NEXT:   NaN or an infinity on one side only: 2 of the mismatches
# CHECK-NEXT:   mismatches: (0,): nan vs 1.0; (1,): inf vs -inf
# CHECK-NEXT: AssertionError: int32: 1 of 2 elements differ (int32, shape (2,); exact)
# CHECK-NEXT:   first mismatch at (1,): actual 7, expected 8{{$}}
# CHECK-NEXT:   largest absolute error 1 at (1,); largest relative error 0.125 at (1,)
# CHECK-NEXT: AssertionError: shape: shape differs: actual (2, 3), expected (3, 2)
# CHECK-NEXT: AssertionError: dtype: dtype differs: actual float32, expected float64{{$}}
def testFailingChecksSayWhatDiffers():
    jit = JitModule(MODULE)
    a = np.arange(6, dtype=np.float32)
    # The expected values of elements 2 and 4 are off by 0.5 and 0.001 (a relative error of
    # 1e-4, beyond float32's 1.3e-6): two of six differ, the first at index 2.
    expected = a * 2 + 1
    expected[2] += 0.5
    expected[4] += 0.001
    show_failure("fma32", jit.fma32(a, np.full(6, 2, np.float32), np.ones(6, np.float32)), expected)
    # An explicit tolerance is reported as given.
    show_failure("loose", np.float32([1.0, 2.0]), np.float32([1.0, 2.5]), rtol=0.1, atol=0.0)
    # NaN where a number is expected, an infinity of the wrong sign.
    show_failure("non-finite", np.array([np.nan, np.inf, 3.0]), np.array([1.0, -np.inf, 3.0]))
    # Integers are exact: 7 against 8.
    show_failure("int32", np.int32([1, 7]), np.int32([1, 8]))
    show_failure("shape", np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32))
    show_failure("dtype", np.zeros(3, np.float32), np.zeros(3, np.float64))


run(testFailingChecksSayWhatDiffers)
