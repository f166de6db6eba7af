# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A memref view with a non-zero offset, cast to memref<*xf32>, reaches a Python callback."""

import ctypes

import numpy as np

from mlir.ir import *
from mlir.execution_engine import *
from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, run, lower, memref_arg


# CHECK-LABEL: TEST: testUnrankedOffsetViewCallback
def testUnrankedOffsetViewCallback():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def callback(descriptor):
        log("rank", descriptor[0].rank)
        log(unranked_memref_to_numpy(descriptor, np.float32))

    with Context():
        module = Module.parse(
            r"""
func.func @view_tail(%arg0: memref<5xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<5xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [3], sizes: [2], strides: [1]
      : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %view : memref<2xf32, strided<[1], offset: 3>> to memref<*xf32>
  call @callback(%cast) : (memref<*xf32>) -> ()
  return
}
func.func private @callback(memref<*xf32>) attributes { llvm.emit_c_interface }
"""
        )
        engine = ExecutionEngine(lower(module))
        engine.register_runtime("callback", callback)

        # The callback sees elements 3 and 4 of the input, through offset 3.
        # CHECK: rank 1
        # CHECK-NEXT: [4. 5.]
        engine.invoke("view_tail", memref_arg(np.array([1, 2, 3, 4, 5], np.float32)))
        # CHECK: rank 1
        # CHECK-NEXT: [ 0.25 -7.  ]
        engine.invoke("view_tail", memref_arg(np.array([1, 2, 3, 0.25, -7], np.float32)))


run(testUnrankedOffsetViewCallback)
