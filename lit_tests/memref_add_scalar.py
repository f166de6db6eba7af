# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""memref<1xT> + 0-d memref<T> into a result memref, for f32, f64, i32 and i64."""

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run

# One module per element type: out[0] = a[0] + b[], with `add` the op for T.
ADD_MODULE = r"""
func.func @add(%a: memref<1x{T}>, %b: memref<{T}>, %out: memref<1x{T}>)
    attributes {{ llvm.emit_c_interface }} {{
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<1x{T}>
  %y = memref.load %b[] : memref<{T}>
  %sum = {add} %x, %y : {T}
  memref.store %sum, %out[%c0] : memref<1x{T}>
  return
}}
"""


def add_scalar(element_type, add, a, b):
    """Runs @add on 1-element `a` and 0-d `b`; logs `a + b = out`, the dtype and the exact value."""
    out = np.zeros_like(a)
    with Context():
        module = Module.parse(ADD_MODULE.format(T=element_type, add=add))
        engine = ExecutionEngine(lower(module))
        engine.invoke("add", memref_arg(a), memref_arg(b), memref_arg(out))
    log(f"{element_type}: {a} + {b} = {out} ({out.dtype}), exactly {out[0].item()!r}")


# CHECK-LABEL: TEST: testMemrefAddScalar
def testMemrefAddScalar():
    # CHECK-NEXT: f32: [32.5] + 6.0 = [38.5] (float32), exactly 38.5{{$}}
    add_scalar("f32", "arith.addf", np.array([32.5], np.float32), np.array(6, np.float32))
    # 0.1 + 0.2 rounds differently in f32 and f64; the exact value shows the add ran in f64.
    # CHECK-NEXT: f64: [0.1] + 0.2 = [0.3] (float64), exactly 0.30000000000000004{{$}}
    add_scalar("f64", "arith.addf", np.array([0.1], np.float64), np.array(0.2, np.float64))
    # CHECK-NEXT: i32: [2147483640] + 7 = [2147483647] (int32), exactly 2147483647{{$}}
    add_scalar("i32", "arith.addi", np.array([2**31 - 8], np.int32), np.array(7, np.int32))
    # Wraps around like NumPy int32 does: 2147483647 + 1 = -2147483648.
    # CHECK-NEXT: i32: [2147483647] + 1 = [-2147483648] (int32), exactly -2147483648{{$}}
    add_scalar("i32", "arith.addi", np.array([2**31 - 1], np.int32), np.array(1, np.int32))
    # CHECK-NEXT: i64: [1099511627776] + -5 = [1099511627771] (int64), exactly 1099511627771{{$}}
    add_scalar("i64", "arith.addi", np.array([2**40], np.int64), np.array(-5, np.int64))


run(testMemrefAddScalar)
