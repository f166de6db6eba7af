# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""The errors a wrong call raises: function, argument index, expected MLIR type, what was given."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, run

MODULE = r"""
func.func @scale(%a: memref<?x4xf32>, %s: f32) {
  return
}
"""


def show(call):
    try:
        call()
    except (TypeError, ValueError) as e:
        log(f"{type(e).__name__}: {e}")


# CHECK-LABEL: TEST: testWrongArguments
def testWrongArguments():
    jit = JitModule(MODULE)
    ok = np.zeros((3, 4), np.float32)
    # CHECK-NEXT: TypeError: scale(): argument 0 expects memref<?x4xf32> (a 2-d float32 array), got a float64 ('<f8') array of shape (3, 4)
    show(lambda: jit.scale(np.zeros((3, 4)), 1.0))
    # CHECK-NEXT: ValueError: scale(): argument 0 expects memref<?x4xf32> (shape (?, 4)), got a float32 ('<f4') array of shape (3, 5)
    show(lambda: jit.scale(np.zeros((3, 5), np.float32), 1.0))
    # CHECK-NEXT: ValueError: scale(): argument 0 expects memref<?x4xf32> (a 2-d float32 array), got a float32 ('<f4') array of shape (12,)
    show(lambda: jit.scale(np.zeros(12, np.float32), 1.0))
    # CHECK-NEXT: ValueError: scale(): argument 0 expects memref<?x4xf32>, whose identity layout assumes a C-contiguous array, got a non-contiguous float32 ('<f4') array of shape (3, 4) and byte strides (32, 4); pass np.ascontiguousarray(a), or declare the parameter with a strided layout (strided<[?, ...], offset: ?>)
    show(lambda: jit.scale(np.zeros((3, 8), np.float32)[:, :4], 1.0))
    ok.flags.writeable = False
    # CHECK-NEXT: ValueError: scale(): argument 0 expects memref<?x4xf32>, got a read-only float32 ('<f4') array of shape (3, 4); the native code may write into it, so pass a writable copy (np.array(a))
    show(lambda: jit.scale(ok, 1.0))
    # CHECK-NEXT: TypeError: scale(): argument 1 expects f32 (a real number), got str 'x'
    show(lambda: jit.scale(np.zeros((3, 4), np.float32), "x"))
    # CHECK-NEXT: TypeError: scale() takes 2 arguments (memref<?x4xf32>, f32), got 1{{$}}
    show(lambda: jit.scale(np.zeros((3, 4), np.float32)))


run(testWrongArguments)
