# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""JIT code writes through non-contiguous NumPy views (slice, transpose, reversal) into their base."""

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run

# view[i, j] = 10 * i + j + 1: each written element says which view index it came from.
FILL_MODULE = r"""
func.func @fill(%view: memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %rows = memref.dim %view, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %view, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %tens = arith.muli %i, %c10 : index
      %ij = arith.addi %tens, %j : index
      %value_index = arith.addi %ij, %c1 : index
      %value_int = arith.index_cast %value_index : index to i64
      %value = arith.sitofp %value_int : i64 to f32
      memref.store %value, %view[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
    }
  }
  return
}
"""


def fill_view(engine, name, base, view):
    """Runs @fill on `view` and logs the base array it was cut from."""
    engine.invoke("fill", memref_arg(view))
    log(name, "view", view.shape, "element strides", [s // view.itemsize for s in view.strides])
    log(base)


# CHECK-LABEL: TEST: testWriteThroughStridedViews
def testWriteThroughStridedViews():
    with Context():
        engine = ExecutionEngine(lower(Module.parse(FILL_MODULE)))

        # Rows 1.. and every other column: view[i, j] is base[1 + i, 2 * j].
        # CHECK-NEXT: a[1:, ::2] view (2, 2) element strides [4, 2]
        # CHECK-NEXT{LITERAL}: [[ 0.  0.  0.  0.]
        # CHECK-NEXT:  [ 1.  0.  2.  0.]
        # CHECK-NEXT:  [11.  0. 12.  0.]]
        a = np.zeros((3, 4), np.float32)
        fill_view(engine, "a[1:, ::2]", a, a[1:, ::2])

        # view[i, j] is base[j, i].
        # CHECK-NEXT: a.T view (3, 2) element strides [1, 3]
        # CHECK-NEXT{LITERAL}: [[ 1. 11. 21.]
        # CHECK-NEXT:  [ 2. 12. 22.]]
        a = np.zeros((2, 3), np.float32)
        fill_view(engine, "a.T", a, a.T)

        # Negative row stride: view[i, j] is base[2 - i, j].
        # CHECK-NEXT: a[::-1] view (3, 2) element strides [-2, 1]
        # CHECK-NEXT{LITERAL}: [[21. 22.]
        # CHECK-NEXT:  [11. 12.]
        # CHECK-NEXT:  [ 1.  2.]]
        a = np.zeros((3, 2), np.float32)
        fill_view(engine, "a[::-1]", a, a[::-1])

        # Both at once, plus an offset: view[i, j] is base[2 - i, 3 - 2 * j].
        # CHECK-NEXT: a[:0:-1, ::-2] view (2, 2) element strides [-4, -2]
        # CHECK-NEXT{LITERAL}: [[ 0.  0.  0.  0.]
        # CHECK-NEXT:  [ 0. 12.  0. 11.]
        # CHECK-NEXT:  [ 0.  2.  0.  1.]]
        a = np.zeros((3, 4), np.float32)
        fill_view(engine, "a[:0:-1, ::-2]", a, a[:0:-1, ::-2])


run(testWriteThroughStridedViews)
