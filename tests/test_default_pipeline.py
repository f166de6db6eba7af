"""The default pipeline on ordinary tensor and linalg code: each kernel of tests/support/tensor_corpus.py
is compiled by JitModule with no options and checked against NumPy with check_close; what
needs the runner-utils libraries, and what MLIR 22 cannot lower, fails with a clear error."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from support.engine import MIN_MLIR_FOR_I1_MEMREF, MLIR_MAJOR  # noqa: E402
from support.tensor_corpus import KERNELS  # noqa: E402

from memref_runtime import JitModule, LoweringError  # noqa: E402
from memref_runtime.jit.runner_utils import runner_utils_libraries  # noqa: E402
from memref_runtime.testing import check_close  # noqa: E402

pytestmark = pytest.mark.jit


def as_tuple(value, count):
    return () if count == 0 else (value,) if count == 1 else tuple(value)


@pytest.mark.parametrize(
    "kernel", [pytest.param(k, id=k.name, marks=[pytest.mark.mlir_i1_memref] * k.i1_memrefs) for k in KERNELS]
)
def test_kernel_matches_numpy(kernel):
    jit = JitModule(kernel.mlir)  # no pipeline, no opt level, no libraries: the defaults
    rng = np.random.default_rng(abs(hash(kernel.name)) % 2**32)
    args = kernel.inputs(rng)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    count = len(jit.f.signature.results)
    results = as_tuple(jit.f(*args), count)
    expected = as_tuple(kernel.reference(*copies), count)
    assert len(results) == len(expected) == count
    for i, (got, want) in enumerate(zip(results, expected)):
        want = np.asarray(want)
        got = np.asarray(got, want.dtype) if np.isscalar(got) else got
        check_close(f"{kernel.name} result {i}", got, want)
    for i, (got, want) in enumerate(zip(args, copies)):  # inputs untouched, outputs written
        if isinstance(got, np.ndarray):
            check_close(f"{kernel.name} argument {i}", got, want)


def test_corpus_covers_the_kinds_of_code_the_default_pipeline_takes():
    assert len(KERNELS) >= 30
    text = "\n".join(k.mlir for k in KERNELS)
    for op in (
        "arith.addf",
        "math.exp",
        "complex.mul",
        "tensor.extract_slice",
        "tensor.insert_slice",
        "tensor.pad",
        "tensor.concat",
        "tensor.expand_shape",
        "tensor.collapse_shape",
        "tensor.reshape",
        "linalg.matmul",
        "linalg.generic",
        "linalg.reduce",
        "arith.constant dense",
        "scf.for",
        "iter_args",
        "xf16>",
        "?x?x?x?",
        "memref.copy",
    ):
        assert op in text, op


@pytest.mark.skipif((MLIR_MAJOR or 0) >= MIN_MLIR_FOR_I1_MEMREF, reason="i1 memrefs lower here")
def test_i1_buffers_stop_the_lowering_with_an_error_before_mlir_23():
    """Where MLIR 22 would abort the process (an i1 result stored element by element), a
    LoweringError names the accesses instead."""
    kernel = next(k for k in KERNELS if k.i1_memrefs)
    with pytest.raises(LoweringError, match=r"lowering to the LLVM dialect stopped") as info:
        JitModule(kernel.mlir)
    text = str(info.value)
    assert "memref.store of i1" in text and "MLIR before 23 aborts the whole process" in text
    assert "arith.extui" in text and info.value.reproducer
    os.remove(info.value.reproducer)


LOOP_YIELDING_NEW_TENSORS = r"""
func.func @f(%t: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %t) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %x = tensor.extract %acc[%c0] : tensor<4xf32>
    %one = arith.constant 1.0 : f32
    %y = arith.addf %x, %one : f32
    %f = linalg.fill ins(%y : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %f : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
"""


def test_loop_yielding_a_new_tensor_each_iteration():
    """Bufferized with allow-return-allocs-from-loops; deallocating the yielded buffers needs i1
    memrefs, which MLIR 22 cannot lower: there, a LoweringError says so."""
    if (MLIR_MAJOR or 0) < MIN_MLIR_FOR_I1_MEMREF:
        with pytest.raises(LoweringError, match="memref.(load|store) of i1") as info:
            JitModule(LOOP_YIELDING_NEW_TENSORS)
        os.remove(info.value.reproducer)
        return
    jit = JitModule(LOOP_YIELDING_NEW_TENSORS)
    check_close("loop", jit.f(np.array([2, 0, 0, 0], np.float32), 3), np.full(4, 5, np.float32))


PRINT_MEMREF = r"""
func.func private @printMemrefF32(memref<*xf32>) attributes { llvm.emit_c_interface }
func.func @show(%a: memref<?xf32>) {
  %u = memref.cast %a : memref<?xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
"""


def test_print_memref_links_by_default_where_the_runner_utils_ship(capfd):
    jit = JitModule(PRINT_MEMREF)
    if not runner_utils_libraries():
        with pytest.raises(
            RuntimeError,
            match=r"printMemrefF32 is defined by MLIR's runner-utils libraries "
            r"\(libmlir_c_runner_utils\.so, libmlir_runner_utils\.so\), which the "
            r"'\w+' bindings do not ship; pass shared_libs=",
        ):
            jit.show(np.zeros(2, np.float32))
        return
    assert [p.rsplit("/", 1)[-1] for p in jit.shared_libs] == ["libmlir_c_runner_utils.so", "libmlir_runner_utils.so"]
    jit.show(np.array([1.5, -2.0], np.float32))
    from memref_runtime.testing import flush_c_stdout

    flush_c_stdout()
    assert "[1.5,  -2]" in capfd.readouterr().out


def test_memref_copy_works_without_the_runner_utils():
    """runner_utils=False (and torch-mlir, which ships none): JitModule gives memrefCopy itself."""
    kernel = next(k for k in KERNELS if k.name == "memref_copy_strided_to_contiguous")
    jit = JitModule(kernel.mlir, runner_utils=False)
    assert jit.shared_libs == ()
    a = np.arange(48, dtype=np.float32).reshape(6, 8)[1::2, ::-3]
    check_close("memrefCopy fallback", jit.f(a), a.copy())
    empty = np.zeros((0, 3), np.float32)
    assert jit.f(empty).shape == (0, 3)


def test_link_error_names_the_runner_utils_a_symbol_needs():
    """In a fresh process: once a JitModule loaded the runner-utils, every later one sees them."""
    script = (
        f"import numpy as np\nfrom memref_runtime import JitModule\n"
        f"jit = JitModule({PRINT_MEMREF!r}, runner_utils=False)\n"
        "try:\n    jit.show(np.zeros(2, np.float32))\nexcept RuntimeError as e:\n    print(e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert "Symbols not found" in out.stdout and "printMemrefF32" in out.stdout, out.stdout + out.stderr
    assert (
        "printMemrefF32 is defined by MLIR's runner-utils libraries (libmlir_c_runner_utils.so, "
        "libmlir_runner_utils.so)"
    ) in out.stdout and "MEMREF_RUNTIME_RUNNER_UTILS" in out.stdout


def test_shared_libs_are_checked_and_come_first(tmp_path):
    with pytest.raises(
        TypeError,
        match=r"shared_libs: expected a list of paths, got str 'libfoo.so'; "
        r"write shared_libs=\[path\]",
    ):
        JitModule(PRINT_MEMREF, shared_libs="libfoo.so")
    with pytest.raises(ValueError, match=r"shared_libs: '/no/such/libfoo.so' is not a file"):
        JitModule(PRINT_MEMREF, shared_libs=["/no/such/libfoo.so"])
    libs = runner_utils_libraries()
    if libs:  # given explicitly too: once, in the order given
        jit = JitModule(PRINT_MEMREF, shared_libs=[libs[-1]])
        assert jit.shared_libs == (libs[-1],) + libs[:-1]


def test_runner_utils_from_the_environment(monkeypatch, tmp_path):
    from memref_runtime.jit.runner_utils import ENV_VAR

    monkeypatch.setenv(ENV_VAR, "")
    runner_utils_libraries.cache_clear()
    try:
        assert runner_utils_libraries() == ()
        assert JitModule(PRINT_MEMREF).shared_libs == ()
        missing = str(tmp_path / "libmlir_c_runner_utils.so")
        monkeypatch.setenv(ENV_VAR, missing)
        runner_utils_libraries.cache_clear()
        with pytest.raises(ValueError, match=f"{ENV_VAR}: '{missing}' is not a file"):
            JitModule(PRINT_MEMREF)
    finally:
        monkeypatch.undo()
        runner_utils_libraries.cache_clear()
