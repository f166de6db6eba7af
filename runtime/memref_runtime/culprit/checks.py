"""The check a bisection or a reduction runs on each candidate, and what "fails the same way" means.

A check is one of:

- a command (a path, or an argv list): mlir-reduce's convention, the candidate file appended as
  its last argument, a non-zero exit status meaning "still failing". The same way: the same
  exit status (or signal), and the same exception type where it ends with a Python traceback (a
  script that crashes on a broken candidate is not failing as one that exits 1 on purpose).
- a Python callable taking a JitModule of the candidate: it fails by raising (an assertion,
  check_close, check_against) or by returning False. The same way: the same exception type and
  the same message, with SSA names, MLIR locations, addresses and temporary paths masked (a
  mismatch report must name the same elements with the same values).
- `Against(function, reference, inputs)`: a typed call compared with a reference
  (typed_call.py), which can also slice away the outputs that were right and shrink the inputs.
- a RerunCheck: the test itself, rerun with the candidate in place of its module (memref-reduce
  TEST, pytest --mlir-reduce). The same way: as the test says (lit_run.py, pytest_plugin/reduce.py).

Python checks run in a forked child (isolation.py): a crash is the failure `killed by SIGSEGV
(...)`, a hang past the time limit the failure `timeout`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Sequence

from ..settings import OPT_LEVEL_ENV
from .isolation import run_forked
from .outcome import PASSED, Outcome, ended_outcome, exception_outcome, first_line

DEFAULT_TIMEOUT = 60.0


class RerunCheck:
    """A test rerun with the candidate in place of the module it JIT-compiles: it runs the
    candidate itself and says how the test ended, keyed as "the same way" is for that test."""

    def outcome(self, source: str, lowered: str | None, opt_level: int, timeout: float) -> Outcome:
        """How the test ends with `source` (or `lowered`, the module lowered already) at `opt_level`."""
        raise NotImplementedError

    def describe(self) -> str:
        return type(self).__name__

    def regression_test(self, path: str, result) -> str:
        """The text of a regression test of reduction `result`, to be written to `path`
        (ValueError saying why there is none)."""
        raise ValueError(f"{self.describe()} writes no regression test")


class Checker:
    """Runs one check on candidates; counts the runs and their time."""

    def __init__(
        self, check, *, test_args: Sequence[str] = (), pipeline: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ):
        from .typed_call import Against

        if isinstance(check, (str, os.PathLike)):
            check = [os.fspath(check)]
        if isinstance(check, (list, tuple)):
            if not check or not all(isinstance(a, (str, os.PathLike)) for a in check):
                raise TypeError(f"check: expected a command (a path or a list of strings), got {check!r}")
            self.command: list[str] | None = [os.fspath(a) for a in check] + list(test_args)
            if shutil.which(self.command[0]) is None:
                raise ValueError(
                    f"check: {self.command[0]!r} is no executable (a script needs its x bit, "
                    "or give the interpreter first: [python, script])"
                )
        elif isinstance(check, (Against, RerunCheck)) or callable(check):
            self.command = None
        else:
            raise TypeError(
                "check: expected a command (a path or an argv list), a callable taking a JitModule, "
                f"Against(...) or a RerunCheck, got {type(check).__name__}"
            )
        if timeout < 0:
            raise ValueError(f"timeout: expected seconds >= 0 (0: no limit), got {timeout!r}")
        self.check, self.pipeline, self.timeout = check, pipeline, timeout
        self.typed_call = check.runner if isinstance(check, Against) else None  # its probes and outputs
        self.runs, self.seconds = 0, 0.0
        self.ended: Counter = Counter()  # "crashed", "hung" -> runs that ended so
        self.hints: list[str] = []  # what is wrong with the check itself, said once (_interpreter_hint)

    def run(self, source: str, *, lowered: str | None = None, opt_level: int = 2) -> Outcome:
        """The check on `source` (lowered by `self.pipeline`) or on `lowered`, JIT-compiled at `opt_level`."""
        start = time.perf_counter()
        try:
            if self.command is not None:
                return self._run_command(lowered if lowered is not None else source, opt_level)
            if isinstance(self.check, RerunCheck):
                outcome = self.check.outcome(source, lowered, opt_level, self.timeout)
                if outcome.key == "timeout":
                    self.ended["hung"] += 1
                return outcome
            ended = run_forked(lambda: self._in_child(source, lowered, opt_level), self.timeout)
            if ended.how != "ok":
                self.ended["crashed" if ended.how == "crash" else "hung"] += 1
            return ended.value if ended.how == "ok" else ended_outcome(ended)
        finally:
            self.runs += 1
            self.seconds += time.perf_counter() - start

    def _in_child(self, source: str, lowered: str | None, opt_level: int) -> Outcome:
        from ..jit.module import JitModule

        try:
            jit = JitModule(source, pipeline=self.pipeline, opt_level=opt_level, lowered=lowered)
            runner = self.typed_call
            if runner is not None:
                return runner.outcome(jit)
            if self.check(jit) is False:
                return Outcome(True, "returned False", "the check returned False")
        except Exception as e:  # noqa: BLE001 - a failing check is an outcome, not an error
            return exception_outcome(e)
        return PASSED

    def _run_command(self, text: str, opt_level: int) -> Outcome:
        assert self.command is not None  # run() calls this for a command check only
        fd, path = tempfile.mkstemp(prefix="memref_culprit_", suffix=".mlir")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            env = dict(os.environ, **{OPT_LEVEL_ENV: str(opt_level)})
            try:
                done = subprocess.run(
                    self.command + [path], capture_output=True, text=True, env=env, timeout=self.timeout or None
                )
            except subprocess.TimeoutExpired:
                self.ended["hung"] += 1
                return Outcome(True, "timeout", f"no answer after {self.timeout:g} s (killed)")
        finally:
            os.unlink(path)
        if done.returncode == 0:
            return PASSED
        how = f"exit status {done.returncode}" if done.returncode > 0 else f"killed by signal {-done.returncode}"
        said = first_line((done.stderr or "").splitlines()[-1] if (done.stderr or "").strip() else done.stdout or "")
        raised = _python_exception(done.stderr or "")
        hint = _interpreter_hint(self.command[0], done.stderr or "")
        if hint and hint not in self.hints:
            self.hints.append(hint)
        return Outcome(True, how + (f" after {raised}" if raised else ""), how + (f": {said}" if said else ""))


def _interpreter_hint(program: str, stderr: str) -> str:
    """A check run by `python` (PATH's) that lacks a module this tool's interpreter has: which
    interpreter ran it, and which one has the module (a venv that is not active)."""
    missing = re.search(r"ModuleNotFoundError: No module named '([\w.]+)'", stderr)
    if missing is None or not os.path.basename(program).startswith("python"):
        return ""
    import importlib.util
    import sys

    top = missing.group(1).split(".")[0]
    used = shutil.which(program) or program
    if importlib.util.find_spec(top) is None or os.path.abspath(used) == os.path.abspath(sys.executable):
        return ""
    return (
        f"the check's {program} is {used}, which cannot import {top}; {sys.executable}, which runs this "
        "tool, can: name that interpreter in the check's command, or activate its venv"
    )


def _python_exception(stderr: str) -> str | None:
    """The exception type a Python script ended with (its traceback's last line), else None: a
    script that raises is failing otherwise than one that exits non-zero on purpose."""
    if "Traceback (most recent call last)" not in stderr:
        return None
    last = stderr.strip().splitlines()[-1]
    match = re.match(r"([A-Za-z_][\w.]*)(:|$)", last)
    return match.group(1) if match else "an exception"


def describe(check) -> str:
    """How a report names the check."""
    if isinstance(check, RerunCheck):
        return check.describe()
    if isinstance(check, (str, os.PathLike)):
        return os.fspath(check)
    if isinstance(check, (list, tuple)):
        return " ".join(os.fspath(a) for a in check)
    return getattr(check, "__qualname__", None) or repr(check)
