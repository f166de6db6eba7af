# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""Element-wise add of a dynamic memref<?x?xf32> and a static memref<2x2xf32>, and of larger dynamic ones."""

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run

ADD_MODULE = r"""
func.func @add_dynamic_static(%a: memref<?x?xf32>, %b: memref<2x2xf32>, %out: memref<2x2xf32>)
    attributes { llvm.emit_c_interface } {
  linalg.add ins(%a, %b : memref<?x?xf32>, memref<2x2xf32>) outs(%out : memref<2x2xf32>)
  return
}
func.func @add_dynamic(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %out: memref<?x?xf32>)
    attributes { llvm.emit_c_interface } {
  linalg.add ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%out : memref<?x?xf32>)
  return
}
"""


def jit_add(engine, function, a, b, show=True):
    """Calls `function` on `a` and `b`; logs whether the result matches NumPy's a + b, and it."""
    out = np.full(a.shape, -1, np.float32)
    engine.invoke(function, memref_arg(a), memref_arg(b), memref_arg(out))
    log(function, out.shape, "allclose:", np.allclose(out, a + b))
    if show:
        log(out)


# CHECK-LABEL: TEST: testDynamicMemrefAdd
def testDynamicMemrefAdd():
    with Context():
        engine = ExecutionEngine(lower(Module.parse(ADD_MODULE)))

        # CHECK-NEXT: add_dynamic_static (2, 2) allclose: True
        # CHECK-NEXT{LITERAL}: [[10. 21.]
        # CHECK-NEXT:  [32. 43.]]
        a = np.arange(4, dtype=np.float32).reshape(2, 2)
        b = np.array([[10, 20], [30, 40]], np.float32)
        jit_add(engine, "add_dynamic_static", a, b)

        # CHECK-NEXT: add_dynamic (3, 5) allclose: True
        # CHECK-NEXT{LITERAL}: [[100.  100.5 101.  101.5 102. ]
        # CHECK-NEXT:  [ 97.5  98.   98.5  99.   99.5]
        # CHECK-NEXT:  [105.  105.5 106.  106.5 107. ]]
        a = np.arange(15, dtype=np.float32).reshape(3, 5) * 0.5
        b = np.array([[100], [95], [100]], np.float32) + np.zeros((3, 5), np.float32)
        jit_add(engine, "add_dynamic", a, b)

        # Random data, only compared with NumPy.
        # CHECK-NEXT: add_dynamic (64, 33) allclose: True
        # CHECK-NOT: {{.}}
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 33)).astype(np.float32)
        b = rng.standard_normal((64, 33)).astype(np.float32)
        jit_add(engine, "add_dynamic", a, b, show=False)


run(testDynamicMemrefAdd)
