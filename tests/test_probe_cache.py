"""lit.cfg.py's probe cache: an answer is reused while the files it came from are unchanged."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest
from support.paths import REPO

from memref_runtime import probe_cache

pytestmark = pytest.mark.harness


@pytest.fixture(autouse=True)
def cache_in(tmp_path, monkeypatch):
    monkeypatch.setenv(probe_cache.ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache"


def counting(answer):
    calls = []

    def compute():
        calls.append(1)
        return answer

    return compute, calls


def test_an_answer_is_reused_while_its_files_are_unchanged_and_recomputed_after(tmp_path):
    depends = tmp_path / "tool"
    depends.write_text("one")
    compute, calls = counting({"value": 1})
    for _ in range(3):
        assert probe_cache.cached("k", {"a": 1}, compute, lambda answer: [str(depends)]) == {"value": 1}
    assert len(calls) == 1
    time.sleep(0.01)
    depends.write_text("a different tool")  # another size and mtime: the stored answer is stale
    assert probe_cache.cached("k", {"a": 1}, compute, lambda answer: [str(depends)]) == {"value": 1}
    assert len(calls) == 2
    depends.unlink()  # gone: stale too
    probe_cache.cached("k", {"a": 1}, compute, lambda answer: [str(depends)])
    assert len(calls) == 3


def test_another_key_is_another_answer(tmp_path):
    first, _ = counting({"value": 1})
    second, calls = counting({"value": 2})
    assert probe_cache.cached("k", {"a": 1}, first, lambda answer: []) == {"value": 1}
    assert probe_cache.cached("k", {"a": 2}, second, lambda answer: []) == {"value": 2}
    assert probe_cache.cached("j", {"a": 1}, second, lambda answer: []) == {"value": 2}
    assert len(calls) == 2


def test_no_answer_is_not_stored():
    compute, calls = counting(None)
    assert probe_cache.cached("k", {}, compute, lambda answer: []) is None
    assert probe_cache.cached("k", {}, compute, lambda answer: []) is None
    assert len(calls) == 2


@pytest.mark.parametrize("setting", ["0", "off", "false"])
def test_switched_off_it_always_computes(monkeypatch, cache_in, setting):
    monkeypatch.setenv(probe_cache.ENV_VAR, setting)
    compute, calls = counting({"value": 1})
    probe_cache.cached("k", {}, compute, lambda answer: [])
    probe_cache.cached("k", {}, compute, lambda answer: [])
    assert len(calls) == 2 and not cache_in.exists()


def test_a_damaged_or_unwritable_cache_only_costs_time(cache_in):
    compute, calls = counting({"value": 1})
    probe_cache.cached("k", {}, compute, lambda answer: [])
    for stored in cache_in.iterdir():
        stored.write_text("{ not json")
    assert probe_cache.cached("k", {}, compute, lambda answer: []) == {"value": 1}
    if os.geteuid() != 0:  # root writes anyway
        cache_in.chmod(stat.S_IRUSR | stat.S_IXUSR)
        try:
            assert probe_cache.cached("other", {}, compute, lambda answer: []) == {"value": 1}
        finally:
            cache_in.chmod(stat.S_IRWXU)
    assert len(calls) >= 2


def test_a_tool_is_run_again_when_its_executable_changes(tmp_path):
    tool = tmp_path / "mlir-opt"
    tool.write_text("#!/bin/sh\necho 'LLVM version 22.1.8'\n")
    tool.chmod(0o755)
    assert probe_cache.tool_output([str(tool), "--version"]).strip() == "LLVM version 22.1.8"
    time.sleep(0.01)
    tool.write_text("#!/bin/sh\necho 'LLVM version 23.0.0git'\n")
    assert probe_cache.tool_output([str(tool), "--version"]).strip() == "LLVM version 23.0.0git"
    assert probe_cache.tool_output([str(tmp_path / "missing"), "--version"]) == ""


@pytest.mark.parametrize("setting", ["0", None])
def test_one_process_runs_a_tool_once_per_question_even_with_the_cache_off(tmp_path, monkeypatch, setting):
    if setting:
        monkeypatch.setenv(probe_cache.ENV_VAR, setting)
    runs = tmp_path / "runs"
    tool = tmp_path / "llvm-config"
    tool.write_text(f"#!/bin/sh\necho \"$1\" >> '{runs}'\necho answer-to-$1\n")
    tool.chmod(0o755)
    for _ in range(3):
        assert probe_cache.tool_output([str(tool), "--version"]).strip() == "answer-to---version"
    assert probe_cache.tool_output([str(tool), "--host-target"]).strip() == "answer-to---host-target"
    assert runs.read_text().split() == ["--version", "--host-target"]


def test_a_tool_that_times_out_is_asked_again(tmp_path):
    tool = tmp_path / "slow"
    tool.write_text('#!/bin/sh\nsleep "$1"\necho done\n')
    tool.chmod(0o755)
    assert probe_cache.tool_output([str(tool), "5"], timeout=0.2) == ""
    assert probe_cache.tool_output([str(tool), "5"], timeout=10).strip() == "done"


def test_lit_configures_from_the_cache_and_gets_the_same_features(cache_in):
    """Two lit runs of the suite: the second reads the probes back, with the same features."""
    lit = os.path.join(os.path.dirname(sys.executable), "lit")
    if not os.path.exists(lit):
        pytest.skip("lit is not installed next to this interpreter")

    def debug_features() -> str:
        out = subprocess.run(
            [lit, "--debug", "--show-tests", "lit_tests/dynamic_add.py"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        return next(line for line in (out.stdout + out.stderr).splitlines() if "memref-runtime features:" in line)

    first = debug_features()
    assert any(p.name.startswith("python-") for p in cache_in.iterdir())
    assert debug_features() == first
