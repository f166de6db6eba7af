"""memref-bisect and bisect_pipeline at the LLVM level: a module that passes at -O0 and fails
at -O3 (fastmath<reassoc> on a sequential sum, checked bit for bit), for which the pipeline is
not to blame, gets LLVM's optimization pass and the function it ran on named."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.providers import needs_wheel_tools

from memref_runtime import JitModule
from memref_runtime.culprit import llvm_level
from memref_runtime.culprit.bisect import bisect_pipeline
from memref_runtime.culprit.pipeline import cut, prepared

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "mlir_inputs" / "culprit_fastmath_sum.mlir"
BIN = Path(sys.executable).parent
PIPELINE = "builtin.module(canonicalize,cse)"
# Large values that cancel and small ones that survive only when added in order: in order the
# sum is 320, with the vectorizer's partial sums it is not.
X = np.tile(np.array([1, 1e8, 1, -1e8, 3, 7, -2, 5e7, 1, -5e7], np.float32), 40)
# The LLVM-level search runs the wheels' mlir-translate and opt.
pytestmark = needs_wheel_tools
VECTORIZERS = {"loop-vectorize", "slp-vectorizer", "vector-combine"}


def in_order(x: np.ndarray) -> np.float32:
    total = np.float32(0)
    for v in x:
        total = np.float32(total + v)
    return total


def check_sum(jit):
    got = jit.sum(X)
    assert got == in_order(X), f"sum {got}, in order {in_order(X)}"


def test_the_premise_passes_at_O0_and_fails_at_O3():
    source = MODULE.read_text()
    assert in_order(X) == 320.0
    assert JitModule(source, opt_level=0).sum(X) == 320.0
    assert JitModule(source, opt_level=3).sum(X) != 320.0


def test_an_llvm_pass_and_its_function_are_named():
    result = bisect_pipeline(MODULE, PIPELINE, check_sum, opt_level=3)
    match = re.fullmatch(r"culprit: llvm (\S+) on (\S+)", result.line)
    assert match and result.level == "llvm", result.report()
    assert match.group(1) in VECTORIZERS and "sum" in match.group(2)
    assert (result.culprit, result.function) == match.groups()
    # How it was decided: no step of the pipeline fails too, -O0 passes, then opt's passes.
    assert result.trail[0].startswith("every step + default lowering, -O3: FAILS")
    assert result.trail[1].startswith("every step + default lowering, again (is the check deterministic?), -O3: FAILS")
    assert result.trail[2].startswith("no step + default lowering, -O3: FAILS")
    assert result.trail[3] == "every step + default lowering, -O0: passes"
    assert result.runs == len(result.trail) < 20  # ~215 passes: a binary search, not one run each


def test_the_named_pass_is_where_the_result_changes():
    """Independently of the bisection: opt with the passes up to the culprit's number fails, one
    fewer passes (opt's output loaded back and JIT-compiled at -O0)."""
    result = bisect_pipeline(MODULE, PIPELINE, check_sum, opt_level=3)
    source = prepared(MODULE.read_text())
    llvm_ir = llvm_level.to_llvm_ir(cut(source, []).lowered)
    assert result.before == llvm_ir

    def summed(limit: int) -> float:
        optimized = llvm_level.optimize(llvm_ir, 3, limit)
        return JitModule(source, lowered=llvm_level.to_llvm_dialect(optimized.ir), opt_level=0).sum(X)

    assert summed(result.position - 1) == 320.0
    assert summed(result.position) != 320.0
    assert llvm_level.pass_number(llvm_level.optimize(llvm_ir, 3, result.position), result.position) == (
        result.culprit,
        result.function,
    )


def test_no_culprit_when_it_fails_at_O0_too():
    source = MODULE.read_text().replace("fastmath<reassoc>", "")

    def wrong_on_purpose(jit):
        assert jit.sum(X) == 321.0

    result = bisect_pipeline(source, PIPELINE, wrong_on_purpose, opt_level=3)
    assert result.line.startswith(
        "no culprit: it fails with no step of the pipeline (the default lowering alone), and at -O0 too"
    )


CHECK_SCRIPT = """\
import sys
import numpy as np
from memref_runtime import JitModule

source, candidate = sys.argv[1:]
with open(source) as f, open(candidate) as g:
    jit = JitModule(f.read(), lowered=g.read())  # at MEMREF_RUNTIME_OPT_LEVEL, which memref-bisect sets
x = np.tile(np.array([1, 1e8, 1, -1e8, 3, 7, -2, 5e7, 1, -5e7], np.float32), 40)
sys.exit(0 if jit.sum(x) == 320.0 else 1)
"""


@pytest.mark.harness  # memref-reduce, memref-bisect, lit or pytest in a subprocess
def test_memref_bisect_names_it_and_writes_the_llvm_ir(tmp_path):
    script = tmp_path / "check_sum.py"
    script.write_text(CHECK_SCRIPT)
    out = tmp_path / "culprit_input.ll"
    done = subprocess.run(
        [
            str(BIN / "memref-bisect"),
            str(MODULE),
            f"--pass-pipeline={PIPELINE}",
            f"--test={sys.executable}",
            f"--test-arg={script}",
            f"--test-arg={MODULE}",
            "--opt-level=3",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    match = re.fullmatch(r"culprit: llvm (\S+) on (\S+)", first)
    assert match and match.group(1) in VECTORIZERS, done.stdout
    assert "define float @sum(" in out.read_text()
    reproduce = next(line for line in done.stdout.splitlines() if line.strip().startswith("reproduce:"))
    assert "-opt-bisect-limit=" in reproduce and str(out) in reproduce
