# RUN: %PYTHON %s 2>&1 | FileCheck %s --check-prefixes=CHECK,%if runtime-memref_runtime %{OURS%} %else %{UPSTREAM%}
# REQUIRES: host-supports-jit
# UPDATE-CHECKS: hand-written: its prefixes come from %if on -D mlir_runtime=, so one run sees only UPSTREAM or only OURS
"""An upstream-style test: `from mlir.runtime import *`, whichever runtime `-D mlir_runtime=` names.

The shared checks hold for both runtimes; OURS checks what only memref_runtime gets right.
"""

from mlir.execution_engine import *
from mlir.ir import *
from mlir.passmanager import *
from mlir.runtime import *  # upstream's star import also hands out np and ctypes

from memref_runtime.testing import log, parse_input, run


# CHECK-LABEL: TEST: testWhichRuntime
# UPSTREAM: mlir.runtime.np_to_memref
# OURS: memref_runtime.conversion
def testWhichRuntime():
    log(get_ranked_memref_descriptor.__module__)


# CHECK-LABEL: TEST: testUnrankedCallbackOffset
def testUnrankedCallbackOffset():
    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def callback(a):
        log(unranked_memref_to_numpy(a, np.float32))

    with Context():
        module = parse_input("offset_view_unranked.mlir")
        PassManager.parse(
            "builtin.module(expand-strided-metadata,finalize-memref-to-llvm,"
            "convert-func-to-llvm,reconcile-unrealized-casts)"
        ).run(module.operation)
        engine = ExecutionEngine(module)
        engine.register_runtime("callback", callback)
        x = np.array([1, 2, 3, 4, 5], np.float32)
        # CHECK: [4. 5.]
        engine.invoke("view_tail", ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))))


# CHECK-LABEL: TEST: testZeroDToNumpy
def testZeroDToNumpy():
    x = np.array(2.5, np.float32)
    try:
        log(ranked_memref_to_numpy(ctypes.pointer(get_ranked_memref_descriptor(x))))
    except AttributeError as e:  # upstream: a 0-d descriptor has no `shape`
        log("AttributeError:", e)
    # UPSTREAM: AttributeError: {{.*}}shape
    # OURS: 2.5


run(testWhichRuntime)
run(testUnrankedCallbackOffset)
run(testZeroDToNumpy)
