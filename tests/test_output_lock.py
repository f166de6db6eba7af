"""Two lit runs of one suite in one exec root: a test that both come to runs in one at a time
(memref_runtime/output_lock.py), instead of one run's `rm -rf %t` deleting the other's files."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT

from memref_runtime.output_lock import exclusive

pytestmark = pytest.mark.harness

# Writes its pid into %t, waits until the test releases it (a file appears), reads its pid back:
# a second run's `rm -rf %t && mkdir %t` meanwhile makes the read fail. Events, not sleeps: the
# verdict is the same on a loaded machine.
SHARED_TEST = """\
# RUN: rm -rf %t && mkdir %t && %PYTHON %s %t
import os, sys, time
mine = os.path.join(sys.argv[1], "mine")
with open(mine, "w") as f:
    f.write(str(os.getpid()))
deadline = time.monotonic() + 120
while not os.path.exists({release!r}) and time.monotonic() < deadline:
    time.sleep(0.02)
with open(mine) as f:
    assert f.read() == str(os.getpid()), "another run's file"
"""

# Holds the lock until a file appears.
HOLD = """\
import os, sys, time
from memref_runtime.output_lock import exclusive
with exclusive(sys.argv[1]):
    print("held", flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(sys.argv[2]) and time.monotonic() < deadline:
        time.sleep(0.02)
"""

WAIT = """\
import sys
from memref_runtime.output_lock import exclusive
with exclusive(sys.argv[1]) as note:
    print(note, flush=True)
"""


def _line_of(stream, text: str) -> str:
    """The first line of `stream` that holds `text`, or "" at its end."""
    for line in stream:
        if text in line:
            return line
    return ""


def test_the_second_holder_waits_and_is_told_for_whom(tmp_path):
    base, release = str(tmp_path / "Output" / "t.py"), tmp_path / "release"
    with exclusive(base) as note:
        assert note == ""  # nobody held it
    holder = subprocess.Popen([sys.executable, "-c", HOLD, base, release], stdout=subprocess.PIPE, text=True)
    waiter = None
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        waiter = subprocess.Popen(
            [sys.executable, "-c", WAIT, base], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        # Said on stderr when the wait begins; then the holder lets go.
        began = _line_of(waiter.stderr, "memref-runtime: waiting for process")
    finally:
        release.write_text("")
        holder.communicate(timeout=60)
        note = waiter.communicate(timeout=60)[0] if waiter else ""
    assert began == (
        f"memref-runtime: waiting for process {holder.pid}, which runs t.py in the same exec root "
        f"({tmp_path / 'Output'})\n"
    )
    # Then in the note, once it is over.
    assert re.fullmatch(
        rf"memref-runtime: this test waited \d+\.\d s for another run of it in the same exec root \(process "
        rf"{holder.pid}, {re.escape(str(tmp_path / 'Output'))}\): two runs at once share its %t; "
        r"`-D exec_root=DIR` gives a run a folder of its own\n",
        note,
    ), note


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
    release = tmp_path / "release"
    suite = make_lit_suite(tmp_path / "suite", {"shared.py": SHARED_TEST.format(release=str(release))})
    command = [LIT, "-a", "-D", "python_server=0", "-D", f"exec_root={tmp_path / 'out'}", str(suite / "lit_tests")]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    mine = tmp_path / "out" / "lit_tests" / "Output" / "shared.py.tmp" / "mine"
    deadline = time.monotonic() + 120
    while not mine.exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)  # the first run's test has written its file and waits for the release
    second = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        waiting = _line_of(second.stderr, "memref-runtime: waiting for process")
    finally:
        release.write_text("")
    second_out, _ = second.communicate(timeout=300)
    first_out = first.communicate(timeout=300)[0]
    assert waiting.startswith("memref-runtime: waiting for process"), "the second run did not wait"
    assert "PASS: memref-runtime :: lit_tests/shared.py" in first_out, first_out
    assert "PASS: memref-runtime :: lit_tests/shared.py" in second_out, second_out
    assert re.search(r"memref-runtime: this test waited \d+\.\d s .*\(process \d+, ", second_out)
    assert (mine.parent.parent / "shared.py.lock").is_file()
