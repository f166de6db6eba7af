"""--mlir-reduce: a failing test that used the `jit` fixture is bisected and reduced, with itself
as the check, and a regression test is written beside it (memref_runtime.culprit).

After the test's call failed (its fixtures still set up), the test function runs again in a
child forked from the pytest process, under a report folder of its own: each JitModule it
makes writes down its module, pipeline and opt level (jit/recording.py), and the one whose
function was first called last is taken. Then each candidate of memref-bisect and memref-reduce
is one more such run in a forked child, with MEMREF_RUNTIME_CANDIDATE naming that module: the
test fails "the same way" when it raises the same exception (type and message, volatile parts
masked) or crashes by the same signal. What was found is a section of the test's report,
"memref-reduce"; the regression test is the test's file with the reduced module in place of its
own, `<file>_reduced.py` beside it. pytest_configure imports this module under --mlir-reduce only.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import tempfile
import time

import pytest

from .. import environment
from ..culprit.checks import RerunCheck
from ..culprit.from_test import bisect_and_reduce, with_reduced_module
from ..culprit.isolation import run_forked
from ..culprit.outcome import PASSED, Outcome, ended_outcome, exception_outcome, mask_volatile
from ..culprit.test_module import from_python_test
from ..jit.recording import encode

_EXPLANATION = re.compile(r"^\s*\+ .*\n?", re.M)
TIME_LIMIT = 300.0  # seconds of reduction per failing test
TIMEOUT = 60.0  # seconds of one rerun


def _rerun(item, env: dict):
    """In a forked child: the test function again, with `env`; its Outcome."""
    os.environ.update(env)
    function = item.obj
    arguments = {name: item.funcargs[name] for name in inspect.signature(function).parameters if name in item.funcargs}
    try:
        function(**arguments)
    except BaseException as e:  # noqa: BLE001 - pytest.fail and pytest.skip too: each is an outcome
        outcome = exception_outcome(e)
        # pytest's rewritten assert explains each value (`+  where 15.0 = <JitModule functions: f, g>...`):
        # the values compared stay in the key, not how they were reached.
        return outcome._replace(key=_EXPLANATION.sub("", outcome.key))
    return PASSED


def _forked(item, env: dict, timeout: float) -> Outcome:
    ended = run_forked(lambda: _rerun(item, env), timeout)
    return ended.value if ended.how == "ok" else ended_outcome(ended)


class ReduceOnFailure:
    """The hook that bisects and reduces a failing test that used `jit`."""

    def __init__(self, time_limit: float = TIME_LIMIT, timeout: float = TIMEOUT):
        self.time_limit, self.timeout = time_limit, timeout

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if (
            call.when == "call"
            and report.failed
            and "jit" in getattr(item, "fixturenames", ())
            and not hasattr(report, "wasxfail")
        ):
            report.sections.append(("memref-reduce", self.culprit(item)))
        return report

    def culprit(self, item) -> str:
        """The report of bisecting and reducing `item`'s module (or why there is none)."""
        start = time.perf_counter()
        folder = tempfile.mkdtemp(prefix="memref-reduce-pytest-")
        try:
            first = _forked(item, {environment.REPORT: folder}, self.timeout)
            if not first.failing:
                return "the test passes when it runs again: nothing to bisect or reduce (is it deterministic?)"
            found = from_python_test(folder, None)
        except ValueError as e:
            return f"memref-reduce: {e}"
        check = PytestRerun(item, found, self.timeout)
        stem = os.path.splitext(str(item.path))[0]
        result = bisect_and_reduce(
            check,
            found,
            first.summary,
            bisect=True,
            llvm=True,
            reduce=True,
            write_test=f"{stem}_reduced.py",
            timeout=self.timeout,
            time_limit=self.time_limit,
            run_test=lambda path: _run_pytest(path, item),
        )
        result.seconds = time.perf_counter() - start
        return result.report()


def _run_pytest(path: str, item):
    """The regression test `path`'s copy of `item`, run by a pytest of its own: its Outcome."""
    node = f"{path}::{item.name}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", node],
        capture_output=True,
        text=True,
        cwd=str(item.config.rootpath),
        timeout=600,
    )
    if done.returncode == 0:
        return PASSED
    errors = [line[1:].strip() for line in done.stdout.splitlines() if line.startswith("E ")]
    said = errors[0] if errors else f"pytest exit status {done.returncode}"
    return Outcome(True, mask_volatile(said), f"pytest {node}: {said}")


class PytestRerun(RerunCheck):
    """The pytest test, rerun in a forked child with the candidate in place of its module."""

    def __init__(self, item, module, timeout: float):
        self.item, self.module, self.timeout = item, module, timeout

    def describe(self) -> str:
        return f"the pytest test {self.item.nodeid}"

    def outcome(self, source: str, lowered: str | None, opt_level: int, timeout: float) -> Outcome:
        fd, path = tempfile.mkstemp(prefix="memref_reduce_candidate_", suffix=".mlir")
        with os.fdopen(fd, "w") as f:
            f.write(lowered if lowered is not None else source)
        try:
            env = {environment.CANDIDATE: encode(self.module.sha, lowered is not None, opt_level, path)}
            return _forked(self.item, env, timeout or self.timeout)
        finally:
            os.unlink(path)

    def regression_test(self, path: str, result) -> str:
        with open(self.item.path) as f:
            return with_reduced_module(f.read(), str(self.item.path), self.module, result.module)
