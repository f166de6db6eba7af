"""check_against: inputs drawn from the signature, faulty kernels found, the report and the replay."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")
pytest.importorskip("hypothesis")

from hypothesis import strategies as st  # noqa: E402
from support.paths import REPO, mlir_input  # noqa: E402

from memref_runtime import JitModule  # noqa: E402
from memref_runtime.differential import DifferentialError, check_against  # noqa: E402
from memref_runtime.testing.differential_inputs import make_plans  # noqa: E402

pytestmark = pytest.mark.jit

STRIDED = "memref<?x?xf32, strided<[?, ?], offset: ?>>"


def add_reference(a, b, out):
    out[...] = a + b


@pytest.fixture(scope="module")
def adds():
    return JitModule(mlir_input("differential_add.mlir"))


# --- the acceptance kernels ----------------------------------------------------------------


def test_right_kernel_passes_over_every_kind_of_layout(adds):
    summary = check_against(adds.add, add_reference, outputs=[2])
    assert summary.examples == 100
    # The layouts the issue asks for all occurred, several times each.
    for kind in ("offset", "negative stride", "zero stride", "gap", "transposed", "empty"):
        assert summary.layouts.get(kind, 0) >= 3, (kind, summary)


def test_off_by_one_is_found(adds, tmp_path):
    with pytest.raises(DifferentialError) as info:
        check_against(adds.add_off_by_one, add_reference, outputs=[2], save_to=str(tmp_path))
    text = str(info.value)
    assert text.startswith("check_against(@add_off_by_one): the function and the reference differ on this example")
    # Minimised: one row, one column is enough to show a column left unwritten.
    assert f"argument 0 ({STRIDED}): float32, shape (1, 1)" in text
    assert f"argument 2 ({STRIDED}) after the call: 1 of 1 elements differ" in text
    assert "first mismatch at (0, 0)" in text
    assert info.value.folder == str(tmp_path) and f"run: python {tmp_path / 'replay.py'}" in text


def test_kernel_ignoring_its_layout_is_found(adds, tmp_path):
    with pytest.raises(DifferentialError) as info:
        check_against(adds.add_ignoring_layout, add_reference, outputs=[2], save_to=str(tmp_path))
    text = str(info.value)
    assert f"argument 2 ({STRIDED}) after the call:" in text
    # The example that shows it is not C-contiguous: its strides or offset say so.
    line = next(x for x in text.splitlines() if x.startswith(f"  argument 0 ({STRIDED})"))
    assert "element strides" in line and "C-contiguous" not in line


def test_replay_script_repeats_the_failure(adds, tmp_path):
    with pytest.raises(DifferentialError):
        check_against(adds.add_ignoring_layout, add_reference, outputs=[2], save_to=str(tmp_path))
    files = sorted(p.name for p in tmp_path.iterdir())
    assert {"module.mlir", "replay.py", "arg0.npy", "arg0_buffer.npy", "expected_arg2.npy"} <= set(files)
    replay = subprocess.run(
        [sys.executable, str(tmp_path / "replay.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert replay.returncode == 1
    assert "AssertionError: argument 2 after the call:" in replay.stderr
    assert "elements differ" in replay.stderr


def test_no_example_compiles_again(adds, monkeypatch):
    import memref_runtime.jit.lowering as lowering
    import memref_runtime.jit.module as jit_module

    calls = []
    monkeypatch.setattr(lowering, "lower_to_llvm", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(jit_module, "lower_printed", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(jit_module, "create_execution_engine", lambda *a, **k: calls.append(a))
    check_against(adds.add, add_reference, outputs=[2], max_examples=30)
    assert calls == []


# --- what is drawn ----------------------------------------------------------------------------

KERNELS = r"""
func.func @matmul(%a: memref<?x?xf64>, %b: memref<?x?xf64>, %c: memref<?x?xf64>) {
  linalg.matmul ins(%a, %b : memref<?x?xf64>, memref<?x?xf64>) outs(%c : memref<?x?xf64>)
  return
}
func.func @scale(%a: tensor<?x?xf32>, %s: f32) -> (tensor<?x?xf32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  %twice = arith.addf %s, %s : f32
  return %r, %twice : tensor<?x?xf32>, f32
}
func.func @iota(%n: index) -> memref<?xi64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.alloc(%n) : memref<?xi64>
  scf.for %i = %c0 to %n step %c1 {
    %x = arith.index_cast %i : index to i64
    memref.store %x, %r[%i] : memref<?xi64>
  }
  return %r : memref<?xi64>
}
func.func @sum_unranked(%u: memref<*xf32>) -> f32 {
  %a = memref.cast %u : memref<*xf32> to memref<?xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    scf.yield %s : f32
  }
  return %r : f32
}
func.func @dynamic_static(%a: memref<?x?xf32>, %b: memref<2x3xf32>, %out: memref<2x3xf32>) {
  linalg.add ins(%a, %b : memref<?x?xf32>, memref<2x3xf32>) outs(%out : memref<2x3xf32>)
  return
}
"""


@pytest.fixture(scope="module")
def kernels():
    return JitModule(KERNELS)


def test_named_sizes_tie_matmul_dimensions(kernels):
    def reference(a, b, c):
        c[...] = c + a @ b

    shapes = {0: ("m", "k"), 1: ("k", "n"), 2: ("m", "n")}
    seen = set()

    def recording(a, b, c):
        seen.add((a.shape, b.shape))
        reference(a, b, c)

    check_against(kernels.matmul, recording, shapes=shapes, max_examples=60)
    assert any(a[0] != a[1] for a, _ in seen)  # not only square matrices
    assert all(a[1] == b[0] for a, b in seen)


def test_dimensions_tie_by_position_and_meet_static_sizes(kernels):
    sig = kernels.dynamic_static.signature
    plans = make_plans(sig, shapes={}, tie_dims=True, ranks={}, outputs=None, bounds=None, strategies={}, max_size=5)
    assert [p.dims for p in plans] == [(2, 3), (2, 3), (2, 3)]  # %a takes the static sizes of %b
    plans = make_plans(
        kernels.matmul.signature,
        shapes={},
        tie_dims=True,
        ranks={},
        outputs=None,
        bounds=None,
        strategies={},
        max_size=5,
    )
    assert [p.dims for p in plans] == [("dim 0", "dim 1")] * 3
    plans = make_plans(
        kernels.matmul.signature,
        shapes={},
        tie_dims=False,
        ranks={},
        outputs=None,
        bounds=None,
        strategies={},
        max_size=5,
    )
    assert len({d for p in plans for d in p.dims}) == 6
    check_against(kernels.dynamic_static, add_reference, max_examples=20)


def test_results_and_scalars_are_compared(kernels, tmp_path):
    summary = check_against(kernels.scale, lambda a, s: (a * s, s + s), bounds=(-10, 10), max_examples=40)
    assert summary.examples == 40
    with pytest.raises(DifferentialError, match=r"result 1 \(f32\): 1 of 1 elements differ"):
        check_against(
            kernels.scale, lambda a, s: (a * s, s * 3), bounds=(1, 10), max_examples=40, save_to=str(tmp_path)
        )


def test_tensor_arguments_are_contiguous_and_must_stay_unchanged(kernels, tmp_path):
    def reference(a, s):
        assert a.flags.c_contiguous
        result = (a * s, s + s)
        a += 1  # a reference that writes into an input is caught as a difference
        return result

    with pytest.raises(DifferentialError, match=r"argument 0 \(tensor<\?x\?xf32>\) after the call"):
        check_against(kernels.scale, reference, bounds=(1, 2), min_size=1, max_examples=10, save_to=str(tmp_path))


def test_index_scalars_default_to_sizes(kernels):
    seen = []
    check_against(kernels.iota, lambda n: seen.append(n) or np.arange(n, dtype=np.int64), max_size=7, max_examples=30)
    assert all(0 <= n <= 7 for n in seen) and max(seen) > 1


def test_unranked_memrefs_need_a_rank(kernels):
    with pytest.raises(
        TypeError,
        match=r"argument 0 is memref<\*xf32>, whose rank the signature does not say; "
        r"pass ranks=\{0: <rank>\}",
    ):
        check_against(kernels.sum_unranked, lambda a: a.sum())
    check_against(
        kernels.sum_unranked, lambda a: a.sum(dtype=np.float32), ranks={0: 1}, bounds=(-4, 4), max_examples=30
    )


def test_strategies_and_bounds(kernels):
    seen = []

    def reference(a, s):
        seen.append(s)
        return a * s, s + s

    check_against(
        kernels.scale, reference, strategies={1: st.just(np.float32(0.5))}, bounds={0: (-1, 1)}, max_examples=20
    )
    assert set(seen) == {np.float32(0.5)}


def test_faults_in_the_function_or_reference_are_reported(kernels, tmp_path):
    with pytest.raises(DifferentialError, match="the reference raised ZeroDivisionError"):
        check_against(kernels.scale, lambda a, s: 1 // 0, max_examples=5, save_to=str(tmp_path / "a"))
    with pytest.raises(DifferentialError, match=r"the reference raised TypeError: the reference must return 2 results"):
        check_against(kernels.scale, lambda a, s: a * s, max_examples=5, save_to=str(tmp_path / "b"))
    assert "print(jit.call('scale', *args))" in (tmp_path / "b" / "replay.py").read_text()


def test_bad_arguments(kernels, adds):
    with pytest.raises(TypeError, match="expected a function of a JitModule"):
        check_against(lambda: None, add_reference)
    with pytest.raises(ValueError, match=r"shapes names argument 7; @add has arguments 0 to 2"):
        check_against(adds.add, add_reference, shapes={7: ("n",)})
    with pytest.raises(ValueError, match=r"shapes\[0\] has 1 entries, argument 0 .* has rank 2"):
        check_against(adds.add, add_reference, shapes={0: ("n",)})
    with pytest.raises(ValueError, match="min_size <= max_size"):
        check_against(adds.add, add_reference, min_size=3, max_size=2)


def test_a_plain_invoker_works_too(adds):
    a = np.ones((2, 2), np.float32)
    adds.add(a, a, a.copy())  # jit.add is now the plain function, not the JitFunction
    check_against(adds.add, add_reference, outputs=[2], max_examples=10)


def test_missing_hypothesis_is_a_clear_import_error(adds, monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(
        ImportError, match="draws its inputs with Hypothesis, which is not installed.*pip install hypothesis"
    ):
        check_against(adds.add, add_reference)


# --- the seed scenarios of the lit suite ------------------------------------------------------


def test_seed_dynamic_adds(adds):
    """lit_tests/dynamic_add.py's kernels, over every size rather than three."""
    source = (REPO / "lit_tests" / "dynamic_add.py").read_text()
    jit = JitModule(source.split('r"""', 1)[1].split('"""', 1)[0])
    check_against(jit.add_dynamic, add_reference, max_examples=50)
    check_against(jit.add_dynamic_static, add_reference, max_examples=20)


def test_seed_fill_through_strided_views():
    """lit_tests/strided_views_write.py's @fill: view[i, j] = 10 * i + j + 1, on drawn views."""
    source = (REPO / "lit_tests" / "strided_views_write.py").read_text()
    jit = JitModule(source.split('r"""', 1)[1].split('"""', 1)[0])

    def fill(view):
        i, j = np.indices(view.shape)
        view[...] = 10 * i + j + 1

    summary = check_against(jit.fill, fill, max_size=6)
    assert summary.layouts.get("negative stride", 0) > 0 and summary.layouts.get("transposed", 0) > 0


SUBVIEWS = r"""
// Rows 1.. of %a into rows ..m-2 of %out (both m x n): subviews of two strided views.
func.func @shift_up(%a: memref<?x?xf64, strided<[?, ?], offset: ?>>, %out: memref<?x?xf64, strided<[?, ?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c0 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %n = memref.dim %a, %c1 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %rows = arith.subi %m, %c1 : index
  %from = memref.subview %a[1, 0] [%rows, %n] [1, 1]
      : memref<?x?xf64, strided<[?, ?], offset: ?>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
  %to = memref.subview %out[0, 0] [%rows, %n] [1, 1]
      : memref<?x?xf64, strided<[?, ?], offset: ?>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
  memref.copy %from, %to : memref<?x?xf64, strided<[?, ?], offset: ?>> to memref<?x?xf64, strided<[?, ?], offset: ?>>
  return
}
// out[i] = a[2 * i] for the first ceil(n / 2) elements: a subview with a step.
func.func @evens(%a: memref<?xf32, strided<[?], offset: ?>>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %a, %c0 : memref<?xf32, strided<[?], offset: ?>>
  %n1 = arith.addi %n, %c1 : index
  %h = arith.divui %n1, %c2 : index
  %from = memref.subview %a[0] [%h] [2] : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32, strided<[?], offset: ?>>
  %to = memref.subview %out[0] [%h] [1] : memref<?xf32> to memref<?xf32, strided<[1]>>
  memref.copy %from, %to : memref<?xf32, strided<[?], offset: ?>> to memref<?xf32, strided<[1]>>
  return
}
"""


def test_seed_subviews():
    jit = JitModule(SUBVIEWS)

    def shift_up(a, out):
        out[:-1] = a[1:]

    def evens(a, out):
        out[: (len(a) + 1) // 2] = a[::2]

    summary = check_against(jit.shift_up, shift_up, outputs=[1], min_size=1)
    assert summary.layouts.get("negative stride", 0) > 0
    check_against(jit.evens, evens, outputs=[1], min_size=1)
