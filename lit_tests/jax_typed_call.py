# RUN: %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit, jax
"""JAX arrays in typed calls: read zero-copy through a tensor parameter, refused by name where
the kernel may write (JAX arrays are immutable), and a result out to JAX through DLPack."""

import jax.numpy as jnp
from jax import dlpack

from memref_runtime import JitModule
from memref_runtime.testing import log, run

KERNELS = r"""
func.func @total(%t: tensor<?x?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = tensor.dim %t, %c0 : tensor<?x?xf32>
  %cols = tensor.dim %t, %c1 : tensor<?x?xf32>
  %s = scf.for %i = %c0 to %rows step %c1 iter_args(%acc = %zero) -> f32 {
    %r = scf.for %j = %c0 to %cols step %c1 iter_args(%a = %acc) -> f32 {
      %x = tensor.extract %t[%i, %j] : tensor<?x?xf32>
      %y = arith.addf %a, %x : f32
      scf.yield %y : f32
    }
    scf.yield %r : f32
  }
  return %s : f32
}
func.func @zero(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %m[%c0] : memref<?xf32>
  return
}
func.func @squares(%n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.alloc(%n) {alignment = 64} : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = arith.index_cast %i : index to i64
    %f = arith.sitofp %x : i64 to f32
    %s = arith.mulf %f, %f : f32
    memref.store %s, %r[%i] : memref<?xf32>
  }
  return %r : memref<?xf32>
}
"""


def testReadOnlyIn():
    jit = JitModule(KERNELS)
    # 0 + 1 + ... + 11 = 66
    log("total:", jit.total(jnp.arange(12, dtype=jnp.float32).reshape(3, 4)))


def testImmutableRefused():
    jit = JitModule(KERNELS)
    try:
        jit.zero(jnp.ones(3, dtype=jnp.float32))
    except ValueError as e:
        log(f"{type(e).__name__}: {e}")


def testResultOut():
    jit = JitModule(KERNELS)
    result = jit.squares(4)
    a = dlpack.from_dlpack(result)  # zero-copy: the JIT allocated it 64-byte aligned, as XLA needs
    # i * i for i in 0..3
    log(a.dtype, a.tolist(), "shared:", a.unsafe_buffer_pointer() == result.__array_interface__["data"][0])


run(testReadOnlyIn)
# CHECK-LABEL: TEST: testReadOnlyIn
# CHECK-NEXT: total: 66.0{{$}}
run(testImmutableRefused)
# CHECK-LABEL: TEST: testImmutableRefused
# CHECK-NEXT: ValueError: zero(): argument 0 expects memref<?xf32>, got a jax.Array of dtype float32, shape (3,), device cpu:0, immutable; the native code may write into it, so pass a writable copy (np.array(a))
run(testResultOut)
# CHECK-LABEL: TEST: testResultOut
# CHECK-NEXT: float32 [0.0, 1.0, 4.0, 9.0] shared: True
