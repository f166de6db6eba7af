# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""Typed calls through JitModule: memref and scalar arguments, a memref result, several results."""

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import log, run

KERNELS = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
func.func @iota(%n: index, %scale: f64) -> memref<?xf64> {
  %m = memref.alloc(%n) : memref<?xf64>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f64
    %v = arith.mulf %f, %scale : f64
    memref.store %v, %m[%i] : memref<?xf64>
  }
  return %m : memref<?xf64>
}
func.func @divmod(%a: i32, %b: i32) -> (i32, i32, f64) {
  %q = arith.divsi %a, %b : i32
  %r = arith.remsi %a, %b : i32
  %fa = arith.sitofp %a : i32 to f64
  %fb = arith.sitofp %b : i32 to f64
  %d = arith.divf %fa, %fb : f64
  return %q, %r, %d : i32, i32, f64
}
func.func @row(%a: memref<?x?xi64>, %i: index) -> memref<?xi64, strided<[1], offset: ?>> {
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : memref<?x?xi64>
  %r = memref.subview %a[%i, 0][1, %n][1, 1] : memref<?x?xi64> to memref<?xi64, strided<[1], offset: ?>>
  return %r : memref<?xi64, strided<[1], offset: ?>>
}
"""


# CHECK-LABEL: TEST: testMemrefArguments
def testMemrefArguments():
    jit = JitModule(KERNELS)
    a = np.arange(4, dtype=np.float32)
    out = np.zeros(4, np.float32)
    jit.add(a, a * 10, out)
    # CHECK-NEXT: add -> [ 0. 11. 22. 33.]
    log("add ->", out)


# CHECK-LABEL: TEST: testMemrefResult
def testMemrefResult():
    jit = JitModule(KERNELS)
    r = jit.iota(5, 0.5)
    # CHECK-NEXT: iota -> [0.  0.5 1.  1.5 2. ] float64 owned by NativeAllocation
    log("iota ->", r, r.dtype, "owned by", type(r.base.owner).__name__)
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    row = jit.row(a, 1)
    row[0] = -3
    # CHECK-NEXT: row -> [-3  4  5] a view of the input: True; input row now [-3  4  5]
    log(f"row -> {row} a view of the input: {row.base.owner is a}; input row now {a[1]}")


# CHECK-LABEL: TEST: testMultipleResults
def testMultipleResults():
    jit = JitModule(KERNELS)
    # CHECK-NEXT: divmod(17, 5) -> (3, 2, 3.4)
    log("divmod(17, 5) ->", jit.divmod(17, 5))
    # CHECK-NEXT: divmod(-7, 2) -> (-3, -1, -3.5)
    log("divmod(-7, 2) ->", jit.call("divmod", -7, 2))


run(testMemrefArguments)
run(testMemrefResult)
run(testMultipleResults)
