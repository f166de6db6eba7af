# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""JitModule(runtime_verification=True): a failed check raises RuntimeVerificationError with
MLIR's message (the op, what was violated, where), and nothing after the check ran."""

import os

import numpy as np

from memref_runtime import JitModule, RuntimeVerificationError
from memref_runtime.testing import log, mlir_inputs, run

with open(os.path.join(mlir_inputs(), "out_of_bounds.mlir")) as f:
    MODULE = f.read()


def show(call):
    try:
        call()
        log("returned")
    except RuntimeVerificationError as e:
        log(f"RuntimeVerificationError: {e}")


def testOutOfBoundsStore():
    jit = JitModule(MODULE, runtime_verification=True)
    a = np.zeros(4, np.float32)
    show(lambda: jit.store_at(a, 3, 1.0))
    # Index 4 of a 4-element memref: the check stops the call before the store.
    show(lambda: jit.store_at(a, 4, 2.0))
    show(lambda: jit.store_at(a, -1, 2.0))
    # Only the in-bounds store happened: [0, 0, 0, 1].
    log("a =", a)


run(testOutOfBoundsStore)
# CHECK-LABEL: TEST: testOutOfBoundsStore
# CHECK-NEXT: returned
# CHECK-NEXT: RuntimeVerificationError: store_at() stopped at a failed check; nothing after it ran:
# CHECK-NEXT: ERROR: Runtime op verification failed
# CHECK-NEXT: memref.store %arg2, %arg0[%arg1] : memref<?xf32>
# CHECK-NEXT: ^ out-of-bounds access
# CHECK-NEXT: Location: loc("-":4:3)
# CHECK-NEXT: RuntimeVerificationError: store_at() stopped at a failed check; nothing after it ran:
# CHECK-NEXT: ERROR: Runtime op verification failed
# CHECK-NEXT: memref.store %arg2, %arg0[%arg1] : memref<?xf32>
# CHECK-NEXT: ^ out-of-bounds access
# CHECK-NEXT: Location: loc("-":4:3)
# CHECK-NEXT: a = [0. 0. 0. 1.]


def testDynamicSizesDisagree():
    jit = JitModule(MODULE, runtime_verification=True)
    a, c = np.ones(4, np.float32), np.zeros(4, np.float32)
    # %b has 3 elements where %a and %c have 4: operand #1 disagrees with the inferred size 4.
    show(lambda: jit.add(a, np.ones(3, np.float32), c))
    log("c =", c)
    show(lambda: jit.add(a, a, c))
    log("c =", c)


run(testDynamicSizesDisagree)
# CHECK-LABEL: TEST: testDynamicSizesDisagree
# CHECK-NEXT: RuntimeVerificationError: add() stopped at a failed check; nothing after it ran:
# CHECK-NEXT: ERROR: Runtime op verification failed
# CHECK-NEXT: linalg.add ins(%arg0, %arg1 : memref<?xf32>, memref<?xf32>) outs(%arg2 : memref<?xf32>)
# CHECK-NEXT: ^ dimension #0 of input/output operand #1 is incompatible with inferred dimension size
# CHECK-NEXT: Location: loc("-":9:3)
# CHECK-NEXT: c = [0. 0. 0. 0.]
# CHECK-NEXT: returned
# CHECK-NEXT: c = [2. 2. 2. 2.]


def testWithoutVerification():
    # Explicitly off (whatever lit -D runtime_verification says): the loops run over %a's 4
    # elements and never notice that %b has 5, so the call returns as if all were well.
    jit = JitModule(MODULE, runtime_verification=False)
    c = np.zeros(4, np.float32)
    show(lambda: jit.add(np.ones(4, np.float32), np.ones(5, np.float32), c))
    log("c =", c)


run(testWithoutVerification)
# CHECK-LABEL: TEST: testWithoutVerification
# CHECK-NEXT: returned
# CHECK-NEXT: c = [2. 2. 2. 2.]
