"""README command 2 runs in parallel (support.workers.run_in_parallel_by_default), and a `serial`
test runs while no other test does (conftest.serial_tests_run_alone): checked on a throw-away
project with this folder's conftest.py and support/, from the intervals its tests record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.harness

HERE = Path(__file__).resolve().parent
xdist_plugin = pytest.importorskip("xdist.plugin")

RECORDING_TESTS = """
import json, os, time
import pytest

def record(name):
    start = time.monotonic()
    time.sleep(0.15)
    line = {"name": name, "start": start, "end": time.monotonic(),
            "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
            "workers": os.environ.get("PYTEST_XDIST_WORKER_COUNT")}
    with open(os.environ["RECORD"], "a") as f:
        f.write(json.dumps(line) + "\\n")

@pytest.mark.parametrize("i", range(8))
def test_shared(i):
    record(f"shared{i}")

@pytest.mark.serial
@pytest.mark.parametrize("i", range(2))
def test_alone(i):
    record(f"serial{i}")
"""


def run_project(tmp_path, *args, env=None):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    shutil.copy(HERE / "conftest.py", project / "tests" / "conftest.py")
    shutil.copytree(HERE / "support", project / "tests" / "support", ignore=shutil.ignore_patterns("__pycache__"))
    (project / "tests" / "test_recorded.py").write_text(RECORDING_TESTS)
    record = tmp_path / "record.jsonl"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    environment.update(
        env or {},
        RECORD=str(record),
        PYTHONPATH=os.pathsep.join([str(HERE.parent / "runtime"), environment.get("PYTHONPATH", "")]),
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return [json.loads(line) for line in record.read_text().splitlines()]


def test_the_whole_suite_runs_on_cores_plus_one_workers_and_serial_tests_alone(tmp_path, monkeypatch):
    lines = run_project(tmp_path)
    # Cores as xdist counts them for -n auto (physical ones, where psutil can tell).
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    auto = SimpleNamespace(option=SimpleNamespace(numprocesses=None))
    cores = xdist_plugin.pytest_xdist_auto_num_workers(auto)
    assert len(lines) == 10
    if cores < 2:
        assert {line["worker"] for line in lines} == {"main"}  # one core: no workers
        return
    assert {line["workers"] for line in lines} == {str(cores + 1)}
    assert len({line["worker"] for line in lines}) >= 2
    serial = [line for line in lines if line["name"].startswith("serial")]
    for alone in serial:
        overlapping = [
            line["name"]
            for line in lines
            if line is not alone and line["start"] < alone["end"] and alone["start"] < line["end"]
        ]
        assert not overlapping, f"{alone['name']} ran alongside {overlapping}"


def test_the_auto_worker_count_of_the_environment_is_taken_as_it_is(tmp_path):
    lines = run_project(tmp_path, env={"PYTEST_XDIST_AUTO_NUM_WORKERS": "2"})
    assert {line["workers"] for line in lines} == {"2"}


@pytest.mark.parametrize("args", [["-n", "0"], ["tests/test_recorded.py"]], ids=["-n 0", "named file"])
def test_n_0_or_a_named_file_runs_in_one_process(tmp_path, args):
    lines = run_project(tmp_path, *args)
    assert {line["worker"] for line in lines} == {"main"}
