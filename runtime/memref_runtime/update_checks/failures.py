"""The refusal rules: when a RUN line's run failed, so that no CHECK lines are written from it.

A run failed when
- a command of the RUN line exits non-zero or dies by a signal, as lit judges it: `not` and
  `not --crash` applied, and under the suite's `pipefail` (lit's default) any command of a
  pipeline counts, not only the last;
- either output stream holds an uncaught Python traceback (`Traceback (most recent call last):`)
  or an unraisable-exception report (`Exception ignored ...`). Python prints the latter for an
  exception it cannot raise (in a ctypes callback, `__del__`, a thread's end) and carries on, so
  the process may still exit with 0;
- it ran out of time (`--timeout`).

These are Python's and the OS's own signs, not the wording of any crash report on top of them.
A test that prints a traceback on purpose says so in a comment,
`UPDATE-CHECKS: allow-traceback: <reason>`; the exit-status rules still apply to it (a script
that ends by raising is checked with `not %PYTHON %s 2>&1 | FileCheck %s`).
"""

from __future__ import annotations

import os
import re
import signal

TRACEBACK = re.compile(r"^Traceback \(most recent call last\):[ \t]*$", re.M)
# "Exception ignored in: <obj>", "Exception ignored on calling ctypes callback function: <f>",
# and Python 3.13's "Exception ignored while ...": the default sys.unraisablehook's first line.
UNRAISABLE = re.compile(r"^Exception ignored\b.*$", re.M)

EXCERPT_LINES = 30
REASON_WIDTH = 160
NEGATIONS = ("not", "--crash", "!")


def describe_exit(status: int) -> str:
    """`died by SIGSEGV (exit status -11)` or `exited with status 3`."""
    if status < 0:
        try:
            name = signal.Signals(-status).name
        except ValueError:
            name = f"signal {-status}"
        return f"died by {name} (exit status {status})"
    return f"exited with status {status}"


def _command_name(args: list) -> str:
    """`python3.11`, `not mlir-opt`: the program of a command, after its negations."""
    words = [str(a) for a in args]
    negations = [w for w in words[:2] if w in NEGATIONS]
    program = words[len(negations)] if len(words) > len(negations) else ""
    return " ".join(negations + [os.path.basename(program)])


def _shorten(text: str) -> str:
    text = text.strip()
    return text if len(text) <= REASON_WIDTH else text[: REASON_WIDTH - 3] + "..."


def _exception_line(lines: list[str], start: int) -> str:
    """The `Error: message` line that ends the traceback starting at `lines[start]`."""
    for line in lines[start + 1 :]:
        if line.strip() and not line[:1].isspace():
            return line
    return ""


def _reports(text: str) -> list[tuple[int, str]]:
    """(line index, description) of each traceback and unraisable report in `text`."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if TRACEBACK.fullmatch(line):
            if i > 0 and UNRAISABLE.fullmatch(lines[i - 1]):
                continue  # the traceback of an unraisable report, described with it
            found.append((i, f"a Python traceback ({_shorten(_exception_line(lines, i))})"))
        elif UNRAISABLE.fullmatch(line):
            raised = _exception_line(lines, i + 1) if i + 1 < len(lines) and TRACEBACK.fullmatch(lines[i + 1]) else ""
            found.append(
                (i, f"an unraisable-exception report: {_shorten(line)}" + (f" ({_shorten(raised)})" if raised else ""))
            )
    return found


def excerpt(text: str, start: int | None = None) -> str:
    """Lines of `text` from line `start` on (else its tail), EXCERPT_LINES at most, each `  | `."""
    lines = text.rstrip().splitlines()
    if start is None:
        shown = lines[-EXCERPT_LINES:]
        note = f"  ... {len(lines) - len(shown)} lines before ...\n" if len(shown) < len(lines) else ""
        return note + "\n".join("  | " + line for line in shown)
    shown = lines[start : start + EXCERPT_LINES]
    rest = len(lines) - start - len(shown)
    body = "\n".join("  | " + line for line in shown)
    return body + (f"\n  ... {rest} lines after ..." if rest > 0 else "")


def run_failure(
    status: int | None, results: list, out: str, err: str, allow_traceback: bool = False
) -> tuple[str, str] | None:
    """(reason, excerpt) when a run failed by the rules above, else None.

    `status` is lit's exit status of the command (pipefail and `not` applied), `results` lit's
    ShellCommandResult of each command run, `out`/`err` what they printed."""
    reasons = []
    if status:
        failed = [f"`{_command_name(r.command.args)}` {describe_exit(r.exitCode)}" for r in results if r.exitCode]
        reasons.append(", ".join(failed) if failed else describe_exit(int(status)))
    text = out + ("\n" if out and not out.endswith("\n") else "") + err
    reports = [] if allow_traceback else _reports(text)
    reasons += [what for _, what in reports[:1]]
    if len(reports) > 1:
        reasons.append(f"{len(reports) - 1} more traceback(s) or report(s) after it")
    if not reasons:
        return None
    return "; ".join(reasons), excerpt(text, reports[0][0] if reports else None)
