"""Two lit runs of one suite in one exec root: a test that both come to runs in one at a time
(memref_runtime/output_lock.py), instead of one run's `rm -rf %t` deleting the other's files."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT

from memref_runtime.output_lock import exclusive

pytestmark = pytest.mark.harness

# Writes its pid into %t, sleeps, reads it back: a second run's `rm -rf %t && mkdir %t` meanwhile
# makes the read fail.
SHARED_TEST = """\
# RUN: rm -rf %t && mkdir %t && %PYTHON %s %t
import os, sys, time
mine = os.path.join(sys.argv[1], "mine")
with open(mine, "w") as f:
    f.write(str(os.getpid()))
time.sleep(3)
with open(mine) as f:
    assert f.read() == str(os.getpid()), "another run's file"
"""

HOLD = """\
import sys, time
from memref_runtime.output_lock import exclusive
with exclusive(sys.argv[1]):
    print("held", flush=True)
    time.sleep(1.5)
"""


def test_the_second_holder_waits_and_is_told_for_whom(tmp_path, capsys):
    base = str(tmp_path / "Output" / "t.py")
    with exclusive(base) as note:
        assert note == ""  # nobody held it
    holder = subprocess.Popen([sys.executable, "-c", HOLD, base], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        began = time.monotonic()
        with exclusive(base) as note:
            waited = time.monotonic() - began
    finally:
        holder.wait(timeout=60)
    # Said on stderr when the wait began, then in the note once it is over.
    assert f"memref-runtime: waiting for process {holder.pid}, which runs t.py" in capsys.readouterr().err
    said = re.search(r"waited (\d+\.\d) s for another run of it in the same exec root", note)
    assert said and waited > 0.5 and abs(float(said.group(1)) - waited) < 0.2
    assert f"process {holder.pid}, {tmp_path / 'Output'}" in note and "-D exec_root=DIR" in note


NESTED = """\
import sys
from memref_runtime.output_lock import exclusive
with exclusive(sys.argv[1]) as outer:
    with exclusive(sys.argv[1]) as inner:  # lit --update-tests: the updater inside lit's run
        print(repr(outer), repr(inner))
"""


def test_the_holder_takes_its_lock_again_at_once(tmp_path):
    # In a process of its own, with a time limit: a lock that is not reentrant waits forever.
    out = subprocess.run(
        [sys.executable, "-c", NESTED, str(tmp_path / "t.py")], capture_output=True, text=True, timeout=60
    )
    assert out.stdout == "'' ''\n", out.stderr


def test_a_lock_where_nothing_can_be_written_is_no_lock(tmp_path):
    (tmp_path / "file").write_text("")  # a file where the Output folder would be
    with exclusive(str(tmp_path / "file" / "t.py")) as note:
        assert note == ""


@pytest.mark.skipif(LIT is None, reason="lit is not installed")
def test_two_lit_runs_of_one_test_in_one_exec_root_both_pass(tmp_path):
    suite = make_lit_suite(tmp_path / "suite", {"shared.py": SHARED_TEST})
    command = [LIT, "-a", "-D", "python_server=0", "-D", f"exec_root={tmp_path / 'out'}", str(suite / "lit_tests")]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mine = tmp_path / "out" / "lit_tests" / "Output" / "shared.py.tmp" / "mine"
    deadline = time.monotonic() + 120
    while not mine.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the first run's test has written its file and sleeps
    second = subprocess.run(command, capture_output=True, text=True, timeout=300)
    first_out = first.communicate(timeout=300)[0]
    assert "PASS: memref-runtime :: lit_tests/shared.py" in first_out, first_out
    assert "PASS: memref-runtime :: lit_tests/shared.py" in second.stdout, second.stdout
    assert re.search(r"memref-runtime: this test waited \d+\.\d s .*\(process \d+, ", second.stdout)
    assert os.path.exists(str(mine.parent.parent / "shared.py.lock"))
