# RUN: not --crash %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
# UPDATE-CHECKS: hand-written: the process aborts, and the stacks lit's crash report adds differ from run to run
"""lower(..., runtime_verification=True) with upstream's ExecutionEngine: a failed check writes
MLIR's message to stderr, unbuffered, so that it reaches the pipe, then aborts; under lit the
Python stack and the native one follow (docs/failures.md)."""

import ctypes

import numpy as np
from mlir.execution_engine import ExecutionEngine
from mlir.ir import Context

from memref_runtime.testing import log, lower, memref_arg, parse_input, run


def store_at(engine, array, index):
    engine.invoke(
        "store_at", memref_arg(array), ctypes.pointer(ctypes.c_int64(index)), ctypes.pointer(ctypes.c_float(1.0))
    )


def testOutOfBoundsStoreAborts():
    with Context():
        engine = ExecutionEngine(lower(parse_input("out_of_bounds.mlir"), runtime_verification=True))
    a = np.zeros(4, np.float32)
    store_at(engine, a, 3)
    log("a =", a)
    store_at(engine, a, 4)  # one past the end: the check aborts the process before the store
    log("never printed")


run(testOutOfBoundsStoreAborts)
# CHECK-LABEL: TEST: testOutOfBoundsStoreAborts
# CHECK-NEXT: a = [0. 0. 0. 1.]
# CHECK-NEXT: ERROR: Runtime op verification failed
# CHECK-NEXT: memref.store %arg2, %arg0[%arg1] : memref<?xf32>
# CHECK-NEXT: ^ out-of-bounds access
# CHECK-NEXT: Location: loc("{{.*}}mlir_inputs/out_of_bounds.mlir":4:3)
# CHECK-NEXT: Fatal Python error: Aborted
# CHECK: File "{{.*}}runtime_verification_abort.py", line {{[0-9]+}} in store_at
# CHECK-NEXT: File "{{.*}}runtime_verification_abort.py", line {{[0-9]+}} in testOutOfBoundsStoreAborts
# CHECK: {{^ *#?0 .*0x[0-9a-f]+}}
# CHECK-NOT: never printed
