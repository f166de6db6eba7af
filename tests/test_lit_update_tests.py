"""`lit --update-tests`: memref-update-checks as lit's test updater, in a throw-away copy of the
suite (lit.cfg.py copied, runtime/ symlinked): a stale test is fixed, a crashing one is not."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT

pytestmark = [pytest.mark.harness, pytest.mark.skipif(LIT is None, reason="lit is not installed")]

RUN = "# RUN: %PYTHON %s 2>&1 | FileCheck %s\n"
STALE = (
    RUN
    + """\
from memref_runtime.testing import log, run


def testSum():
    # CHECK-LABEL: TEST: testSum
    # CHECK-NEXT: sum 18.0{{$}}
    log("sum", 19.0)
    # CHECK-NEXT: unchanged line
    log("unchanged line")


run(testSum)
"""
)

TESTS = {
    "stale.py": STALE,
    # Same, but lit runs it a second time after the update: "Passed After Update".
    "retried.py": STALE.replace(RUN, RUN + "# ALLOW_RETRIES: 1\n"),
    "tool.mlir": "// RUN: %PYTHON -c \"print('from a tool', 6 * 7)\" | FileCheck %s\n// CHECK: from a tool 41{{$}}\n",
    # Its FileCheck fails (the output ends before `after`) because the process crashed.
    "crashes.py": RUN + "import ctypes\n\nprint('before', flush=True)\nctypes.string_at(0)\n"
    "print('after')\n# CHECK: before\n# CHECK-NEXT: after\n",
    # It crashes after all its CHECK lines matched: FileCheck passes, so there is nothing to update.
    "crashes_later.py": RUN + "import ctypes\n\nprint('all there', flush=True)\nctypes.string_at(0)\n"
    "# CHECK: all there\n",
    "raises.py": RUN + "print('before', flush=True)\nraise ValueError('on purpose')\n# CHECK: something else\n",
    "hand.py": RUN + "# UPDATE-CHECKS: hand-written: a pattern on purpose\nprint('value 7')\n"
    "# CHECK: value {{[0-6]}}\n",
    # lit's own diff_test_updater's case: a failing `diff` against a `.expected` file.
    "diffs.py": "# RUN: %PYTHON %s > %t.out && diff %t.out %s.expected\nprint('new output')\n",
    "passes.py": RUN + "print('fine')\n# CHECK: fine\n",
}
EXPECTED_FILE = "old output\n"


@pytest.fixture
def suite(tmp_path) -> Path:
    root = make_lit_suite(tmp_path / "suite", TESTS)
    (root / "lit_tests" / "diffs.py.expected").write_text(EXPECTED_FILE)
    return root


def lit(suite: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([LIT, "-j", "2", *args, "lit_tests"], cwd=suite, capture_output=True, text=True, timeout=300)


def updater_output(out: str, test: str) -> str:
    """What the updaters printed under `test`'s result line (up to the next line of stars)."""
    after = re.split(rf"^[A-Z]+: memref-runtime :: lit_tests/{re.escape(test)} .*$", out, maxsplit=1, flags=re.M)
    assert len(after) == 2, out
    return after[1].split("\n" + "*" * 10, 1)[0].strip()


def test_update_tests_fixes_stale_checks_and_leaves_failed_runs(suite):
    out = lit(suite, "--update-tests")
    text = out.stdout
    assert out.returncode == 1, text + out.stderr
    tests = suite / "lit_tests"

    # The stale test: rewritten in place; lit still reports this run as failed (its convention).
    assert (tests / "stale.py").read_text() == STALE.replace("sum 18.0", "sum 19.0")
    assert "FAIL: memref-runtime :: lit_tests/stale.py" in text
    assert updater_output(text, "stale.py") == (
        "memref-update-checks: updated: lit_tests/stale.py\n--- a/lit_tests/stale.py\n+++ b/lit_tests/stale.py\n"
        "@@ -4,7 +4,7 @@\n \n def testSum():\n     # CHECK-LABEL: TEST: testSum\n"
        '-    # CHECK-NEXT: sum 18.0{{$}}\n+    # CHECK-NEXT: sum 19.0{{$}}\n     log("sum", 19.0)\n'
        '     # CHECK-NEXT: unchanged line\n     log("unchanged line")\n'
        "(lit reports this run as failed: run the test again to check the new lines)"
    )
    # With ALLOW_RETRIES, lit runs it again after the update: "Passed After Update".
    assert "FIXED: memref-runtime :: lit_tests/retried.py (" in text
    assert "(lit runs it again, as its ALLOW_RETRIES says)" in text
    assert (tests / "tool.mlir").read_text() == TESTS["tool.mlir"].replace("41", "42")

    # Runs that failed: not updated, and why.
    for name, reason in [
        ("crashes.py", r"`python[0-9.]*` died by SIGSEGV \(exit status -11\)"),
        (
            "raises.py",
            r"`python[0-9.]*` exited with status 1; a Python traceback "
            r"\(ValueError: on purpose\)",
        ),
    ]:
        assert (tests / name).read_text() == TESTS[name]
        assert f"FAIL: memref-runtime :: lit_tests/{name}" in text
        assert re.match(
            rf"memref-update-checks: lit_tests/{name}: not updated: its run failed: RUN line 1: "
            rf"{reason}; file left unchanged\n  \$ %PYTHON %s 2>&1 \| FileCheck %s\n  \| ",
            updater_output(text, name),
        ), text
    assert (tests / "hand.py").read_text() == TESTS["hand.py"]
    assert updater_output(text, "hand.py") == (
        "memref-update-checks: lit_tests/hand.py: not updated: its CHECK lines are hand-written (a pattern on purpose)"
    )

    # A failing `diff` is lit's diff_test_updater's: it copies the output, ours says nothing.
    assert (tests / "diffs.py.expected").read_text() == "new output\n"
    assert updater_output(text, "diffs.py").startswith("update-diff-test: copied ")
    assert "memref-update-checks: lit_tests/diffs.py" not in text
    # Nor does it act on a failing command other than FileCheck of the test.
    assert "FAIL: memref-runtime :: lit_tests/crashes_later.py" in text
    assert "memref-update-checks: lit_tests/crashes_later.py" not in text

    # The next run: the updated tests pass, the others still fail.
    again = lit(suite)
    assert re.search(r"Passed\s*: 5\b", again.stdout) and re.search(r"Failed\s*: 4\b", again.stdout), again.stdout
    for name in ("crashes.py", "crashes_later.py", "raises.py", "hand.py"):
        assert f"FAIL: memref-runtime :: lit_tests/{name}" in again.stdout


def test_without_update_tests_nothing_changes(suite):
    out = lit(suite)
    assert out.returncode == 1 and "memref-update-checks" not in out.stdout, out.stdout
    assert all((suite / "lit_tests" / name).read_text() == text for name, text in TESTS.items())
    assert (suite / "lit_tests" / "diffs.py.expected").read_text() == EXPECTED_FILE
