"""The failure report, read back: what each Python process of a test printed, and how it ended.

Each Python process of a test under the report writes into the test's report folder (report.py,
run by the site hook): `<pid>.out` (everything written to fds 1 and 2, in order), `<pid>.record`
(argv, start time, exit status or signal), `<pid>.notes` and `<pid>.jit` (where its JIT-compiled
functions lie, which name the frames of a crash in them: jit_frames.py). `format_report(folder)`
turns that into the text lit appends to a failed test's output (lit/failure_report.py); the pytest
plugin's crash report uses `how_it_ended` and `tail`. Nothing here imports numpy or MLIR.
"""

from __future__ import annotations

import ast
import os
import re
import shlex

from .jit_frames import name_frames, read_map

# What one failed process contributes to a report at most: its last lines. The folder keeps all.
MAX_LINES = 400
MAX_CHARS = 64 * 1024
_CASE = re.compile(rb"^TEST: ?(.*?)\s*$", re.MULTILINE)


def _read_record(path: str) -> dict:
    try:
        with open(path) as f:
            record = ast.literal_eval(f.read())
        return record if isinstance(record, dict) else {}
    except (OSError, ValueError, SyntaxError):
        return {}


def processes(folder: str) -> list[dict]:
    """The Python processes that wrote to `folder`, in the order they started, each with its
    `output` (bytes) and how it ended."""
    found = []
    for name in os.listdir(folder):
        if not name.endswith(".record"):
            continue
        base = os.path.join(folder, name[: -len(".record")])
        record = _read_record(base + ".record")
        try:
            with open(base + ".out", "rb") as f:
                record["output"] = f.read()
        except OSError:
            record["output"] = b""
        record["path"] = base + ".out"
        try:  # what the test process (the copier's child) noted about itself
            with open(os.path.join(folder, f"{record.get('pid')}.notes")) as f:
                record["notes"] = f.read().splitlines()
        except OSError:
            record["notes"] = []
        found.append(record)
    return sorted(found, key=lambda r: r.get("start", 0))


def how_it_ended(record: dict) -> str:
    """'exit status 0', 'killed by SIGSEGV (Segmentation fault)', or that it did not finish."""
    if "signal" in record:
        text = record.get("signal_text") or ""
        name = record.get("signal_name", f"signal {record['signal']:d}")
        return f"killed by {name}" + (f" ({text})" if text else "")
    if "exit_code" in record:
        return f"exit status {record['exit_code']}"
    return "did not finish (killed, or still running when lit stopped waiting)"


def failed(record: dict) -> bool:
    return record.get("exit_code", 1) != 0


# A frame of faulthandler's dump (most recent call first).
_DUMP_FRAME = re.compile(rb'^  File "[^"\n]*", line \d+ in (\S+)$', re.MULTILINE)


def _case_on_stack(output: bytes) -> str | None:
    """The function the outermost `run(f)` frame called, in the crash dump ending `output`.

    On a crash this beats the last label: a plain script's `print("TEST:", ...)` to a
    block-buffered stdout dies with the process, and the last label that did arrive names a
    former case. (After an exception Python flushes stdout on its way out: the labels are all there.)
    """
    dump = output.rfind(b"Fatal Python error: ")
    if dump < 0 or output.rfind(b"Traceback (most recent call last):") > dump:
        return None
    block = output[dump:]
    current = block.find(b"Current thread ")
    frames = _DUMP_FRAME.findall((block[current:] if current >= 0 else block).split(b"\n\n", 1)[0])
    called = [frames[i - 1] for i, name in enumerate(frames) if name == b"run" and i > 0]
    return called[-1].decode(errors="replace") if called else None


def last_case(output: bytes) -> str | None:
    """The case running when the process ended: the one `run()` called on the Python stack of a
    crash, else the last `TEST: <case>` label in `output`; None without either."""
    on_stack = _case_on_stack(output)
    if on_stack is not None:
        return on_stack
    cases = _CASE.findall(output)
    return cases[-1].decode(errors="replace") if cases else None


def tail(text: str, path: str) -> str:
    """The last MAX_LINES lines (and MAX_CHARS characters) of `text`, saying how many were cut and
    that `path` holds them all (the pytest plugin's crash report uses it too)."""
    lines = text.splitlines()
    cut = max(len(lines) - MAX_LINES, 0)
    kept = "\n".join(lines[cut:])
    if len(kept) > MAX_CHARS:
        kept, cut = kept[-MAX_CHARS:], cut + kept[:-MAX_CHARS].count("\n") + 1
    return (f"[{cut} earlier lines: see {path}]\n" if cut else "") + kept


def format_report(folder: str) -> str:
    """The report lit appends to a failed test's output ("" when no Python process wrote one)."""
    records = processes(folder)
    if not records:
        return ""
    parts = [f"memref-runtime failure report (every Python process of the test; files in {folder}):"]
    for record in records:
        argv = record.get("argv") or ["?"]
        case = last_case(record["output"])
        summary = f"$ {shlex.join(argv)}\n# {how_it_ended(record)}"
        if case is not None:
            summary += f" during `TEST: {case}`" if failed(record) else f"; last case `TEST: {case}`"
        parts.append(summary)
        parts += [f"# note: {line}" for line in record["notes"]]
        if failed(record):
            output = record["output"].decode(errors="replace")
            output = name_frames(output, read_map(os.path.join(folder, f"{record.get('pid')}.jit")))
            parts.append(
                "# everything it printed, stdout and stderr in the order they came:\n"
                + (tail(output, record["path"]) if output.strip() else "(nothing)")
            )
    return "\n".join(parts) + "\n"
