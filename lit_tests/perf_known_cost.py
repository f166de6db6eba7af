# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, perf-tests
"""The benchmark loop measures what a kernel costs: @chain runs %n dependent multiply-adds, so 4N
steps take 4 times as long as N (measured: 4.00x, interval about 3.97x to 4.03x); the claim is 3x.
A false claim fails: the same kernel twice is not 2x faster than itself, and check_faster's
AssertionError says it was measured false, with the ratio (about 1x, not printed: it varies by
machine). Both are judged on the thread's CPU time, which a busy machine does not stretch."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_faster, log, mlir_inputs, run

N = 2000


# CHECK-LABEL: TEST: testFourTimesTheWork
def testFourTimesTheWork():
    jit = JitModule(f"{mlir_inputs()}/bench_kernels.mlir", opt_level=2, runtime_verification=False)
    state = np.zeros(1)
    options = dict(repeats=5, min_time=0.01, warmup=0.005)
    # CHECK-NEXT: 4N steps vs N, at least 3x: faster, ok
    check_faster(
        "4N steps vs N, at least 3x",
        lambda: jit.chain.benchmark(N, state, **options),
        lambda: jit.chain.benchmark(4 * N, state, **options),
        at_least=3,
    )
    try:
        check_faster(
            "N steps vs N, at least 2x",
            lambda: jit.chain.benchmark(N, state, **options),
            lambda: jit.chain.benchmark(N, state, **options),
            at_least=2,
        )
    except AssertionError as e:
        # CHECK-NEXT: AssertionError: N steps vs N, at least 2x: expected fast to be at least 2x faster than slow; measured false
        log(f"{type(e).__name__}:", str(e).split(" (95%")[0].rsplit(": ", 1)[0])
    else:
        log("the false claim passed")


run(testFourTimesTheWork)
