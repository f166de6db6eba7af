"""memref-bisect and bisect_pipeline: the pipeline level (docs/failures.md, "Find the culprit").

Three planted cases, each a pass that changes results put into a 20-odd-pass pipeline that
otherwise lowers correctly: memref-bisect must name that pass and nothing else. The expected
results are computed here with NumPy, in the order the MLIR adds (a sequential float32 sum), so
that a reordered sum differs."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from support.providers import PROVIDER, needs_wheel_tools

from memref_runtime.culprit.bisect import bisect_pipeline
from memref_runtime.culprit.pipeline import PipelineError, Step, split_pipeline
from memref_runtime.jit.lowering import LLVM_LOWERING_PASSES

REPO = Path(__file__).resolve().parent.parent
MODULE = REPO / "mlir_inputs" / "culprit_bisect.mlir"
BIN = Path(sys.executable).parent

# Large values that cancel and small ones that survive only when added in order.
PATTERN = [1, 1e8, 1, -1e8, 3, 7, -2, 5e7, 1, -5e7, 2, 2, 1e7, -1e7, 1, 1]
X16 = np.array(PATTERN, np.float32)
X64 = np.array(PATTERN * 4, np.float32)
X_RELU = np.array([-2.0, -0.5, 0.0, 1.5, 3.0], np.float32)

OPTIONAL = ["canonicalize", "cse", "func.func(loop-invariant-code-motion)"]
VECTORIZED = "affine-super-vectorize{virtual-vector-size=4 vectorize-reductions}"
VECTORIZE = f"func.func({VECTORIZED})"
REASSOCIATE = "convert-vector-to-llvm{reassociate-fp-reductions}"


def sequential_sum(x: np.ndarray) -> np.float32:
    total = np.float32(0)
    for v in x:
        total = np.float32(total + v)
    return total


def pipeline(*, insert: dict | None = None, replace: dict | None = None) -> str:
    """OPTIONAL, then the default lowering's passes; `insert` puts a pass before the one named,
    `replace` swaps one for another."""
    steps = []
    for step in OPTIONAL + list(LLVM_LOWERING_PASSES):
        steps += [insert[step]] if insert and step in insert else []
        steps.append((replace or {}).get(step, step))
    return "builtin.module(" + ",".join(steps) + ")"


def check_vsum(jit):
    assert jit.vsum(X16) == sequential_sum(X16), "vsum"


def check_asum(jit):
    assert jit.asum(X64) == sequential_sum(X64), "asum"


def check_relu(jit):
    out = np.zeros_like(X_RELU)
    jit.relu(X_RELU, out)
    np.testing.assert_array_equal(out, np.maximum(X_RELU, 0))


PLANTED_PASS = '''\
"""A wrong pass, planted by tests/test_culprit_bisect.py: every arith.maximumf becomes arith.minimumf."""
from mlir import ir


def max_to_min(op, pass_):
    found = []

    def visit(inner):
        if inner.name == "arith.maximumf":
            found.append(inner)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    for old in found:
        with ir.InsertionPoint(old), old.location:
            new = ir.Operation.create("arith.minimumf", results=[old.results[0].type], operands=list(old.operands))
        old.results[0].replace_all_uses_with(new.results[0])
        old.erase()
'''

# What memref-bisect runs on each candidate, in mlir-reduce's convention: mlir-runner runs @main
# of the candidate (the module lowered to the LLVM dialect); exit 1 (still failing) while it
# prints other than the expected text, the script's first argument.
CHECK_SCRIPT = """\
#!/bin/sh
"{runner}" -O0 -e main -entry-point-result=void -shared-libs="{libs}" "$2" | cmp -s - "$1" || exit 1
"""


def expected_output() -> str:
    """What @main prints when @vsum, @asum and @relu are right, from NumPy's values."""
    values = [sequential_sum(X16), sequential_sum(X64)]
    relu = ", ".join(f"{v:g}" for v in np.maximum(X_RELU, 0))
    return "".join(f"{v:g}\n" for v in values) + f"( {relu} )\n"


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """The folder of the planted Python pass, the check script and the expected output; the
    folder is on sys.path and PYTHONPATH."""
    if PROVIDER != "mlir":
        pytest.skip(f"the check script runs the xtc wheels' mlir-runner; the provider in use is {PROVIDER!r}")
    from memref_runtime.culprit.tools import tool
    from memref_runtime.jit.runner_utils import runner_utils_libraries

    (tmp_path / "planted_passes.py").write_text(PLANTED_PASS)
    script = tmp_path / "check_main.sh"
    script.write_text(
        CHECK_SCRIPT.format(
            runner=Path(tool("mlir-translate")).with_name("mlir-runner"), libs=",".join(runner_utils_libraries())
        )
    )
    script.chmod(0o755)
    (tmp_path / "expected.txt").write_text(expected_output())
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    return tmp_path


def test_the_expected_output_is_what_numpy_computes():
    # In order: 14 for the 16 values, 62 for them four times over (the running total carries).
    assert expected_output() == "14\n62\n( 0, 0, 0, 1.5, 3 )\n"


def memref_bisect(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(BIN / "memref-bisect"),
            str(MODULE),
            f"--test={folder / 'check_main.sh'}",
            f"--test-arg={folder / 'expected.txt'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )


CASES = {
    "reassociated vector reduction": (REASSOCIATE, pipeline(replace={"convert-vector-to-llvm": REASSOCIATE}), ()),
    "Python pass max -> min": (
        "plant-max-to-min",
        pipeline(insert={"func.func(loop-invariant-code-motion)": "plant-max-to-min"}),
        ("--python-pass=plant-max-to-min=planted_passes:max_to_min",),
    ),
    # Named as spelled inside its op pipeline, func.func(...).
    "vectorized affine reduction": (VECTORIZED, pipeline(insert={"lower-affine": VECTORIZE}), ()),
}


@pytest.mark.parametrize("case", list(CASES))
def test_memref_bisect_names_the_planted_pass_and_nothing_else(planted, case):
    culprit, text, extra = CASES[case]
    done = memref_bisect(planted, f"--pass-pipeline={text}", "--no-llvm", *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    verdicts = [line for line in done.stdout.splitlines() if "culprit" in line.split(":")[0]]
    assert verdicts == [f"culprit: {culprit}"], done.stdout
    assert "decided by" in done.stdout and "check runs in" in done.stdout


def test_without_the_planted_pass_there_is_no_culprit(planted):
    done = memref_bisect(planted, f"--pass-pipeline={pipeline()}")
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "no culprit: the check passes with the whole pipeline at -O2"


@needs_wheel_tools  # MLIR 22's default lowering: a newer one already reassociates at -O3
def test_twenty_passes_take_a_logarithmic_number_of_runs():
    text = pipeline(replace={"convert-vector-to-llvm": REASSOCIATE})
    n = len(split_pipeline(text))
    assert n == 20
    result = bisect_pipeline(MODULE, text, check_vsum, llvm=False)
    assert result.line == f"culprit: {REASSOCIATE}" and result.position == 9
    # The whole pipeline twice (is the check deterministic?), no step, then a binary search.
    assert result.runs == len(result.trail) <= 3 + math.ceil(math.log2(n)) == 8
    assert result.trail[-2:] == [
        "steps 1-8 + default lowering, -O2: passes",
        "steps 1-9 + default lowering, -O2: FAILS (AssertionError: vsum)",
    ]
    assert "convert-vector-to-llvm{reassociate-fp-reductions}" in result.reproduce
    assert "vector.reduction" in result.before  # the culprit's input still has the reduction


@pytest.mark.parametrize(
    "check, culprit, text",
    [
        (check_relu, "plant-max-to-min", pipeline(insert={"convert-scf-to-cf": "plant-max-to-min"})),
        (check_asum, VECTORIZED, pipeline(insert={"lower-affine": VECTORIZE})),
    ],
)
def test_python_checks_and_passes(planted, check, culprit, text):
    from planted_passes import max_to_min

    result = bisect_pipeline(MODULE, text, check, python_passes={"plant-max-to-min": max_to_min}, llvm=False)
    assert (result.line, result.level) == (f"culprit: {culprit}", "pipeline"), result.report()
    assert result.runs <= 3 + math.ceil(math.log2(21))


def test_an_against_check_bisects_with_its_inputs(planted):
    from planted_passes import max_to_min

    from memref_runtime.culprit import Against

    def reference(x, out):
        out[...] = np.maximum(x, 0)

    check = Against("relu", reference, inputs=[X_RELU, np.zeros_like(X_RELU)])
    text = pipeline(insert={"convert-scf-to-cf": "plant-max-to-min"})
    result = bisect_pipeline(MODULE, text, check, python_passes={"plant-max-to-min": max_to_min}, llvm=False)
    assert result.line == "culprit: plant-max-to-min"
    assert "argument 1 of @relu: 4 of 5 elements differ" in result.trail[0]


def test_a_check_that_is_not_deterministic_is_named(tmp_path):
    flips = tmp_path / "flips"

    def check(jit):
        flips.write_text(str(int(flips.read_text() or 0) + 1) if flips.exists() else "1")
        assert int(flips.read_text()) != 1, "the first run fails, later ones pass"

    result = bisect_pipeline(MODULE, pipeline(), check, llvm=False)
    assert result.line == "no culprit: the check is not deterministic: the same candidate failed, then passed"
    assert not result.found and result.runs == 2


def test_steps_the_default_lowering_cannot_finish_are_told_apart_by_leaving_them_out(planted):
    """Between a pass that adds an op no pass of the default lowering lowers (gpu.barrier) and
    the one that removes it, no cut is a candidate; the planted pass between them is found by
    leaving each step out of the failing cut in turn."""
    (planted / "barrier.py").write_text(
        textwrap.dedent("""\
        from mlir import ir

        def add(op, pass_):
            body = op.regions[0].blocks[0]
            for func in body.operations:
                if func.operation.name == "func.func" and func.operation.regions[0].blocks:
                    first = func.operation.regions[0].blocks[0].operations[0]
                    with ir.InsertionPoint(first), first.location:
                        ir.Operation.create("gpu.barrier")

        def remove(op, pass_):
            found = []
            op.walk(lambda o: (found.append(o) if o.name == "gpu.barrier" else None) or ir.WalkResult.ADVANCE,
                    ir.WalkOrder.PRE_ORDER)
            for o in found:
                o.erase()
        """)
    )
    import barrier
    from planted_passes import max_to_min

    text = "builtin.module(canonicalize,add-barrier,plant-max-to-min,remove-barrier,cse)"
    passes = {"add-barrier": barrier.add, "plant-max-to-min": max_to_min, "remove-barrier": barrier.remove}
    result = bisect_pipeline(MODULE, text, check_relu, python_passes=passes, llvm=False)
    assert result.line == "culprit: plant-max-to-min", result.report()
    assert "pass without this step alone" in result.notes[0]
    assert any(
        "not a candidate, the default lowering cannot finish it" in t and "gpu.barrier" in t for t in result.trail
    )


def test_pipelines_open_into_steps():
    steps = split_pipeline(
        "builtin.module(canonicalize,func.func(cse,loop-invariant-code-motion),"
        "convert-vector-to-llvm{reassociate-fp-reductions},func.func(scf-forall-to-for))"
    )
    assert [(s.spelled, s.runnable) for s in steps] == [
        ("canonicalize", "canonicalize"),
        ("cse", "func.func(cse)"),
        ("loop-invariant-code-motion", "func.func(loop-invariant-code-motion)"),
        (REASSOCIATE, REASSOCIATE),
        ("scf-forall-to-for", "func.func(scf-forall-to-for)"),
    ]
    assert split_pipeline("builtin.module(p)", {"p": print})[0] == Step("p", (), print)
    with pytest.raises(PipelineError, match="Python pass 'p' inside func.func"):
        split_pipeline("builtin.module(func.func(p))", {"p": print})
    with pytest.raises(PipelineError, match="expected builtin.module"):
        split_pipeline("canonicalize,cse")


def test_bad_arguments_are_named(tmp_path):
    with pytest.raises(TypeError, match="check: expected a command"):
        bisect_pipeline(MODULE, pipeline(), 42)
    with pytest.raises(ValueError, match="check: 'no-such-script' is no executable"):
        bisect_pipeline(MODULE, pipeline(), "no-such-script")
    with pytest.raises(FileNotFoundError, match="module: expected MLIR text or the path of a file, got 'nope.mlir'"):
        bisect_pipeline("nope.mlir", pipeline(), check_vsum)
    done = subprocess.run(
        [str(BIN / "memref-bisect"), str(MODULE), "--pass-pipeline=builtin.module(cse)"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "--test=SCRIPT is required" in done.stderr
    done = subprocess.run(
        [str(BIN / "memref-bisect"), str(MODULE), "--test=x", "--pass-pipeline=cse"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "expected builtin.module(...)" in done.stderr
