"""lower_to_llvm and the default pipelines: the dialects they handle, and their errors."""

from __future__ import annotations

import math
import os
import shlex
import subprocess

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from support.engine import MIN_MLIR_FOR_I1_MEMREF, MLIR_MAJOR  # noqa: E402

from memref_runtime import (  # noqa: E402
    DEFAULT_PIPELINE,
    TENSOR_LOOP_PIPELINE,
    TENSOR_PIPELINE,
    JitModule,
    LoweringError,
    lower_to_llvm,
)
from memref_runtime.jit.pipeline_text import top_level_passes  # noqa: E402

pytestmark = pytest.mark.jit

MIXED_DIALECTS = r"""
func.func @mixed(%m: memref<8xf32>, %x: f64, %z: complex<f64>, %i: index) -> (f32, f64, complex<f64>, index) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %m[%c0], %pad : memref<8xf32>, vector<8xf32>
  %s = vector.reduction <add>, %v : vector<8xf32> into f32
  %acc = affine.for %k = 0 to 8 iter_args(%a = %s) -> f32 {
    %e = affine.load %m[%k] : memref<8xf32>
    %t = math.tanh %e : f32
    %y = arith.addf %a, %t : f32
    affine.yield %y : f32
  }
  %erf = math.erf %x : f64
  %c = complex.exp %z : complex<f64>
  %j = index.mul %i, %i
  %cond = arith.cmpi sgt, %j, %c0 : index
  %r = scf.if %cond -> f32 {
    scf.yield %acc : f32
  } else {
    scf.yield %s : f32
  }
  return %r, %erf, %c, %j : f32, f64, complex<f64>, index
}
"""

TENSORS = r"""
func.func @axpy(%a: f32, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %ax = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                        iterator_types = ["parallel"]} ins(%x : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %a, %in : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %r = linalg.add ins(%ax, %y : tensor<?xf32>, tensor<?xf32>) outs(%y : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def test_default_pipeline_lowers_vector_affine_math_complex_index_scf():
    jit = JitModule(MIXED_DIALECTS)
    assert jit.pipeline == DEFAULT_PIPELINE
    m = np.linspace(-1, 1, 8, dtype=np.float32)
    r, erf, c, j = jit.mixed(m, 0.5, 1 + 1j, 3)
    assert r == pytest.approx(float(m.sum() + np.tanh(m).sum()), abs=1e-5)
    assert erf == pytest.approx(math.erf(0.5))
    assert c == pytest.approx(np.exp(1 + 1j))
    assert j == 9


def test_tensor_programs_bufferize_and_leave_inputs_alone():
    jit = JitModule(TENSORS)
    assert jit.pipeline == TENSOR_PIPELINE
    x = np.arange(5, dtype=np.float32)
    y = np.ones(5, np.float32)
    y.flags.writeable = False  # tensors are values: a read-only input is fine
    before = y.copy()
    r = jit.axpy(2.0, x, y)
    np.testing.assert_array_equal(r, 2 * x + before)
    np.testing.assert_array_equal(y, before)
    assert r.flags.writeable and r.base.owner is not x and r.base.owner is not y
    # Identity layout at the boundary: a strided view is refused, not misread.
    with pytest.raises(ValueError, match=r"axpy\(\): argument 1 expects tensor<\?xf32>.*C-contiguous"):
        jit.axpy(2.0, np.arange(10, dtype=np.float32)[::2], np.ones(5, np.float32))


def test_lower_to_llvm_on_text_and_module_in_place():
    from mlir.ir import Context, Module

    src = "func.func @f(%x: i32) -> i32 {\n return %x : i32\n}\n"
    with Context():
        lowered = lower_to_llvm(src)
        assert "llvm.func @f" in str(lowered)
        module = Module.parse(src)
        assert lower_to_llvm(module) is module and "llvm.func @f" in str(module)


def test_lower_to_llvm_on_text_outside_a_context_makes_one():
    from mlir.ir import Context

    lowered = lower_to_llvm("func.func @g(%x: i64) -> i64 {\n return %x : i64\n}\n")
    assert "llvm.func @g" in str(lowered) and isinstance(lowered.context, Context)
    with Context() as context:  # inside a Context, the text is parsed in it
        assert lower_to_llvm("func.func @h() {\n return\n}\n").context is context


# One-shot bufferization leaves sparse tensors to the sparsifier: the default pipeline stops there.
SPARSE = r"""
#CSR = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>
func.func @f(%t: tensor<4x4xf32>) -> tensor<4x4xf32, #CSR> {
  %s = sparse_tensor.convert %t : tensor<4x4xf32> to tensor<4x4xf32, #CSR>
  return %s : tensor<4x4xf32, #CSR>
}
"""


def test_pass_failure_names_pipeline_and_writes_a_reproducer():
    with pytest.raises(LoweringError) as info:
        JitModule(SPARSE)
    pipeline = TENSOR_PIPELINE
    error = info.value
    text = str(error)
    assert f"pipeline: {pipeline}" in text and error.pipeline == pipeline
    assert error.diagnostics and all(d in text for d in error.diagnostics)
    assert "sparse_tensor ops must be bufferized with the sparsifier" in text
    assert error.reproducer and os.path.exists(error.reproducer) and error.reproducer in text
    with open(error.reproducer) as f:
        assert "sparse_tensor.convert" in f.read()  # the input IR, before any pass ran
    command = text.split("reproduce with: ", 1)[1].strip()
    assert "--pass-pipeline=" in command
    run = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "error" in run.stderr
    os.remove(error.reproducer)


LOOP_UPDATING_IN_PLACE = r"""
func.func @twice(%a: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> tensor<?xf32> {
    %s = arith.addf %acc, %acc : tensor<?xf32>
    scf.yield %s : tensor<?xf32>
  }
  return %r : tensor<?xf32>
}
"""


def test_loops_carrying_tensors_are_not_fused():
    """Fused, the loop's update gets a fresh init: a new buffer each iteration, whose deallocation
    needs i1 memrefs (MLIR 22 stops there); unfused, the update stays in place."""
    jit = JitModule(TENSORS + LOOP_UPDATING_IN_PLACE)  # one loop is enough for the whole module
    assert jit.pipeline == TENSOR_LOOP_PIPELINE and "linalg-fuse-elementwise-ops" not in jit.pipeline
    assert "convert-elementwise-to-linalg" in jit.pipeline and "linalg-fuse-elementwise-ops" in TENSOR_PIPELINE
    np.testing.assert_array_equal(jit.twice(np.arange(4, dtype=np.float32), 3), np.arange(4) * 8)
    np.testing.assert_array_equal(jit.axpy(2.0, np.ones(3, np.float32), np.ones(3, np.float32)), [3, 3, 3])
    if (MLIR_MAJOR or 0) < MIN_MLIR_FOR_I1_MEMREF:
        with pytest.raises(LoweringError, match=r"memref\.(load|store) of i1") as info:
            JitModule(LOOP_UPDATING_IN_PLACE, pipeline=TENSOR_PIPELINE)
        os.remove(info.value.reproducer)


def test_top_level_passes_of_a_pipeline():
    assert top_level_passes("builtin.module(a,b{x=1,2},c(d,e),f)") == ["a", "b{x=1,2}", "c(d,e)", "f"]
    assert top_level_passes(" builtin.module( a , b ) ") == ["a", "b"]
    for other in ("func.func(a)", "builtin.module(a,(b)", "builtin.module(a,,b)", "builtin.module(a))"):
        assert top_level_passes(other) is None, other


I1_LOAD = r"""
func.func @first(%m: memref<?xi1>) -> i1 {
  %c0 = arith.constant 0 : index
  %x = memref.load %m[%c0] : memref<?xi1>
  return %x : i1
}
"""


@pytest.mark.skipif((MLIR_MAJOR or 0) >= MIN_MLIR_FOR_I1_MEMREF, reason="i1 memrefs lower here")
@pytest.mark.parametrize(
    "pipeline",
    [
        None,
        "builtin.module(finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)",
    ],
)
def test_i1_memref_access_is_an_error_not_an_abort_before_mlir_23(pipeline):
    with pytest.raises(LoweringError) as info:
        JitModule(I1_LOAD, pipeline=pipeline)
    error = info.value
    assert str(error).startswith("lowering to the LLVM dialect stopped\n")
    assert error.diagnostics[0].endswith('"-":4:8): memref.load of i1') or "memref.load of i1" in error.diagnostics[0]
    assert "MLIR before 23 aborts the whole process" in error.diagnostics[-1]
    os.remove(error.reproducer)


@pytest.mark.mlir_i1_memref
def test_i1_memref_access_lowers_from_mlir_23():
    assert JitModule(I1_LOAD).first(np.array([True, False])) is True
