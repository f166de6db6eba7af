#!/usr/bin/env python3
"""Why a route failed, in a few lines: `python3 .ci/why_failed.py LOG` (a route's whole output).

`.ci/run` prints this at the very end of a run, after the routes' times, because a CI service
that shows only the start and the end of a long log cuts a failure's explanation out of the
middle (it did: a lit test's FileCheck error was shown, what the test's subprocess printed was
not). What it picks, each line cut at 200 characters, 30 lines in all:

- for each failed lit test (the first three): the `FAIL:` line, FileCheck's first `error:`, the
  input lines from the one where the check failed on, and from the failure report each process
  that did not exit 0, how it ended and the last lines it printed;
- then pytest's `FAILED`/`ERROR` lines and its final counts;
- with neither, the log's last lines (but `.ci/run`'s own `===` lines).
"""

from __future__ import annotations

import re
import sys

WIDTH, MOST_LINES = 200, 30
LIT_BLOCK = re.compile(r"^\*{20} TEST '(?P<name>.+)' FAILED \*{20}$(?P<body>.*?)^\*{20}$", re.M | re.S)
FRAME = re.compile(r"^# \| ?")  # lit's frame around a command's stderr
DUMP_LINE = re.compile(r"^\s*(\d+): ?(.*)$")  # FileCheck's input dump: "   9: text"
DUMP_MARK = re.compile(r"^\S+:\d+(?:'\d+)?\s+(?:X|\^|!)")  # "next:57'0   X error: no match found"


def _cut(line: str) -> str:
    return line if len(line) <= WIDTH else line[: WIDTH - 3] + "..."


def _input_from_failure(lines: list[str], count: int = 4) -> list[str]:
    """The input dump's lines from the one before FileCheck's first error mark on."""
    for i, line in enumerate(lines):
        if DUMP_MARK.match(line.strip()):
            numbered = [m for m in (DUMP_LINE.match(x) for x in lines[max(0, i - 1) :]) if m]
            return [f"input {m.group(1)}: {m.group(2).rstrip()}" for m in numbered[: count + 1]]
    return []


def _failed_processes(body: str, tail: int = 4) -> list[str]:
    """From memref-runtime's failure report: each process that did not exit 0, how it ended and
    the last lines it printed."""
    out: list[str] = []
    report = body.split("memref-runtime failure report", 1)
    if len(report) < 2:
        return out
    for chunk in re.split(r"^(?=\$ )", report[1], flags=re.M)[1:]:
        lines = [x for x in chunk.rstrip("\n").splitlines() if x.strip()]
        ended = lines[1] if len(lines) > 1 else ""  # how it ended; notes, if any, follow
        if not ended.startswith("# ") or re.match(r"# exit status 0\b", ended):
            continue
        printed = [x for x in lines[2:] if not x.startswith("# ")]
        out += [lines[0], ended, *printed[-tail:]]
    return out


def lit_failures(log: str, most: int = 3) -> list[str]:
    out = []
    for block in list(LIT_BLOCK.finditer(log))[:most]:
        body = block.group("body")
        lines = [FRAME.sub("", x) for x in body.splitlines()]
        error = next((x for x in lines if ": error: " in x or x.startswith("error: ")), None)
        out.append(f"FAIL: {block.group('name')}")
        out += [f"  {x}" for x in ([error] if error else []) + _input_from_failure(lines)]
        out += [f"  {x}" for x in _failed_processes(body)]
    return out


def pytest_failures(log: str) -> list[str]:
    failed = re.findall(r"^(?:FAILED|ERROR) .+$", log, re.M)
    counts = re.findall(r"^=+ (.*\b(?:failed|error|errors)\b.*) =+$", log, re.M)
    return failed[:20] + counts[-1:]


def last_lines(log: str, count: int = 12) -> list[str]:
    """The log's last lines but `.ci/run`'s own (`=== ...`), which say only that it failed."""
    return [x for x in log.rstrip("\n").splitlines() if not x.startswith("=== ")][-count:]


def why(log: str) -> list[str]:
    lines = lit_failures(log) + pytest_failures(log) or last_lines(log)
    return [_cut(x) for x in lines[:MOST_LINES]]


if __name__ == "__main__":
    with open(sys.argv[1], errors="replace") as f:
        print("\n".join(why(f.read())))
