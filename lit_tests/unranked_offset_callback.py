# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A memref view with a non-zero offset, cast to memref<*xf32>, reaches a Python callback."""

import ctypes

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, parse_input, run


# CHECK-LABEL: TEST: testUnrankedOffsetViewCallback
def testUnrankedOffsetViewCallback():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def callback(descriptor):
        log("rank", descriptor[0].rank)
        log(unranked_memref_to_numpy(descriptor, np.float32))

    with Context():
        module = parse_input("offset_view_unranked.mlir")
        engine = ExecutionEngine(lower(module))
        engine.register_runtime("callback", callback)

        # The callback sees elements 3 and 4 of the input, through offset 3.
        # CHECK-NEXT: rank 1{{$}}
        # CHECK-NEXT: [4. 5.]
        engine.invoke("view_tail", memref_arg(np.array([1, 2, 3, 4, 5], np.float32)))
        # CHECK-NEXT: rank 1{{$}}
        # CHECK-NEXT: [ 0.25 -7.  ]
        engine.invoke("view_tail", memref_arg(np.array([1, 2, 3, 0.25, -7], np.float32)))


run(testUnrankedOffsetViewCallback)
