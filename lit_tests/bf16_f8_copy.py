# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, ml_dtypes
"""bf16 and f8 memrefs (ml_dtypes arrays) are copied by JIT code bit for bit."""

import ml_dtypes
import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run

# out[i] = a[i] over memref<?xT>: a load and a store of T, nothing else.
COPY_MODULE = r"""
func.func @copy(%a: memref<?x{T}>, %out: memref<?x{T}>) attributes {{ llvm.emit_c_interface }} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x{T}>
  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %a[%i] : memref<?x{T}>
    memref.store %x, %out[%i] : memref<?x{T}>
  }}
  return
}}
"""

ELEMENT_TYPES = {
    # MLIR element type: ml_dtypes dtype
    "bf16": ml_dtypes.bfloat16,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E4M3": ml_dtypes.float8_e4m3,
    "f8E3M4": ml_dtypes.float8_e3m4,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
}


def jit_copy(element_type, values):
    """Copies `values` (rounded to the element type) in JIT code; logs what came back."""
    a = np.array(values, dtype=ELEMENT_TYPES[element_type])
    out = np.zeros_like(a)
    out_arg = memref_arg(out)
    with Context():
        engine = ExecutionEngine(lower(Module.parse(COPY_MODULE.format(T=element_type))))
        engine.invoke("copy", memref_arg(a), out_arg)
    view = ranked_memref_to_numpy(out_arg[0])
    same_bits = out.view(np.uint8).tobytes() == a.view(np.uint8).tobytes()
    log(f"{element_type}: {out.tolist()} same bits: {same_bits}, read back as {view.dtype}: {view.tolist()}")


# CHECK-LABEL: TEST: testLowPrecisionCopy
def testLowPrecisionCopy():
    # 0.5, -1.5 and 3 are exact in every type; 0.1 is rounded to the nearest value of each.
    # bf16 (7 mantissa bits): 0.1 = 1.6 * 2**-4 -> round(1.6 * 128) / 128 * 2**-4 = 0.10009765625
    # CHECK-NEXT: bf16: [0.5, -1.5, 3.0, 0.10009765625] same bits: True, read back as bfloat16: [0.5, -1.5, 3.0, 0.10009765625]
    jit_copy("bf16", [0.5, -1.5, 3, 0.1])
    # 2 mantissa bits: 1.5 * 2**-4 = 0.09375 is nearer than 1.75 * 2**-4 = 0.109375
    # CHECK-NEXT: f8E5M2: [0.5, -1.5, 3.0, 0.09375] same bits: True, read back as float8_e5m2: [0.5, -1.5, 3.0, 0.09375]
    jit_copy("f8E5M2", [0.5, -1.5, 3, 0.1])
    # 3 mantissa bits: 1.625 * 2**-4 = 0.1015625 is nearer than 1.5 * 2**-4 = 0.09375
    # CHECK-NEXT: f8E4M3: [0.5, -1.5, 3.0, 0.1015625] same bits: True, read back as float8_e4m3: [0.5, -1.5, 3.0, 0.1015625]
    jit_copy("f8E4M3", [0.5, -1.5, 3, 0.1])
    # Smallest normal is 2**-2, so 0.1 is subnormal, in steps of 2**-6: 6 * 2**-6 = 0.09375
    # CHECK-NEXT: f8E3M4: [0.5, -1.5, 3.0, 0.09375] same bits: True, read back as float8_e3m4: [0.5, -1.5, 3.0, 0.09375]
    jit_copy("f8E3M4", [0.5, -1.5, 3, 0.1])
    # As f8E4M3 for these values; 448 is the largest finite f8E4M3FN.
    # CHECK-NEXT: f8E4M3FN: [0.5, -1.5, 448.0, 0.1015625] same bits: True, read back as float8_e4m3fn: [0.5, -1.5, 448.0, 0.1015625]
    jit_copy("f8E4M3FN", [0.5, -1.5, 448, 0.1])


run(testLowPrecisionCopy)
