# RUN: %PYTHON %s %opt_level 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""Typed calls of the shared module: NumPy arrays in and out, checked against NumPy. Every
JitModule compiles at the suite's opt level (`lit -D opt_level=N`, %opt_level; default 2)."""

import os
import sys

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_close, log, mlir_inputs, run


def testScaleAStridedView():
    jit = JitModule(os.path.join(mlir_inputs(), "scale.mlir"))
    assert jit.opt_level == int(sys.argv[1]), (jit.opt_level, sys.argv[1])
    log("compiled at the suite's opt level")
    x = np.arange(10, dtype=np.float32)
    view = x[1::3]  # elements 1, 4, 7: offset 1, stride 3
    expected = x.copy()
    expected[1::3] *= 2.5
    jit.scale(view, 2.5)
    check_close("scale", x, expected)
    # 2.5 * [1, 4, 7]
    log(view)


def testIotaOwnsItsMemory():
    jit = JitModule(os.path.join(mlir_inputs(), "scale.mlir"))
    r = jit.iota(5)
    del jit  # the result owns the memory the JIT code allocated
    check_close("iota", r, np.arange(5, dtype=np.float32))


run(testScaleAStridedView)
# CHECK-LABEL: TEST: testScaleAStridedView
# CHECK-NEXT: compiled at the suite's opt level
# CHECK-NEXT: scale: ok, float32, shape (10,)
# CHECK-NEXT: [ 2.5 10.  17.5]
run(testIotaOwnsItsMemory)
# CHECK-LABEL: TEST: testIotaOwnsItsMemory
# CHECK-NEXT: iota: ok, float32, shape (5,)
