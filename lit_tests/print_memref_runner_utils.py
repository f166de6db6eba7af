# RUN: %PYTHON %s %mlir_runner_utils %mlir_c_runner_utils 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, runner-utils
"""printMemrefF32 from the runner-utils libraries prints NumPy data passed to JIT code."""

import sys

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import flush_c_stdout, log, lower, memref_arg, parse_input, run

RUNNER_UTILS_LIBS = sys.argv[1:]


# printMemrefF32 writes to the C stdout, which is buffered apart from Python's stderr; flushing
# it after each native call keeps the merged output in the order things happened.
def invoke_and_flush(engine, name, *args):
    engine.invoke(name, *args)
    flush_c_stdout()


# CHECK-LABEL: TEST: testPrintMemrefF32
def testPrintMemrefF32():
    with Context():
        engine = ExecutionEngine(lower(parse_input("print_memref_f32.mlir")), shared_libs=RUNNER_UTILS_LIBS)

        # CHECK-NEXT: contiguous 2x3:
        # CHECK-NEXT: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
        # CHECK-NEXT{LITERAL}: [[0,   1,   2],
        # CHECK-NEXT:  [3,   4,   5]]
        log("contiguous 2x3:")
        invoke_and_flush(engine, "print_2d", memref_arg(np.arange(6, dtype=np.float32).reshape(2, 3)))

        # The transpose of the same data: printMemrefF32 follows the strides.
        # CHECK-NEXT: transposed 3x2:
        # CHECK-NEXT: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [3, 2] strides = [1, 3] data =
        # CHECK-NEXT{LITERAL}: [[0,   3],
        # CHECK-NEXT:  [1,   4],
        # CHECK-NEXT:  [2,   5]]
        log("transposed 3x2:")
        invoke_and_flush(engine, "print_2d", memref_arg(np.arange(6, dtype=np.float32).reshape(2, 3).T))

        # A module global, printed by @main without any NumPy input.
        # CHECK-NEXT: global:
        # CHECK-NEXT: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
        # CHECK-NEXT{LITERAL}: [[1.5,   2,   -3],
        # CHECK-NEXT:  [4,   0.25,   6]]
        # CHECK-NEXT: done
        log("global:")
        invoke_and_flush(engine, "main")
        log("done")


run(testPrintMemrefF32)
