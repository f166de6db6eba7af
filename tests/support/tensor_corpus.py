"""Kernels of ordinary tensor and linalg code that the default pipeline must compile, with NumPy references.

tests/test_default_pipeline.py compiles each with JitModule and checks it with check_close.

A kernel is (MLIR of one public function, inputs from a seeded generator, reference). Kinds:
elementwise arith/math/complex on tensors of any rank (dynamic sizes, f16), slices, pad,
concat, reshapes, named and generic linalg ops, constants, scf loops with tensor iter_args,
several results of mixed kinds, and memref.copy of strided memrefs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np


class Kernel(NamedTuple):
    name: str
    mlir: str
    inputs: Callable  # rng -> tuple of arguments
    reference: Callable  # *copies of the arguments -> result, a tuple of results, or None (writes into them)
    i1_memrefs: bool = False  # lowers memref.load/store of i1: MLIR >= 23 only


F32, F64, F16, I32, I64 = np.float32, np.float64, np.float16, np.int32, np.int64
C64, C128 = np.complex64, np.complex128


def normal(rng, shape, dtype=F32):
    return rng.standard_normal(shape).astype(dtype)


def ints(rng, shape, dtype=I32, low=-50, high=50):
    return rng.integers(low, high, shape).astype(dtype)


def complexes(rng, shape, dtype=C64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def set_slice(a, index, b):
    out = a.copy()
    out[index] = b
    return out


KERNELS = [
    # --- elementwise arith and math on tensors -------------------------------------------
    Kernel(
        "addf_1d_dynamic",
        """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = arith.addf %a, %b : tensor<?xf32>
  return %r : tensor<?xf32>
}""",
        lambda rng: (normal(rng, 37), normal(rng, 37)),
        lambda a, b: a + b,
    ),
    Kernel(
        "mulf_subf_2d_dynamic",
        """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %c: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %p = arith.mulf %a, %b : tensor<?x?xf32>
  %r = arith.subf %p, %c : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}""",
        lambda rng: tuple(normal(rng, (5, 7)) for _ in range(3)),
        lambda a, b, c: a * b - c,
    ),
    Kernel(
        "rank0_mulf",
        """
func.func @f(%a: tensor<f64>, %b: tensor<f64>) -> tensor<f64> {
  %r = arith.mulf %a, %b : tensor<f64>
  return %r : tensor<f64>
}""",
        lambda rng: (np.array(1.5), np.array(-2.25)),
        lambda a, b: a * b,
    ),
    Kernel(
        "maximumf_3d_static",
        """
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %r = arith.maximumf %a, %b : tensor<2x3x4xf32>
  return %r : tensor<2x3x4xf32>
}""",
        lambda rng: (normal(rng, (2, 3, 4)), normal(rng, (2, 3, 4))),
        np.maximum,
    ),
    Kernel(
        "divf_4d_dynamic_f64",
        """
func.func @f(%a: tensor<?x?x?x?xf64>, %b: tensor<?x?x?x?xf64>) -> tensor<?x?x?x?xf64> {
  %r = arith.divf %a, %b : tensor<?x?x?x?xf64>
  return %r : tensor<?x?x?x?xf64>
}""",
        lambda rng: (normal(rng, (2, 3, 1, 4), F64), normal(rng, (2, 3, 1, 4), F64) + 3),
        lambda a, b: a / b,
    ),
    Kernel(
        "math_exp_sqrt_abs",
        """
func.func @f(%a: tensor<?xf32>) -> tensor<?xf32> {
  %e = math.exp %a : tensor<?xf32>
  %b = math.absf %a : tensor<?xf32>
  %s = math.sqrt %b : tensor<?xf32>
  %r = arith.addf %e, %s : tensor<?xf32>
  return %r : tensor<?xf32>
}""",
        lambda rng: (normal(rng, 50),),
        lambda a: np.exp(a) + np.sqrt(np.abs(a)),
    ),
    Kernel(
        "math_tanh_log1p_f64",
        """
func.func @f(%a: tensor<3x?xf64>) -> tensor<3x?xf64> {
  %t = math.tanh %a : tensor<3x?xf64>
  %b = math.absf %a : tensor<3x?xf64>
  %l = math.log1p %b : tensor<3x?xf64>
  %r = arith.mulf %t, %l : tensor<3x?xf64>
  return %r : tensor<3x?xf64>
}""",
        lambda rng: (normal(rng, (3, 9), F64),),
        lambda a: np.tanh(a) * np.log1p(np.abs(a)),
    ),
    Kernel(
        "f16_mulf_addf",
        """
func.func @f(%a: tensor<?x?xf16>, %b: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %p = arith.mulf %a, %b : tensor<?x?xf16>
  %r = arith.addf %p, %a : tensor<?x?xf16>
  return %r : tensor<?x?xf16>
}""",
        lambda rng: (normal(rng, (4, 6), F16), normal(rng, (4, 6), F16)),
        lambda a, b: a * b + a,
    ),
    Kernel(
        "f16_math_tanh",
        """
func.func @f(%a: tensor<?xf16>) -> tensor<?xf16> {
  %r = math.tanh %a : tensor<?xf16>
  return %r : tensor<?xf16>
}""",
        lambda rng: (normal(rng, 33, F16),),
        np.tanh,
    ),
    Kernel(
        "bf16_addf_mulf",
        """
func.func @f(%a: tensor<?xbf16>, %b: tensor<?xbf16>) -> tensor<?xbf16> {
  %s = arith.addf %a, %b : tensor<?xbf16>
  %r = arith.mulf %s, %b : tensor<?xbf16>
  return %r : tensor<?xbf16>
}""",
        lambda rng: (_bf16(normal(rng, 16)), _bf16(normal(rng, 16))),
        lambda a, b: _bf16(_bf16(a.astype(F32) + b.astype(F32)).astype(F32) * b.astype(F32)),
    ),
    Kernel(
        "integers_addi_muli_maxsi",
        """
func.func @f(%a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %s = arith.addi %a, %b : tensor<?xi32>
  %p = arith.muli %s, %b : tensor<?xi32>
  %r = arith.maxsi %p, %a : tensor<?xi32>
  return %r : tensor<?xi32>
}""",
        lambda rng: (ints(rng, 40), ints(rng, 40)),
        lambda a, b: np.maximum((a + b) * b, a),
    ),
    Kernel(
        "integers_divsi_remsi_i64",
        """
func.func @f(%a: tensor<2x?xi64>, %b: tensor<2x?xi64>) -> (tensor<2x?xi64>, tensor<2x?xi64>) {
  %q = arith.divsi %a, %b : tensor<2x?xi64>
  %r = arith.remsi %a, %b : tensor<2x?xi64>
  return %q, %r : tensor<2x?xi64>, tensor<2x?xi64>
}""",
        lambda rng: (ints(rng, (2, 8), I64, 0, 1000), ints(rng, (2, 8), I64, 1, 30)),
        lambda a, b: (a // b, a % b),
    ),  # non-negative operands: C and NumPy division agree
    Kernel(
        "cmpf_select_relu",
        """
func.func @f(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %pos = arith.cmpf ogt, %a, %z : tensor<?x?xf32>
  %r = arith.select %pos, %a, %z : tensor<?x?xi1>, tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}""",
        lambda rng: (normal(rng, (6, 5)),),
        lambda a: np.where(a > 0, a, np.float32(0)),
    ),
    Kernel(
        "casts_sitofp_truncf_extf",
        """
func.func @f(%a: tensor<?xi32>, %b: tensor<?xf64>) -> (tensor<?xf32>, tensor<?xf16>) {
  %f = arith.sitofp %a : tensor<?xi32> to tensor<?xf32>
  %h = arith.truncf %b : tensor<?xf64> to tensor<?xf16>
  return %f, %h : tensor<?xf32>, tensor<?xf16>
}""",
        lambda rng: (ints(rng, 12), normal(rng, 12, F64)),
        lambda a, b: (a.astype(F32), b.astype(F16)),
    ),
    Kernel(
        "cmpf_returned_as_bool",
        """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xi1> {
  %r = arith.cmpf olt, %a, %b : tensor<?xf32>
  return %r : tensor<?xi1>
}""",
        lambda rng: (normal(rng, 20), normal(rng, 20)),
        lambda a, b: a < b,
        i1_memrefs=True,
    ),
    # --- complex element-wise: complex ops take scalars, so a linalg body applies them -----
    Kernel(
        "complex_mul_abs_generic",
        """
#id = affine_map<(i) -> (i)>
func.func @f(%a: tensor<?xcomplex<f32>>, %b: tensor<?xcomplex<f32>>) -> (tensor<?xcomplex<f32>>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xcomplex<f32>>
  %e = tensor.empty(%n) : tensor<?xcomplex<f32>>
  %ea = tensor.empty(%n) : tensor<?xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<?xcomplex<f32>>, tensor<?xcomplex<f32>>) outs(%e, %ea : tensor<?xcomplex<f32>>, tensor<?xf32>) {
  ^bb0(%x: complex<f32>, %y: complex<f32>, %o: complex<f32>, %oa: f32):
    %p = complex.mul %x, %y : complex<f32>
    %m = complex.abs %p : complex<f32>
    linalg.yield %p, %m : complex<f32>, f32
  } -> (tensor<?xcomplex<f32>>, tensor<?xf32>)
  return %r#0, %r#1 : tensor<?xcomplex<f32>>, tensor<?xf32>
}""",
        lambda rng: (complexes(rng, 9), complexes(rng, 9)),
        lambda a, b: (a * b, np.abs(a * b)),
    ),
    Kernel(
        "complex_exp_generic_2d_f64",
        """
func.func @f(%a: tensor<?x?xcomplex<f64>>) -> tensor<?x?xcomplex<f64>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xcomplex<f64>>
  %n = tensor.dim %a, %c1 : tensor<?x?xcomplex<f64>>
  %e = tensor.empty(%m, %n) : tensor<?x?xcomplex<f64>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<?x?xcomplex<f64>>) outs(%e : tensor<?x?xcomplex<f64>>) {
  ^bb0(%x: complex<f64>, %o: complex<f64>):
    %y = complex.exp %x : complex<f64>
    linalg.yield %y : complex<f64>
  } -> tensor<?x?xcomplex<f64>>
  return %r : tensor<?x?xcomplex<f64>>
}""",
        lambda rng: (complexes(rng, (3, 4), C128),),
        np.exp,
    ),
    # --- slices, pad, concat, reshapes -----------------------------------------------------
    Kernel(
        "extract_slice_strided_returned",
        """
func.func @f(%a: tensor<8x8xf32>) -> tensor<3x2xf32> {
  %s = tensor.extract_slice %a[1, 2] [3, 2] [2, 3] : tensor<8x8xf32> to tensor<3x2xf32>
  return %s : tensor<3x2xf32>
}""",
        lambda rng: (normal(rng, (8, 8)),),
        lambda a: a[1:7:2, 2:8:3],
    ),
    Kernel(
        "extract_slice_dynamic",
        """
func.func @f(%a: tensor<?x?xf64>, %i: index, %j: index, %m: index, %n: index) -> tensor<?x?xf64> {
  %s = tensor.extract_slice %a[%i, %j] [%m, %n] [1, 1] : tensor<?x?xf64> to tensor<?x?xf64>
  return %s : tensor<?x?xf64>
}""",
        lambda rng: (normal(rng, (7, 9), F64), 2, 3, 4, 5),
        lambda a, i, j, m, n: a[i : i + m, j : j + n],
    ),
    Kernel(
        "insert_slice_strided",
        """
func.func @f(%a: tensor<6x6xf32>, %b: tensor<2x3xf32>) -> tensor<6x6xf32> {
  %r = tensor.insert_slice %b into %a[3, 0] [2, 3] [2, 2] : tensor<2x3xf32> into tensor<6x6xf32>
  return %r : tensor<6x6xf32>
}""",
        lambda rng: (normal(rng, (6, 6)), normal(rng, (2, 3))),
        lambda a, b: set_slice(a, (slice(3, 6, 2), slice(0, 6, 2)), b),
    ),
    Kernel(
        "pad_dynamic",
        """
func.func @f(%a: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %v = arith.constant 0.5 : f32
  %p = tensor.pad %a low[1, 2] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  return %p : tensor<?x?xf32>
}""",
        lambda rng: (normal(rng, (3, 4)),),
        lambda a: np.pad(a, ((1, 0), (2, 3)), constant_values=0.5),
    ),
    Kernel(
        "concat_dim0_dynamic",
        """
func.func @f(%a: tensor<?x3xf32>, %b: tensor<?x3xf32>) -> tensor<?x3xf32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %c : tensor<?x3xf32>
}""",
        lambda rng: (normal(rng, (2, 3)), normal(rng, (4, 3))),
        lambda a, b: np.concatenate([a, b], 0),
    ),
    Kernel(
        "concat_dim1_three_i32",
        """
func.func @f(%a: tensor<2x1xi32>, %b: tensor<2x3xi32>, %c: tensor<2x2xi32>) -> tensor<2x6xi32> {
  %r = tensor.concat dim(1) %a, %b, %c : (tensor<2x1xi32>, tensor<2x3xi32>, tensor<2x2xi32>) -> tensor<2x6xi32>
  return %r : tensor<2x6xi32>
}""",
        lambda rng: (ints(rng, (2, 1)), ints(rng, (2, 3)), ints(rng, (2, 2))),
        lambda a, b, c: np.concatenate([a, b, c], 1),
    ),
    Kernel(
        "expand_and_collapse_shape",
        """
func.func @f(%a: tensor<2x6xf32>) -> (tensor<2x2x3xf32>, tensor<12xf32>) {
  %e = tensor.expand_shape %a [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x6xf32> into tensor<12xf32>
  return %e, %c : tensor<2x2x3xf32>, tensor<12xf32>
}""",
        lambda rng: (normal(rng, (2, 6)),),
        lambda a: (a.reshape(2, 2, 3), a.reshape(12)),
    ),
    Kernel(
        "collapse_dynamic_then_add",
        """
func.func @f(%a: tensor<?x4xf64>) -> tensor<?xf64> {
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<?x4xf64> into tensor<?xf64>
  %r = arith.addf %c, %c : tensor<?xf64>
  return %r : tensor<?xf64>
}""",
        lambda rng: (normal(rng, (3, 4), F64),),
        lambda a: (a + a).reshape(-1),
    ),
    Kernel(
        "tensor_reshape_with_shape_operand",
        """
func.func @f(%a: tensor<24xf32>) -> tensor<4x6xf32> {
  %shape = arith.constant dense<[4, 6]> : tensor<2xindex>
  %r = tensor.reshape %a(%shape) : (tensor<24xf32>, tensor<2xindex>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}""",
        lambda rng: (normal(rng, 24),),
        lambda a: a.reshape(4, 6),
    ),
    Kernel(
        "extract_insert_from_elements_generate",
        """
func.func @f(%a: tensor<?xf32>, %n: index) -> (tensor<3xf32>, tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x = tensor.extract %a[%c0] : tensor<?xf32>
  %y = tensor.extract %a[%c1] : tensor<?xf32>
  %v = tensor.from_elements %y, %x, %y : tensor<3xf32>
  %w = tensor.insert %y into %a[%c0] : tensor<?xf32>
  %g = tensor.generate %n {
  ^bb0(%i: index):
    %k = arith.index_cast %i : index to i64
    %f = arith.sitofp %k : i64 to f32
    %s = arith.mulf %f, %x : f32
    tensor.yield %s : f32
  } : tensor<?xf32>
  return %v, %w, %g : tensor<3xf32>, tensor<?xf32>, tensor<?xf32>
}""",
        lambda rng: (normal(rng, 5), 4),
        lambda a, n: (np.array([a[1], a[0], a[1]]), set_slice(a, 0, a[1]), np.arange(n, dtype=F32) * a[0]),
    ),
    # --- named and generic linalg, constants ----------------------------------------------
    Kernel(
        "matmul_dynamic_with_fill",
        """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}""",
        lambda rng: (normal(rng, (5, 7)), normal(rng, (7, 3))),
        lambda a, b: a @ b,
    ),
    Kernel(
        "batch_matmul_static_f64",
        """
func.func @f(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>, %acc: tensor<2x3x5xf64>) -> tensor<2x3x5xf64> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf64>, tensor<2x4x5xf64>) outs(%acc : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  return %r : tensor<2x3x5xf64>
}""",
        lambda rng: (normal(rng, (2, 3, 4), F64), normal(rng, (2, 4, 5), F64), normal(rng, (2, 3, 5), F64)),
        lambda a, b, acc: acc + a @ b,
    ),
    Kernel(
        "matvec_and_dot",
        """
func.func @f(%m: tensor<4x6xf32>, %v: tensor<6xf32>, %init: tensor<4xf32>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<f32>) {
  %mv = linalg.matvec ins(%m, %v : tensor<4x6xf32>, tensor<6xf32>) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  %d = linalg.dot ins(%v, %v : tensor<6xf32>, tensor<6xf32>) outs(%s : tensor<f32>) -> tensor<f32>
  return %mv, %d : tensor<4xf32>, tensor<f32>
}""",
        lambda rng: (normal(rng, (4, 6)), normal(rng, 6), normal(rng, 4), np.array(0.5, F32)),
        lambda m, v, init, s: (init + m @ v, s + v @ v),
    ),
    Kernel(
        "transpose_and_broadcast",
        """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<3x2xf32>, tensor<4x3xf32>) {
  %et = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%et : tensor<3x2xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<4x3xf32>
  %r = linalg.broadcast ins(%b : tensor<3xf32>) outs(%eb : tensor<4x3xf32>) dimensions = [0]
  return %t, %r : tensor<3x2xf32>, tensor<4x3xf32>
}""",
        lambda rng: (normal(rng, (2, 3)), normal(rng, 3)),
        lambda a, b: (a.T, np.broadcast_to(b, (4, 3))),
    ),
    Kernel(
        "linalg_elementwise_named",
        """
func.func @f(%a: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %r = linalg.elementwise kind=#linalg.elementwise_kind<mul> ins(%a, %b : tensor<4x5xf32>, tensor<4x5xf32>)
      outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>
  return %r : tensor<4x5xf32>
}""",
        lambda rng: (normal(rng, (4, 5)), normal(rng, (4, 5))),
        lambda a, b: a * b,
    ),
    Kernel(
        "reduce_sum_rows",
        """
func.func @f(%a: tensor<?x?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %e = tensor.empty(%m) : tensor<?xf64>
  %z = arith.constant 0.0 : f64
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<?xf64>) -> tensor<?xf64>
  %r = linalg.reduce ins(%a : tensor<?x?xf64>) outs(%f : tensor<?xf64>) dimensions = [1]
    (%x: f64, %acc: f64) {
      %s = arith.addf %x, %acc : f64
      linalg.yield %s : f64
    }
  return %r : tensor<?xf64>
}""",
        lambda rng: (normal(rng, (5, 11), F64),),
        lambda a: a.sum(axis=1),
    ),
    Kernel(
        "generic_row_max",
        """
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%a: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%m) : tensor<?xf32>
  %low = arith.constant -3.0e38 : f32
  %f = linalg.fill ins(%low : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<?x?xf32>) outs(%f : tensor<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}""",
        lambda rng: (normal(rng, (4, 9)),),
        lambda a: a.max(axis=1),
    ),
    Kernel(
        "conv_2d_nhwc_hwcf",
        """
func.func @f(%img: tensor<1x5x5x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%img, %k : tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) outs(%f : tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  return %r : tensor<1x3x3x4xf32>
}""",
        lambda rng: (normal(rng, (1, 5, 5, 2)), normal(rng, (3, 3, 2, 4))),
        lambda img, k: _conv_reference(img, k),
    ),
    Kernel(
        "dense_constant_added",
        """
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = arith.addf %a, %c : tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}""",
        lambda rng: (normal(rng, (2, 3)),),
        lambda a: a + np.array([[1, 2, 3], [4, 5, 6]], F32),
    ),
    Kernel(
        "constants_returned_splat_and_dense_i64",
        """
func.func @f() -> (tensor<2x2xf64>, tensor<3xi64>) {
  %s = arith.constant dense<2.5> : tensor<2x2xf64>
  %d = arith.constant dense<[7, -8, 9]> : tensor<3xi64>
  return %s, %d : tensor<2x2xf64>, tensor<3xi64>
}""",
        lambda rng: (),
        lambda: (np.full((2, 2), 2.5), np.array([7, -8, 9], I64)),
    ),
    # --- scf loops with tensor iter_args ----------------------------------------------------
    Kernel(
        "loop_accumulates_in_place",
        """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<?xf32> {
    %s = arith.addf %acc, %b : tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}""",
        lambda rng: (normal(rng, 10), normal(rng, 10), 5),
        lambda a, b, n: _repeat_add(a, b, n),
    ),
    Kernel(
        "loop_inserts_rows",
        """
func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %e = tensor.empty() : tensor<4x3xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %e) -> tensor<4x3xf32> {
    %j = arith.subi %c4, %i : index
    %k = arith.subi %j, %c1 : index
    %row = tensor.extract_slice %a[%k, 0] [1, 3] [1, 1] : tensor<4x3xf32> to tensor<1x3xf32>
    %next = tensor.insert_slice %row into %acc[%i, 0] [1, 3] [1, 1] : tensor<1x3xf32> into tensor<4x3xf32>
    scf.yield %next : tensor<4x3xf32>
  }
  return %r : tensor<4x3xf32>
}""",
        lambda rng: (normal(rng, (4, 3)),),
        lambda a: a[::-1],
    ),
    Kernel(
        "scf_if_yields_tensors",
        """
func.func @f(%a: tensor<?xf64>, %b: tensor<?xf64>, %flag: i32) -> tensor<?xf64> {
  %zero = arith.constant 0 : i32
  %c = arith.cmpi sgt, %flag, %zero : i32
  %r = scf.if %c -> tensor<?xf64> {
    %s = arith.addf %a, %b : tensor<?xf64>
    scf.yield %s : tensor<?xf64>
  } else {
    %d = arith.subf %a, %b : tensor<?xf64>
    scf.yield %d : tensor<?xf64>
  }
  return %r : tensor<?xf64>
}""",
        lambda rng: (normal(rng, 6, F64), normal(rng, 6, F64), -3),
        lambda a, b, flag: a + b if flag > 0 else a - b,
    ),
    Kernel(
        "scf_while_doubles",
        """
func.func @f(%a: tensor<4xf32>, %n: i32) -> tensor<4xf32> {
  %z = arith.constant 0 : i32
  %one = arith.constant 1 : i32
  %r:2 = scf.while (%t = %a, %i = %z) : (tensor<4xf32>, i32) -> (tensor<4xf32>, i32) {
    %c = arith.cmpi slt, %i, %n : i32
    scf.condition(%c) %t, %i : tensor<4xf32>, i32
  } do {
  ^bb0(%t: tensor<4xf32>, %i: i32):
    %s = arith.addf %t, %t : tensor<4xf32>
    %j = arith.addi %i, %one : i32
    scf.yield %s, %j : tensor<4xf32>, i32
  }
  return %r#0 : tensor<4xf32>
}""",
        lambda rng: (normal(rng, 4), 3),
        lambda a, n: a * 2**n,
    ),
    Kernel(
        "scf_forall_parallel_insert",
        """
func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %r = scf.forall (%i) in (8) shared_outs(%o = %e) -> tensor<8xf32> {
    %c7 = arith.constant 7 : index
    %j = arith.subi %c7, %i : index
    %x = tensor.extract_slice %a[%j] [1] [1] : tensor<8xf32> to tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %x into %o[%i] [1] [1] : tensor<1xf32> into tensor<8xf32>
    }
  }
  return %r : tensor<8xf32>
}""",
        lambda rng: (normal(rng, 8),),
        lambda a: a[::-1],
    ),
    # --- several results of mixed kinds -------------------------------------------------------
    Kernel(
        "mixed_results_tensor_scalars_memref",
        """
func.func @f(%a: tensor<?xf64>, %m: memref<?xi32>) -> (tensor<?xf64>, f64, index, memref<?xi32>, i32) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf64>
  %x = tensor.extract %a[%c0] : tensor<?xf64>
  %d = arith.mulf %a, %a : tensor<?xf64>
  %y = memref.load %m[%c0] : memref<?xi32>
  return %d, %x, %n, %m, %y : tensor<?xf64>, f64, index, memref<?xi32>, i32
}""",
        lambda rng: (normal(rng, 5, F64), ints(rng, 4)),
        lambda a, m: (a * a, a[0], a.shape[0], m, m[0]),
    ),
    # --- memrefs: memref.copy of a strided view needs memrefCopy --------------------------------
    Kernel(
        "memref_copy_strided_to_contiguous",
        """
func.func @f(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %n = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %r = memref.alloc(%m, %n) : memref<?x?xf32>
  memref.copy %a, %r : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?x?xf32>
  return %r : memref<?x?xf32>
}""",
        lambda rng: (normal(rng, (6, 8))[1::2, ::-3],),
        lambda a: a.copy(),
    ),
    Kernel(
        "subview_copy_into_output",
        """
func.func @f(%a: memref<?x?xf64>, %out: memref<2x3xf64, strided<[?, ?], offset: ?>>) {
  %s = memref.subview %a[1, 2] [2, 3] [2, 1] : memref<?x?xf64> to memref<2x3xf64, strided<[?, 1], offset: ?>>
  memref.copy %s, %out : memref<2x3xf64, strided<[?, 1], offset: ?>> to memref<2x3xf64, strided<[?, ?], offset: ?>>
  return
}""",
        lambda rng: (normal(rng, (5, 6), F64), np.zeros((3, 4))[:0:-1, 1:]),
        lambda a, out: _set(out, a[1:5:2, 2:5]),
    ),
]


def _bf16(x):
    import ml_dtypes

    return np.asarray(x).astype(ml_dtypes.bfloat16)


def _set(out, value):
    """A reference for a function without results: writes into its output argument."""
    out[...] = value


def _repeat_add(a, b, n):
    for _ in range(n):
        a = a + b
    return a


def _conv_reference(img, k):
    """linalg.conv_2d_nhwc_hwcf with unit strides and dilations, in float64 then float32."""
    n, h, w, c = img.shape
    kh, kw, _, f = k.shape
    out = np.zeros((n, h - kh + 1, w - kw + 1, f))
    for y in range(h - kh + 1):
        for x in range(w - kw + 1):
            out[:, y, x, :] = np.einsum("nhwc,hwcf->nf", img[:, y : y + kh, x : x + kw, :], k)
    return out.astype(F32)
