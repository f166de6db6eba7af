""".ci/why_failed.py: the few lines at the end of a failed `.ci/run` that say why a route failed
(a CI page that shows a log's start and end cut the explanation out of its middle)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support.paths import REPO, load_script

pytestmark = pytest.mark.harness

why_failed = load_script(REPO / ".ci" / "why_failed.py")

# What `lit -sv` printed for a differential test whose replay did not fail the same way (cut to
# the parts the script reads; the lines it must pick were written by hand from a real run).
LIT_LOG = """\
-- Testing: 60 tests, 2 workers --
PASS: memref-runtime :: lit_tests/dynamic_add.py (5 of 60)
FAIL: memref-runtime :: lit_tests/differential_add.py (6 of 60)
******************** TEST 'memref-runtime :: lit_tests/differential_add.py' FAILED ********************
Exit Code: 1

Command Output (stdout):
--
# RUN: at line 1
# .---command stderr------------
# | /w/lit_tests/differential_add.py:57:15: error: CHECK-NEXT: expected string not found in input
# | # CHECK-NEXT: replay.py fails the same way: True
# |               ^
# | <stdin>:8:70: note: scanning from here
# | Input was:
# | <<<<<<
# |            7: check_against(@add_off_by_one): the function and the reference differ
# |            8: differs: ['argument 2']
# | next:57'0                  X error: no match found
# |            9: replay.py fails the same way: False
# | next:57'0     ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# |           10: replay.py's exit status: 1; its output:
# |           11: ImportError: the cause
# |           12: one line too many
# | >>>>>>
# `-----------------------------
# error: command failed with exit status: 1

--

memref-runtime failure report (every Python process of the test; files in /w/report):
$ /w/.venv/bin/python3 /w/lit_tests/differential_add.py /w/tmp
# exit status 0; last case `TEST: testOffByOneIsFound`
# note: native stack unavailable: no LLVM library loaded
$ /w/.venv/bin/python3 /w/tmp/add_off_by_one/replay.py
# exit status 1
# everything it printed, stdout and stderr in the order they came:
Traceback (most recent call last):
  File "/w/tmp/add_off_by_one/replay.py", line 3, in <module>
    import memref_runtime
ImportError: the cause

********************
Testing:  0.. 10.. 20.. 30.. 40.. 50.. 60.. 70.. 80.. 90..
********************
Failed Tests (1):
  memref-runtime :: lit_tests/differential_add.py

Total Discovered Tests: 60
  Failed: 1 (1.67%)
  Passed: 54 (90.00%)
"""


def test_a_lit_failure_gives_filechecks_error_the_input_where_it_failed_and_the_failed_process():
    assert why_failed.why(LIT_LOG) == [
        "FAIL: memref-runtime :: lit_tests/differential_add.py",
        "  /w/lit_tests/differential_add.py:57:15: error: CHECK-NEXT: expected string not found in input",
        "  input 8: differs: ['argument 2']",
        "  input 9: replay.py fails the same way: False",
        "  input 10: replay.py's exit status: 1; its output:",
        "  input 11: ImportError: the cause",
        "  input 12: one line too many",
        # The test process exited 0 (a note after it): not listed; the replay did not, with its last four lines.
        "  $ /w/.venv/bin/python3 /w/tmp/add_off_by_one/replay.py",
        "  # exit status 1",
        "  Traceback (most recent call last):",
        '    File "/w/tmp/add_off_by_one/replay.py", line 3, in <module>',
        "      import memref_runtime",
        "  ImportError: the cause",
    ]


def test_a_pytest_failure_gives_its_failed_lines_and_counts():
    log = "collected 3 items\n...\nFAILED tests/test_a.py::test_b - AssertionError: 1 != 2\n"
    log += "=========== 1 failed, 2 passed in 1.00s ============\n"
    assert why_failed.why(log) == [
        "FAILED tests/test_a.py::test_b - AssertionError: 1 != 2",
        "1 failed, 2 passed in 1.00s",
    ]


def test_lit_and_pytest_failures_of_one_route_are_both_given():
    log = LIT_LOG + "FAILED tests/test_a.py::test_b - AssertionError\n==== 1 failed, 2 passed in 1.00s ====\n"
    lines = why_failed.why(log)
    assert lines[0] == "FAIL: memref-runtime :: lit_tests/differential_add.py"
    assert lines[-2:] == ["FAILED tests/test_a.py::test_b - AssertionError", "1 failed, 2 passed in 1.00s"]


def test_anything_else_gives_the_logs_last_lines_cut_to_width(tmp_path):
    log = "\n".join(f"line {i}" for i in range(20)) + "\n" + "x" * 300 + "\n=== 8s: lint FAILED\n"
    (tmp_path / "route.log").write_text(log)
    run = subprocess.run(
        [sys.executable, REPO / ".ci" / "why_failed.py", tmp_path / "route.log"], capture_output=True, text=True
    )
    lines = run.stdout.splitlines()
    assert run.returncode == 0 and len(lines) == 12
    assert lines[0] == "line 9" and lines[-1] == "x" * 197 + "..."


def test_ci_run_prints_why_each_failed_route_failed_last():
    text = (REPO / ".ci" / "run").read_text()
    end = text[text.index("[ ${#failed[@]} -eq 0 ] ||") :]
    assert '.ci/why_failed.py "$STATE/$name.log"' in end
    assert end.index("why_failed.py") < end.index("printf 'failed: %s\\n'")
