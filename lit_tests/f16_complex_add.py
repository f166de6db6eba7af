# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""Element-wise adds of f16, complex<f32> and complex<f64> memrefs, checked against NumPy."""

import numpy as np
from mlir.execution_engine import *
from mlir.ir import *

from memref_runtime.np_to_memref import *
from memref_runtime.testing import log, lower, memref_arg, run, unranked_arg

# out[i] = a[i] + b[i] over memref<?xT>, with `add` the op for T; @add_unranked does the
# same on memref<*xT> cast to memref<?xT>.
ADD_MODULE = r"""
func.func @add(%a: memref<?x{T}>, %b: memref<?x{T}>, %out: memref<?x{T}>)
    attributes {{ llvm.emit_c_interface }} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x{T}>
  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %a[%i] : memref<?x{T}>
    %y = memref.load %b[%i] : memref<?x{T}>
    %sum = {add} %x, %y : {T}
    memref.store %sum, %out[%i] : memref<?x{T}>
  }}
  return
}}
func.func @add_unranked(%a: memref<*x{T}>, %b: memref<*x{T}>, %out: memref<*x{T}>)
    attributes {{ llvm.emit_c_interface }} {{
  %ra = memref.cast %a : memref<*x{T}> to memref<?x{T}>
  %rb = memref.cast %b : memref<*x{T}> to memref<?x{T}>
  %rout = memref.cast %out : memref<*x{T}> to memref<?x{T}>
  call @add(%ra, %rb, %rout) : (memref<?x{T}>, memref<?x{T}>, memref<?x{T}>) -> ()
  return
}}
"""

ELEMENT_TYPES = {
    # NumPy dtype: (MLIR element type, add op)
    np.float16: ("f16", "arith.addf"),
    np.complex64: ("complex<f32>", "complex.add"),
    np.complex128: ("complex<f64>", "complex.add"),
}


def jit_add(a, b):
    """Adds `a` and `b` in JIT code, ranked then unranked; logs the sums and NumPy's verdict."""
    element_type, add = ELEMENT_TYPES[a.dtype.type]
    with Context():
        module = Module.parse(ADD_MODULE.format(T=element_type, add=add))
        engine = ExecutionEngine(lower(module))

        out = np.zeros_like(a)
        out_arg = memref_arg(out)
        engine.invoke("add", memref_arg(a), memref_arg(b), out_arg)
        log(f"{element_type}: {a.tolist()} + {b.tolist()}")
        log(f"  = {out.tolist()}, equal to NumPy: {np.array_equal(out, a + b)}")
        view = ranked_memref_to_numpy(out_arg[0])
        log("  as read back:", view, view.dtype)

        out = np.zeros_like(a)
        out_arg = unranked_arg(out)
        engine.invoke("add_unranked", unranked_arg(a), unranked_arg(b), out_arg)
        view = unranked_memref_to_numpy(out_arg[0], a.dtype)
        log("  unranked:", view.tolist(), view.dtype, np.array_equal(view, a + b))


# CHECK-LABEL: TEST: testF16Add
def testF16Add():
    # 2048 + 1 = 2049 is halfway between the f16 neighbours 2048 and 2050; the tie goes to 2048.
    # f16(0.1) + f16(0.2) = 0.0999755859375 + 0.199951171875 = 0.2999267578125, halfway
    # between the f16 neighbours 0.2998046875 and 0.300048828125; the tie goes to the first.
    # CHECK-NEXT: f16: [1.5, 2048.0, 0.0999755859375] + [0.25, 1.0, 0.199951171875]
    # CHECK-NEXT:   = [1.75, 2048.0, 0.2998046875], equal to NumPy: True
    # CHECK-NEXT:   as read back: [1.750e+00 2.048e+03 2.998e-01] float16{{$}}
    # CHECK-NEXT:   unranked: [1.75, 2048.0, 0.2998046875] float16 True
    jit_add(np.array([1.5, 2048, 0.1], np.float16), np.array([0.25, 1, 0.2], np.float16))


run(testF16Add)


# CHECK-LABEL: TEST: testComplexAdd
def testComplexAdd():
    # CHECK-NEXT: complex<f32>: [(1+2j), (-0.5+0.25j)] + [(3+4j), (0.5-0.25j)]
    # CHECK-NEXT:   = [(4+6j), 0j], equal to NumPy: True
    # CHECK-NEXT:   as read back: [4.+6.j 0.+0.j] complex64{{$}}
    # CHECK-NEXT:   unranked: [(4+6j), 0j] complex64 True
    jit_add(
        np.array([1 + 2j, -0.5 + 0.25j], np.complex64),
        np.array([3 + 4j, 0.5 - 0.25j], np.complex64),
    )
    # In f64, 0.1 + 0.2 is 0.30000000000000004 (in f32 it would print as 0.30000001192092896).
    # CHECK-NEXT: complex<f64>: [(1+2j), (0.1+0.2j)] + [(3+4j), (0.2+0.1j)]
    # CHECK-NEXT:   = [(4+6j), (0.30000000000000004+0.30000000000000004j)], equal to NumPy: True
    # CHECK-NEXT:   as read back: [4. +6.j  0.3+0.3j] complex128{{$}}
    # CHECK-NEXT:   unranked: [(4+6j), (0.30000000000000004+0.30000000000000004j)] complex128 True
    jit_add(
        np.array([1 + 2j, 0.1 + 0.2j], np.complex128),
        np.array([3 + 4j, 0.2 + 0.1j], np.complex128),
    )


run(testComplexAdd)
