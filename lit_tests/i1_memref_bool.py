# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, mlir-i1-memref
"""NumPy bool arrays as i1 memrefs, one byte per element, loaded and stored by JIT code.

MLIR 22's assertion builds abort the whole process when lowering memref.load/store of i1,
hence `mlir-i1-memref` (MLIR >= 23, e.g. torch-mlir's bindings: -D mlir_python=torch_mlir).
"""

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run


# CHECK-LABEL: TEST: testNotAndCountI1
def testNotAndCountI1():
    with Context():
        module = Module.parse(r"""
func.func @not_and_count(%a: memref<?xi1, strided<[?], offset: ?>>, %count: memref<i64>)
    attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %zero = arith.constant 0 : i64
  %n = memref.dim %a, %c0 : memref<?xi1, strided<[?], offset: ?>>
  %total = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (i64) {
    %x = memref.load %a[%i] : memref<?xi1, strided<[?], offset: ?>>
    %y = arith.xori %x, %true : i1
    memref.store %y, %a[%i] : memref<?xi1, strided<[?], offset: ?>>
    %e = arith.extui %x : i1 to i64
    %next = arith.addi %acc, %e : i64
    scf.yield %next : i64
  }
  memref.store %total, %count[] : memref<i64>
  return
}
""")
        engine = ExecutionEngine(lower(module))
        flags = np.array([True, False, True, True, False, False])
        count = np.array(0, np.int64)
        # Every other element, from the end: flags[5], flags[3], flags[1] = False, True, False.
        view = flags[::-2]
        engine.invoke("not_and_count", memref_arg(view), memref_arg(count))
        # CHECK-NEXT: count 1{{$}}
        # CHECK-NEXT: flags [True, True, True, False, False, True]
        # CHECK-NEXT: bytes [1, 1, 1, 0, 0, 1]
        log("count", int(count))
        log("flags", flags.tolist())
        log("bytes", flags.view(np.uint8).tolist())


run(testNotAndCountI1)
