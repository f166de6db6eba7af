# RUN: %PYTHON %s 2>&1 | FileCheck %s --check-prefixes=CHECK,%if runtime-memref_runtime %{OURS%} %else %{UPSTREAM%}
# REQUIRES: host-supports-jit
"""An upstream-style test: `from mlir.runtime import *`, whichever runtime `-D runtime=` names.

The shared checks hold for both runtimes; OURS checks what only memref_runtime gets right.
"""

from mlir.ir import *
from mlir.passmanager import *
from mlir.execution_engine import *
from mlir.runtime import *  # upstream's star import also hands out np and ctypes
from memref_runtime.testing import log, run


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
        module = Module.parse(r"""
func.func @tail(%arg0: memref<5xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<5xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [3], sizes: [2], strides: [1]
      : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %u = memref.cast %view : memref<2xf32, strided<[1], offset: 3>> to memref<*xf32>
  call @callback(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @callback(memref<*xf32>) attributes { llvm.emit_c_interface }
""")
        PassManager.parse("builtin.module(expand-strided-metadata,finalize-memref-to-llvm,"
                          "convert-func-to-llvm,reconcile-unrealized-casts)").run(module.operation)
        engine = ExecutionEngine(module)
        engine.register_runtime("callback", callback)
        x = np.array([1, 2, 3, 4, 5], np.float32)
        # CHECK: [4. 5.]
        engine.invoke("tail", ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(x))))


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
