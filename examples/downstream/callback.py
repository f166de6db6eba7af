# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A Python callback receives a subview of the caller's array, with its offset honoured, and
writes through it."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, run

MODULE = r"""
func.func private @visit(memref<2x2xf64, strided<[4, 1], offset: ?>>)

func.func @corner(%m: memref<4x4xf64>) {
  %sub = memref.subview %m[1, 2] [2, 2] [1, 1] : memref<4x4xf64> to memref<2x2xf64, strided<[4, 1], offset: 6>>
  %cast = memref.cast %sub : memref<2x2xf64, strided<[4, 1], offset: 6>> to memref<2x2xf64, strided<[4, 1], offset: ?>>
  call @visit(%cast) : (memref<2x2xf64, strided<[4, 1], offset: ?>>) -> ()
  return
}
"""


def testCallbackSeesTheSubview():
    jit = JitModule(MODULE)

    def visit(view):
        # Rows 1-2, columns 2-3 of arange(16).reshape(4, 4): [[6, 7], [10, 11]].
        log("view", view.tolist(), "strides", [s // view.itemsize for s in view.strides])
        view[...] = -view

    jit.register_callback("visit", visit)
    m = np.arange(16, dtype=np.float64).reshape(4, 4)
    jit.corner(m)
    log("after", m[1:3, 2:4].tolist())


run(testCallbackSeesTheSubview)
# CHECK-LABEL: TEST: testCallbackSeesTheSubview
# CHECK-NEXT{LITERAL}: view [[6.0, 7.0], [10.0, 11.0]] strides [4, 1]
# CHECK-NEXT{LITERAL}: after [[-6.0, -7.0], [-10.0, -11.0]]
