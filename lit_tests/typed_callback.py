# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A typed callback: the ctypes signature comes from the declaration; views write through."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, run

MODULE = r"""
func.func private @visit(memref<?x?xf32>, index) -> f32 attributes {llvm.emit_c_interface}

func.func @walk(%a: memref<?x?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %r = func.call @visit(%a, %i) : (memref<?x?xf32>, index) -> f32
    %s = arith.addf %acc, %r : f32
    scf.yield %s : f32
  }
  return %total : f32
}
"""


# CHECK-LABEL: TEST: testTypedCallback
def testTypedCallback():
    jit = JitModule(MODULE)

    def visit(view, i):
        log(f"visit row {i} of {view.shape} {view.dtype}: {view[i]}")
        view[i] *= -1  # reaches the caller's array
        return float(view[i].sum())

    jit.register_callback("visit", visit)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    # CHECK-NEXT: visit row 0 of (2, 3) float32: [0. 1. 2.]
    # CHECK-NEXT: visit row 1 of (2, 3) float32: [3. 4. 5.]
    total = jit.walk(a)
    # CHECK-NEXT: total -15.0{{$}}
    log("total", total)
    # CHECK-NEXT: caller sees [-0. -1. -2.] [-3. -4. -5.]
    log("caller sees", a[0], a[1])


# CHECK-LABEL: TEST: testCallbackException
def testCallbackException():
    jit = JitModule(MODULE)

    def visit(view, i):
        raise KeyError(f"row {i}")

    jit.register_callback("visit", visit)
    try:
        jit.walk(np.ones((2, 2), np.float32))
    except KeyError as e:
        # CHECK-NEXT: KeyError 'row 0' raised in callback @visit (@visit(memref<?x?xf32>, index) -> f32)
        log("KeyError", e, *e.__notes__)


run(testTypedCallback)
run(testCallbackException)
