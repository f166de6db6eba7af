# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, perf-tests
"""A pipeline-style speed claim: an axpy written with vector<8xf32> ops (@axpy_vector of
mlir_inputs/bench_kernels.mlir) is never slower than the scalar loop (@axpy). At -O0 LLVM
vectorizes nothing, so the vector kernel wins outright (measured: 3.7x to 5.5x; claimed: 2x). At
-O3 LLVM's loop vectorizer makes the scalar loop about as fast (0.79x to 0.99x here with the
22.1.8 wheels, 0.93x with torch-mlir's newer LLVM), so the claim there is "not much slower": at
least 0.5x. Levels and runtime verification (off) are pinned, as `lit -D` changes them. So is
where x and y lie: at a page boundary and 2 KiB past one. Left to the allocator, the ratio at
-O3 moved between 0.67x and 1.04x with the two addresses (cache-line splits, loads that alias
earlier stores 4 KiB apart); a run under load once measured 0.39x (interval 0.29x to 0.41x, in
0.3 s), which check_faster now takes for a verdict only if a second batch of rounds agrees."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_faster, mlir_inputs, run


def placed(n):
    """Two float32 arrays of n elements (n * 4 a multiple of 4 KiB), zeros, in one buffer: x at
    a page boundary, y 2 KiB after x's end (so 2 KiB past a page boundary too)."""
    raw = np.zeros(2 * n * 4 + 3 * 4096, np.uint8)
    x_at = -raw.ctypes.data % 4096
    y_at = x_at + n * 4 + 2048
    return raw[x_at : x_at + n * 4].view(np.float32), raw[y_at : y_at + n * 4].view(np.float32)


def claim(level, at_least):
    jit = JitModule(f"{mlir_inputs()}/bench_kernels.mlir", opt_level=level, runtime_verification=False)
    x, y = placed(4096)
    x[:] = np.random.default_rng(0).random(4096, dtype=np.float32)
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
