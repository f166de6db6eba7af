"""Opt levels: JitModule and memref_runtime.testing follow the suite's default (env
MEMREF_RUNTIME_OPT_LEVEL, which `lit -D opt_level=N` sets), an explicit level wins, and the
level reaches the compiled code; the results stay the same at every level."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest
from support.paths import LIT, REPO

pytest.importorskip("mlir.execution_engine")

from memref_runtime import JitModule  # noqa: E402
from memref_runtime.settings import OPT_LEVEL_ENV, resolve_opt_level  # noqa: E402
from memref_runtime.testing import check_close, execution_engine, lower  # noqa: E402

pytestmark = pytest.mark.jit


ADD = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) attributes { llvm.emit_c_interface } {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
"""


def object_code(engine, tmp_path, name: str) -> bytes:
    engine.raw_lookup("_mlir_ciface_add")  # links
    path = tmp_path / f"{name}.o"
    engine.dump_to_object_file(str(path))
    return path.read_bytes()


def jit_code(tmp_path, **options) -> tuple[int, bytes]:
    jit = JitModule(ADD, **options)
    return jit.opt_level, object_code(jit.engine, tmp_path, f"jit{options}")


def test_default_is_the_engines_and_follows_the_environment(monkeypatch):
    monkeypatch.delenv(OPT_LEVEL_ENV, raising=False)
    assert JitModule(ADD).opt_level == 2
    for level in (0, 1, 3):
        monkeypatch.setenv(OPT_LEVEL_ENV, str(level))
        assert JitModule(ADD).opt_level == level
        assert JitModule(ADD, opt_level=2).opt_level == 2  # explicit wins


def test_the_level_reaches_the_code(monkeypatch, tmp_path):
    monkeypatch.delenv(OPT_LEVEL_ENV, raising=False)
    codes = {level: jit_code(tmp_path, opt_level=level)[1] for level in (0, 3)}
    assert codes[0] != codes[3]  # the comparison below can tell levels apart
    for level in (0, 3):
        monkeypatch.setenv(OPT_LEVEL_ENV, str(level))
        assert jit_code(tmp_path) == (level, codes[level])


def test_testing_engines_follow_the_default(monkeypatch, tmp_path):
    from mlir.ir import Context, Module

    def engine_code(**options):
        with Context():
            return object_code(execution_engine(lower(Module.parse(ADD)), **options), tmp_path, f"engine{options}")

    monkeypatch.delenv(OPT_LEVEL_ENV, raising=False)
    codes = {level: engine_code(opt_level=level) for level in (0, 3)}
    monkeypatch.setenv(OPT_LEVEL_ENV, "3")
    assert engine_code() == codes[3]
    monkeypatch.setenv(OPT_LEVEL_ENV, "0")
    assert engine_code() == codes[0]


@pytest.mark.parametrize("bad", [4, -1, 2.5, True, "2"])
def test_bad_levels_are_refused(bad):
    with pytest.raises(
        ValueError,
        match=re.escape("opt_level: expected 0, 1, 2, 3 or None (the default, ")
        + r"\d here\), got "
        + re.escape(repr(bad)),
    ):
        JitModule(ADD, opt_level=bad)


def test_bad_environment_is_refused(monkeypatch):
    monkeypatch.setenv(OPT_LEVEL_ENV, "fast")
    with pytest.raises(ValueError, match=f"{OPT_LEVEL_ENV}: expected an opt level 0, 1, 2 or 3, got 'fast'"):
        JitModule(ADD)
    assert resolve_opt_level(1) == 1


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_results_are_the_same_at_every_level(level):
    """A reduction and an element-wise kernel, vectorized or not, against NumPy at each level."""
    jit = JitModule(
        ADD
        + r"""
func.func @dot(%a: tensor<?xf64>, %b: tensor<?xf64>, %acc: tensor<f64>) -> tensor<f64> {
  %r = linalg.dot ins(%a, %b : tensor<?xf64>, tensor<?xf64>) outs(%acc : tensor<f64>) -> tensor<f64>
  return %r : tensor<f64>
}
""",
        opt_level=level,
    )
    rng = np.random.default_rng(level)
    a, b = rng.standard_normal(1001).astype(np.float32), rng.standard_normal(1001).astype(np.float32)
    out = np.empty_like(a)
    jit.add(a, b, out)
    check_close(f"add at O{level}", out, a + b)
    x, y = rng.standard_normal(513), rng.standard_normal(513)
    check_close(f"dot at O{level}", jit.dot(x, y, np.array(0.0)), np.array(x @ y))


@pytest.mark.skipif(LIT is None, reason="lit is not installed")
@pytest.mark.parametrize("level", [None, 0, 3])
def test_lit_D_opt_level_reaches_the_test_process(level, tmp_path):
    """lit_tests/opt_level.py checks, under the LEVEL<N> prefix, that the level it runs at is N."""
    args = [LIT, "-v", "-a", f"-Dexec_root={tmp_path}"] + ([f"-Dopt_level={level}"] if level is not None else [])
    out = subprocess.run(args + ["lit_tests/opt_level.py"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert "PASS: memref-runtime :: lit_tests/opt_level.py" in out.stdout, out.stdout + out.stderr
    # FileCheck matched the LEVEL<N> lines ("default opt level: N", "JitModule().opt_level: N").
    assert f"--check-prefixes=CHECK,LEVEL{2 if level is None else level}" in out.stdout
