# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A ranked memref with a non-zero offset reaches a Python callback as the right view."""

import ctypes

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run


# CHECK-LABEL: TEST: testRankedOffsetViewCallback
def testRankedOffsetViewCallback():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(1, ctypes.c_float)))
    def callback(descriptor):
        d = descriptor[0]
        log("offset", d.offset, "sizes", list(d.shape), "strides", list(d.strides))
        log(ranked_memref_to_numpy(descriptor))

    with Context():
        module = Module.parse(
            r"""
func.func @view_tail(%arg0: memref<5xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<5xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [3], sizes: [2], strides: [1]
      : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %view
      : memref<2xf32, strided<[1], offset: 3>> to memref<?xf32, strided<[?], offset: ?>>
  call @callback(%cast) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  return
}
func.func private @callback(memref<?xf32, strided<[?], offset: ?>>) attributes { llvm.emit_c_interface }
"""
        )
        engine = ExecutionEngine(lower(module))
        engine.register_runtime("callback", callback)

        # The callback sees elements 3 and 4 of the input, through offset 3.
        # CHECK-NEXT: offset 3 sizes [2] strides [1]
        # CHECK-NEXT: [1. 2.]
        engine.invoke("view_tail", memref_arg(np.array([0, 0, 0, 1, 2], np.float32)))
        # CHECK-NEXT: offset 3 sizes [2] strides [1]
        # CHECK-NEXT: [-3.5 40. ]
        engine.invoke("view_tail", memref_arg(np.array([9, 9, 9, -3.5, 40], np.float32)))


run(testRankedOffsetViewCallback)
