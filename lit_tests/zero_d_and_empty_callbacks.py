# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""0-d and zero-size memrefs, ranked and unranked, reach Python callbacks."""

import ctypes

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, parse_input, run, unranked_arg

CALLBACKS_MODULE = r"""
func.func @pass_0d(%arg0: memref<f32>) attributes { llvm.emit_c_interface } {
  call @callback_0d(%arg0) : (memref<f32>) -> ()
  return
}
func.func @alloca_0d() attributes { llvm.emit_c_interface } {
  %m = memref.alloca() : memref<f32>
  %value = arith.constant 42.5 : f32
  memref.store %value, %m[] : memref<f32>
  call @callback_0d(%m) : (memref<f32>) -> ()
  return
}
func.func @pass_empty(%arg0: memref<?x?xf32>) attributes { llvm.emit_c_interface } {
  call @callback_empty(%arg0) : (memref<?x?xf32>) -> ()
  return
}
func.func private @callback_0d(memref<f32>) attributes { llvm.emit_c_interface }
func.func private @callback_empty(memref<?x?xf32>) attributes { llvm.emit_c_interface }
"""


# CHECK-LABEL: TEST: testRankedZeroDAndEmptyCallbacks
def testRankedZeroDAndEmptyCallbacks():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_zero_d_memref_descriptor(ctypes.c_float)))
    def callback_0d(descriptor):
        view = ranked_memref_to_numpy(descriptor)
        log("0-d callback got shape", view.shape, "value", view)

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(2, ctypes.c_float)))
    def callback_empty(descriptor):
        view = ranked_memref_to_numpy(descriptor)
        log("2-d callback got shape", view.shape, "size", view.size, "values", view.tolist())

    with Context():
        engine = ExecutionEngine(lower(Module.parse(CALLBACKS_MODULE)))
        engine.register_runtime("callback_0d", callback_0d)
        engine.register_runtime("callback_empty", callback_empty)

        # CHECK-NEXT: 0-d callback got shape () value -2.75{{$}}
        engine.invoke("pass_0d", memref_arg(np.array(-2.75, np.float32)))
        # A 0-d memref the JIT code allocated on its stack.
        # CHECK-NEXT: 0-d callback got shape () value 42.5{{$}}
        engine.invoke("alloca_0d")
        # CHECK-NEXT: 2-d callback got shape (0, 3) size 0 values []
        engine.invoke("pass_empty", memref_arg(np.zeros((0, 3), np.float32)))
        # CHECK-NEXT{LITERAL}: 2-d callback got shape (4, 0) size 0 values [[], [], [], []]
        engine.invoke("pass_empty", memref_arg(np.zeros((4, 0), np.float32)))


run(testRankedZeroDAndEmptyCallbacks)


# CHECK-LABEL: TEST: testUnrankedZeroDAndEmptyCallbacks
def testUnrankedZeroDAndEmptyCallbacks():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def callback(descriptor):
        view = unranked_memref_to_numpy(descriptor, np.float32)
        log("callback got rank", descriptor[0].rank, "shape", view.shape, "values", view.tolist())

    with Context():
        engine = ExecutionEngine(lower(parse_input("callback_unranked.mlir")))
        engine.register_runtime("callback_unranked", callback)

        # CHECK-NEXT: callback got rank 0 shape () values 7.0{{$}}
        engine.invoke("pass_unranked", unranked_arg(np.array(7, np.float32)))
        # CHECK-NEXT: callback got rank 1 shape (0,) values []
        engine.invoke("pass_unranked", unranked_arg(np.zeros(0, np.float32)))
        # CHECK-NEXT{LITERAL}: callback got rank 3 shape (2, 0, 5) values [[], []]
        engine.invoke("pass_unranked", unranked_arg(np.zeros((2, 0, 5), np.float32)))


run(testUnrankedZeroDAndEmptyCallbacks)
