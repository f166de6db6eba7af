# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, torch, ml_dtypes
"""Torch tensors in typed calls, zero-copy: a strided view in, a write into a tensor, a bf16
result out to torch through DLPack, and a tensor on the meta device refused by name."""

import gc

import torch

from memref_runtime import JitModule
from memref_runtime.testing import log, run

KERNELS = r"""
func.func @scale(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %s: f32, %out: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %out[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
func.func @halves(%n: index) -> memref<?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : bf16
  %r = memref.alloc(%n) : memref<?xbf16>
  scf.for %i = %c0 to %n step %c1 {
    %x = arith.index_cast %i : index to i64
    %f = arith.sitofp %x : i64 to bf16
    %h = arith.mulf %f, %half : bf16
    memref.store %h, %r[%i] : memref<?xbf16>
  }
  return %r : memref<?xbf16>
}
"""


def testStridedTensorIn():
    jit = JitModule(KERNELS)
    # The transpose of [[0, 1, 2], [3, 4, 5]]: element strides (1, 3) over the same storage.
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3).T
    out = torch.zeros(3, 2)
    jit.scale(a, 10.0, out)
    # 10 * [[0, 3], [1, 4], [2, 5]]
    log("strides", a.stride(), "->", out.tolist())


def testBf16ResultOut():
    jit = JitModule(KERNELS)
    result = jit.halves(5)
    t = torch.from_dlpack(result)  # NumPy's own __dlpack__ refuses bf16
    shared = t.data_ptr() == result.__array_interface__["data"][0]
    del result, jit
    gc.collect()  # the tensor keeps the JIT's allocation alive
    # 0.5 * i for i in 0..4, all exact in bf16
    log(t.dtype, t.tolist(), "shared:", shared)


def testMetaTensorRefused():
    jit = JitModule(KERNELS)
    try:
        jit.scale(torch.empty(2, 2, device="meta"), 1.0, torch.zeros(2, 2))
    except ValueError as e:
        log(f"{type(e).__name__}: {e}")


run(testStridedTensorIn)
# CHECK-LABEL: TEST: testStridedTensorIn
# CHECK-NEXT{LITERAL}: strides (1, 3) -> [[0.0, 30.0], [10.0, 40.0], [20.0, 50.0]]
run(testBf16ResultOut)
# CHECK-LABEL: TEST: testBf16ResultOut
# CHECK-NEXT: torch.bfloat16 [0.0, 0.5, 1.0, 1.5, 2.0] shared: True
run(testMetaTensorRefused)
# CHECK-LABEL: TEST: testMetaTensorRefused
# CHECK-NEXT: ValueError: scale(): argument 0 expects memref<?x?xf32, strided<[?, ?], offset: ?>>, got a torch.Tensor of dtype torch.float32, shape (2, 2), device meta, whose __dlpack_device__() names no DLPack device (ValueError: Unknown device type meta for Dlpack); memref arguments must be host (CPU) memory
