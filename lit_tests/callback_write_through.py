# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""A callback writes into the view it was given; the MLIR code and the caller see the writes."""

import ctypes

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, parse_input, run


# CHECK-LABEL: TEST: testCallbackWriteThrough
def testCallbackWriteThrough():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(2, ctypes.c_float)))
    def callback(descriptor):
        view = ranked_memref_to_numpy(descriptor)
        log("callback got", view.tolist())
        view *= 10
        view[0, -1] = -1
        log("callback left", view.tolist())

    with Context():
        engine = ExecutionEngine(lower(parse_input("callback_2d.mlir")))
        engine.register_runtime("callback_2d", callback)
        total = np.zeros((), np.float32)

        # @callback_then_sum sums the view after the callback: 10 * (0+1+2+3+4+5) - 20 - 1.
        # CHECK-NEXT{LITERAL}: callback got [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        # CHECK-NEXT{LITERAL}: callback left [[0.0, 10.0, -1.0], [30.0, 40.0, 50.0]]
        # CHECK-NEXT: MLIR sum after the callback: 129.0{{$}}
        # CHECK-NEXT{LITERAL}: array after the call: [[0.0, 10.0, -1.0], [30.0, 40.0, 50.0]]
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        engine.invoke("callback_then_sum", memref_arg(a), memref_arg(total))
        log("MLIR sum after the callback:", total)
        log("array after the call:", a.tolist())

        # A strided view (rows 0 and 2, columns 1..2) of a 3x3 base: the writes land in the
        # view's elements of the base and nowhere else.
        # Sum after: 10 * (1 + 7) - 1 + 10 * 8 = 159.
        # CHECK-NEXT{LITERAL}: callback got [[1.0, 2.0], [7.0, 8.0]]
        # CHECK-NEXT{LITERAL}: callback left [[10.0, -1.0], [70.0, 80.0]]
        # CHECK-NEXT: MLIR sum after the callback: 159.0{{$}}
        # CHECK-NEXT{LITERAL}: base after the call: [[0.0, 10.0, -1.0], [3.0, 4.0, 5.0], [6.0, 70.0, 80.0]]
        base = np.arange(9, dtype=np.float32).reshape(3, 3)
        engine.invoke("callback_then_sum", memref_arg(base[::2, 1:]), memref_arg(total))
        log("MLIR sum after the callback:", total)
        log("base after the call:", base.tolist())


run(testCallbackWriteThrough)
