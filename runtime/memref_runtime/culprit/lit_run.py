"""A lit test run as lit runs it, with a candidate in place of its module, and how it failed.

memref-update-checks' machinery (update_checks/running.py) reads the test as lit would: the
suite's lit.cfg.py, the test format's substitutions, the test's environment and lit's internal
shell; here each RUN line runs whole, its `| FileCheck %s` included (with `--dump-input=never`:
the key below must not hold the whole output), under a failure report folder of its own, so
that each Python process of the test records its JitModules (jit/recording.py) and its output.

"The same way", for a test: the same RUN line fails, and with it the same FileCheck error (the
CHECK line, the message, and the lines of output it quotes), the same exception (type and
message, volatile parts masked) or the same signal of the Python process that failed, or the
same exit status and first error line of another tool.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, cast

from .. import environment
from ..output_lock import exclusive
from ..process import failure_report
from .outcome import PASSED, Outcome, first_line, mask_volatile

_STDIN_POSITION = re.compile(r"<stdin>:\d+:\d+")
_ERROR_LINE = re.compile(r"^.*\berror: ?(.*)$", re.M)


@dataclass
class Run:
    """One run of the test: how it ended, and the report folder its processes wrote (kept until `close`)."""

    outcome: Outcome
    folder: str

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class LitTest:
    """A test of a configured lit suite, read once; `run` runs it with changes."""

    def __init__(self, path: str, params: dict | None = None):
        import lit.TestRunner

        from ..update_checks.errors import Skipped, UpdateError
        from ..update_checks.running import discover, make_lit_config, script_steps

        self.path = path
        self.lit_config = make_lit_config(dict(params or {}))
        found = discover([path], self.lit_config)
        if not found or isinstance(found[0][1], (Skipped, UpdateError)):
            why = found[0][1] if found else "no test"
            raise ValueError(f"TEST: {path} is not a test lit can run: {why}")
        self.test: Any = cast(Any, found[0][1])  # lit's Test
        self.source = os.path.realpath(self.test.getSourcePath())
        self.tmp_base = lit.TestRunner.getTempPaths(self.test)[1]
        try:
            with exclusive(self.tmp_base):  # its before hooks clear the test's report folder
                steps = script_steps(self.test, self.lit_config, require_filecheck=False)
        except (Skipped, UpdateError) as e:
            raise ValueError(f"TEST: {path}: {e}") from e
        # The preamble's `export MEMREF_RUNTIME_REPORT=...` is lit's failure report: `run` sets its own.
        self.steps = [s for s in steps if s.line]

    def run(self, env: dict | None = None, rewrite=None, timeout: float = 0) -> Run:
        """Runs the RUN lines in order with `env` added to the test's environment; `rewrite(step)`
        may give another command for a step (a pipeline without its FileCheck). Stops at the
        first that fails."""
        import lit.ShUtil as sh

        from ..update_checks.running import execute

        folder = tempfile.mkdtemp(prefix="memref-reduce-run-")
        config_env = self.test.config.environment
        saved = dict(config_env)
        config_env.update(env or {})
        config_env[environment.REPORT] = folder
        config_env[environment.FILECHECK_OPTS] = "--dump-input=never"
        try:
            with exclusive(self.tmp_base):  # a lit run of the same test beside it waits
                for step in self.steps:
                    command: Any = rewrite(step) if rewrite is not None else step.command
                    if step.filecheck is not None:
                        command = sh.Pipeline(command.commands + [step.filecheck], command.negate, command.pipe_err)
                    done = execute(self.test, command, timeout=timeout)
                    if done.timed_out:
                        return Run(
                            Outcome(True, "timeout", f"RUN line {step.line}: no answer after {timeout:g} s"), folder
                        )
                    if done.status != 0:
                        return Run(self._failure(step, done, folder), folder)
                return Run(PASSED, folder)
        finally:
            config_env.clear()
            config_env.update(saved)

    def _failure(self, step, done, folder: str) -> Outcome:
        """The key and summary of a RUN line that failed: FileCheck's error, then how each Python
        process that failed ended, then any other command's status."""
        parts, summary = [], []
        for result in done.results:
            name = os.path.basename(str(result.command.args[0])) if result.command.args else "?"
            if result.exitCode == 0:
                continue
            if step.filecheck is not None and result.command is step.filecheck:
                text = _STDIN_POSITION.sub("<stdin>", (result.stderr or "").replace(self.source, "<test>"))
                parts.append("FileCheck: " + mask_volatile(text.strip()))
                summary.append(first_line(text))
            elif not _is_python(name):
                said = _ERROR_LINE.search(result.stderr or "")
                parts.append(f"{name}: exit status {result.exitCode}: " + mask_volatile(said.group(1) if said else ""))
                summary.append(f"{name}: exit status {result.exitCode}" + (f": {said.group(1)}" if said else ""))
        for record in failure_report.processes(folder):
            if failure_report.failed(record):
                raised = _last_exception(record["output"].decode(errors="replace"))
                ended = failure_report.how_it_ended(record)
                parts.append(f"python: {ended}" + (f" after {mask_volatile(raised)}" if raised else ""))
                summary.append(f"python {ended}" + (f": {first_line(raised)}" if raised else ""))
        key = f"RUN line {step.line}: " + " | ".join(parts or [f"exit status {done.status}"])
        return Outcome(True, key, f"RUN line {step.line}: " + ("; ".join(summary) or f"exit status {done.status}"))


def _is_python(name: str) -> bool:
    return name.startswith("python") or name == "client.py"


def _last_exception(output: str) -> str | None:
    """The exception that ended `output`'s last traceback, with its whole message, if any."""
    at = output.rfind("Traceback (most recent call last):")
    if at < 0:
        return None
    lines = output[at:].splitlines()[1:]
    start = next((i for i, line in enumerate(lines) if line and not line.startswith(" ")), None)
    return None if start is None else "\n".join(lines[start:]).strip()
