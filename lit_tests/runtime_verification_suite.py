# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, runtime-verification
"""`lit -D runtime_verification=1` turns MLIR's runtime checks on wherever a test does not say:
in every JitModule, and in every lowering of memref_runtime.testing."""

import numpy as np
from mlir.ir import Context

from memref_runtime import JitModule, RuntimeVerificationError
from memref_runtime.testing import log, lower, mlir_inputs, parse_input, run


def testJitModuleChecksByDefault():
    with open(f"{mlir_inputs()}/out_of_bounds.mlir") as f:
        jit = JitModule(f.read())
    log("runtime_verification:", jit.runtime_verification)
    try:
        jit.store_at(np.zeros(2, np.float32), 2, 1.0)
    except RuntimeVerificationError as e:
        log(e.message.splitlines()[2])


run(testJitModuleChecksByDefault)
# CHECK-LABEL: TEST: testJitModuleChecksByDefault
# CHECK-NEXT: runtime_verification: True
# CHECK-NEXT: ^ out-of-bounds access


def testLowerChecksByDefault():
    # The kernels have no cf.assert of their own: every abort() in the lowered code is a check's.
    with Context():
        lowered = str(lower(parse_input("out_of_bounds.mlir")))
    log("calls abort():", "llvm.call @abort()" in lowered)


run(testLowerChecksByDefault)
# CHECK-LABEL: TEST: testLowerChecksByDefault
# CHECK-NEXT: calls abort(): True
