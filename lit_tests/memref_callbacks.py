# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""Ranked (2-D) and unranked memrefs reach Python callbacks, including a stride-0 broadcast view."""

import ctypes

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, parse_input, run, unranked_arg


# CHECK-LABEL: TEST: testRankedMemRefCallback
def testRankedMemRefCallback():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(2, ctypes.c_float)))
    def callback(descriptor):
        view = ranked_memref_to_numpy(descriptor)
        log("callback got shape", view.shape, "element strides", list(descriptor[0].strides))
        log(view)

    with Context():
        engine = ExecutionEngine(lower(parse_input("callback_2d.mlir")))
        engine.register_runtime("callback_2d", callback)
        total = np.zeros((), np.float32)

        # CHECK-NEXT: callback got shape (2, 2) element strides [2, 1]
        # CHECK-NEXT{LITERAL}: [[1. 5.]
        # CHECK-NEXT:  [6. 7.]]
        # CHECK-NEXT: sum 19.0{{$}}
        engine.invoke("callback_then_sum", memref_arg(np.array([[1, 5], [6, 7]], np.float32)), memref_arg(total))
        log("sum", total)

        # Each row repeats one input element: the column stride is 0.
        column = np.array([5, 6, 7], np.float32)
        broadcast = np.lib.stride_tricks.as_strided(column, shape=(3, 4), strides=(4, 0))
        # CHECK-NEXT: callback got shape (3, 4) element strides [1, 0]
        # CHECK-NEXT{LITERAL}: [[5. 5. 5. 5.]
        # CHECK-NEXT:  [6. 6. 6. 6.]
        # CHECK-NEXT:  [7. 7. 7. 7.]]
        # CHECK-NEXT: sum 72.0{{$}}
        engine.invoke("callback_then_sum", memref_arg(broadcast), memref_arg(total))
        log("sum", total)

        # A NumPy column slice: the row stride is the base's row length.
        base = np.arange(12, dtype=np.float32).reshape(3, 4)
        # CHECK-NEXT: callback got shape (3, 2) element strides [4, 1]
        # CHECK-NEXT{LITERAL}: [[ 1.  2.]
        # CHECK-NEXT:  [ 5.  6.]
        # CHECK-NEXT:  [ 9. 10.]]
        # CHECK-NEXT: sum 33.0{{$}}
        engine.invoke("callback_then_sum", memref_arg(base[:, 1:3]), memref_arg(total))
        log("sum", total)


run(testRankedMemRefCallback)


# CHECK-LABEL: TEST: testUnrankedMemRefCallback
def testUnrankedMemRefCallback():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def callback(descriptor):
        view = unranked_memref_to_numpy(descriptor, np.float32)
        log("callback got rank", descriptor[0].rank, "shape", view.shape)
        log(view)

    with Context():
        engine = ExecutionEngine(lower(parse_input("callback_unranked.mlir")))
        engine.register_runtime("callback_unranked", callback)

        # CHECK-NEXT: callback got rank 2 shape (2, 2)
        # CHECK-NEXT{LITERAL}: [[1. 2.]
        # CHECK-NEXT:  [3. 4.]]
        engine.invoke("pass_unranked", unranked_arg(np.array([[1, 2], [3, 4]], np.float32)))

        column = np.array([5, 6, 7], np.float32)
        broadcast = np.lib.stride_tricks.as_strided(column, shape=(3, 4), strides=(4, 0))
        # CHECK-NEXT: callback got rank 2 shape (3, 4)
        # CHECK-NEXT{LITERAL}: [[5. 5. 5. 5.]
        # CHECK-NEXT:  [6. 6. 6. 6.]
        # CHECK-NEXT:  [7. 7. 7. 7.]]
        engine.invoke("pass_unranked", unranked_arg(broadcast))

        # CHECK-NEXT: callback got rank 3 shape (2, 1, 3)
        # CHECK-NEXT{LITERAL}: [[[-1.  -2.  -3. ]]
        # CHECK-EMPTY:
        # CHECK-NEXT{LITERAL}:  [[ 0.5  1.5  2.5]]]
        engine.invoke(
            "pass_unranked",
            unranked_arg(np.array([[[-1, -2, -3]], [[0.5, 1.5, 2.5]]], np.float32)),
        )


run(testUnrankedMemRefCallback)
