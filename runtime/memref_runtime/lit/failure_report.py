"""The failure report in `lit -v`: what a failed test's Python processes printed, and how they ended.

lit shows a failed test's commands and the output of the last one. Under
`%PYTHON %s 2>&1 | FileCheck %s` everything the test printed went to FileCheck, which shows at
most a few lines around its first error, and a crash shows only "exit status: -11". Here:

- before a test, a folder `Output/<test>.report/` is made and its path exported to the test's
  commands as MEMREF_RUNTIME_REPORT (a preamble command); each Python test process copies its
  fds 1 and 2 there and records how it ended (process_report.py, run by the site hook `_site/sitecustomize.py`);
- after a failed test, this module appends to lit's output, for each Python process, how it
  ended (exit status, or the signal's name) and the last `TEST:` label it printed; for those
  that failed, everything they printed in the order it happened, which holds the exception with
  MLIR's diagnostics, or on a crash the Python stack and the native one. A passed test's folder
  is removed.

configure() calls `install(config.test_format)`; nothing here imports numpy or MLIR.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil

import lit.Test
import lit.TestRunner

from .test_format import Before, parsed_script

REPORT_ENV = "MEMREF_RUNTIME_REPORT"  # process_report.py reads it
# What one failed process contributes to lit's output at most: its last lines. The folder keeps all.
MAX_LINES = 400
MAX_CHARS = 64 * 1024
_CASE = re.compile(rb"^TEST: ?(.*?)\s*$", re.MULTILINE)


def report_folder(test) -> str:
    """`Output/<test>.report`, next to lit's own `%t` files of `test`."""
    _, tmp_base = lit.TestRunner.getTempPaths(test)
    return tmp_base + ".report"


class FailureReport:
    """The before and after hooks of the suite's test format (test_format.py)."""

    def before(self, test, lit_config):
        # A preamble makes lit run a file that has no RUN line: only tests lit would run get one.
        if isinstance(parsed_script(test, require_script=True), lit.Test.Result):
            return None
        folder = report_folder(test)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
        return Before(preamble=[f'export {REPORT_ENV}="{folder}"'])

    def after(self, test, lit_config, result):
        folder = report_folder(test)
        if not os.path.isdir(folder):
            return result
        if result.code.isFailure:
            text = format_report(folder)
            if text:
                result.output = (result.output or "").rstrip("\n") + "\n\n" + text
        else:
            shutil.rmtree(folder, ignore_errors=True)
        return result


def install(test_format) -> FailureReport:
    """Registers the failure report's hooks on `test_format` (a MemrefRuntimeShTest)."""
    report = FailureReport()
    test_format.before_hooks.append(report.before)
    test_format.after_hooks.append(report.after)
    return report


# --- reading the folder -----------------------------------------------------------------------

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
        return f"killed by {record.get('signal_name', 'signal %d' % record['signal'])}" + (f" ({text})" if text else "")
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
            parts.append("# everything it printed, stdout and stderr in the order they came:\n"
                         + (tail(output, record["path"]) if output.strip() else "(nothing)"))
    return "\n".join(parts) + "\n"
