# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, perf-tests
"""A pipeline-style speed claim: an axpy written with vector<8xf32> ops (@axpy_vector of
mlir_inputs/bench_kernels.mlir) is never slower than the scalar loop (@axpy). At -O0 LLVM
vectorizes nothing, so the vector kernel wins outright (measured: 3.7x to 5.5x; claimed: 2x). At
-O3 LLVM's loop vectorizer makes the scalar loop about as fast (measured: 1.05x to 1.6x with the
22.1.8 wheels, 0.93x with torch-mlir's newer LLVM, whose interval on a loaded CI machine reached
down to 0.73x), so the claim there is "not much slower": at least 0.5x, a margin no machine's
noise has reached in medians of interleaved rounds. Levels and runtime verification (off) are pinned, as `lit -D` changes them."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_faster, mlir_inputs, run


def claim(level, at_least):
    jit = JitModule(f"{mlir_inputs()}/bench_kernels.mlir", opt_level=level, runtime_verification=False)
    x = np.random.default_rng(0).random(4096, dtype=np.float32)
    y = np.zeros_like(x)
    a = np.float32(0.5)
    options = dict(repeats=5, min_time=0.01, warmup=0.005)
    check_faster(
        f"vector axpy vs scalar at -O{level}, at least {at_least}x",
        lambda: jit.axpy_vector.benchmark(a, x, y, **options),
        lambda: jit.axpy.benchmark(a, x, y, **options),
        at_least=at_least,
    )


# CHECK-LABEL: TEST: testVectorAxpyIsNotSlower
def testVectorAxpyIsNotSlower():
    # CHECK-NEXT: vector axpy vs scalar at -O0, at least 2x: faster, ok
    claim(0, 2)
    # CHECK-NEXT: vector axpy vs scalar at -O3, at least 0.5x: faster, ok
    claim(3, 0.5)


run(testVectorAxpyIsNotSlower)
