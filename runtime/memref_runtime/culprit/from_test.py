"""memref-reduce TEST: from a failing lit test to its culprit and its reduced module, in one command.

1. The test runs once, as lit runs it (lit_run.py); it must fail.
2. Its module, pipeline and opt level are found (test_module.py): a `.py` test's JitModule, as
   the run recorded it; a `.mlir` test's file and the `mlir-opt %s ...` command that lowers it.
3. The check is the test itself, rerun with each candidate in place of that module
   (LitTestCheck): bisect_pipeline names the pass (or LLVM's optimization), then reduce shrinks
   the module while the test keeps failing the same way.
4. The regression test is the test with the reduced module in place of its own: a copy of a
   `.py` test whose module was a literal of it (or a file it names, then written beside that
   file), or of a `.mlir` test (its RUN lines, the reduced module, its CHECK lines up to the one
   that failed). It is run once, to say that it fails now.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from .. import environment
from ..jit.recording import encode
from .checks import DEFAULT_TIMEOUT, RerunCheck
from .lit_run import LitTest
from .outcome import Outcome
from .test_module import FoundModule, from_mlir_test, from_python_test

_CHECK_ERROR = re.compile(r"<test>:(\d+):\d+: error:")
_DIRECTIVE = re.compile(r"^\s*(//|#)\s*(RUN|REQUIRES|UNSUPPORTED|XFAIL|ALLOW_RETRIES|END)\b")


class LitTestCheck(RerunCheck):
    """The lit test, rerun with the candidate in place of its module."""

    def __init__(self, lit: LitTest, module: FoundModule):
        self.lit, self.module = lit, module

    def describe(self) -> str:
        return f"the lit test {self.lit.path}"

    def outcome(self, source: str, lowered: str | None, opt_level: int, timeout: float) -> Outcome:
        fd, path = tempfile.mkstemp(prefix="memref_reduce_candidate_", suffix=".mlir")
        with os.fdopen(fd, "w") as f:
            f.write(lowered if lowered is not None else source)
        try:
            if self.module.sha is not None:
                env = {environment.CANDIDATE: encode(self.module.sha, lowered is not None, opt_level, path)}
                run = self.lit.run(env, timeout=timeout)
            else:
                run = self.lit.run(
                    rewrite=lambda step: self._rewritten(step, path, lowered is not None, opt_level), timeout=timeout
                )
            run.close()
            return run.outcome
        finally:
            os.unlink(path)

    def _rewritten(self, step, path: str, lowered: bool, opt_level: int):
        """A `.mlir` test's RUN line with the candidate at `path` where the test file was: on the
        failing line, for a lowered candidate, without the passes; mlir-runner at `opt_level`."""
        import lit.ShUtil as sh

        if not isinstance(step.command, sh.Pipeline):
            return step.command
        module, commands = self.module, list(step.command.commands)
        for c, command in enumerate(commands):
            args = [str(a) for a in command.args]
            if step.line == module.step_line and c == module.command and lowered:
                args = [a for i, a in enumerate(args) if i not in module.pass_args]
            args = [path if not a.startswith("-") and os.path.realpath(a) == self.lit.source else a for a in args]
            if (
                step.line == module.step_line
                and module.runner
                and c == module.runner[0]
                and opt_level != module.opt_level
            ):
                args = [a for a in args if not re.fullmatch(r"-O[0-3]", a)] + [f"-O{opt_level}"]
            commands[c] = sh.Command(args, command.redirects)
        return sh.Pipeline(commands, step.command.negate, step.command.pipe_err)

    def regression_test(self, path: str, result) -> str:
        with open(self.lit.source) as f:
            original = f.read()
        if self.lit.source.endswith(".mlir") and self.module.sha is None:
            return self._mlir_regression(original, result)
        return with_reduced_module(original, self.lit.source, self.module, result.module)

    def _mlir_regression(self, original: str, result) -> str:
        """The test's directives, the reduced module, and its CHECK lines up to the one that failed."""
        failed_at = _CHECK_ERROR.search(result.failure_key or "")
        last = int(failed_at.group(1)) if failed_at else None
        lines = original.splitlines()
        directives = [line for line in lines if _DIRECTIVE.match(line)]
        prefixes = sorted({p for step in self.lit.steps for p in step.prefixes or ()})
        check = re.compile(r"^\s*//\s*(" + "|".join(map(re.escape, prefixes)) + r")(-[A-Z]+(-\d+)?)?\s*:")
        checks = [line for n, line in enumerate(lines, 1) if check.match(line) and (last is None or n <= last)]
        # No words of the failure here: FileCheck would read `CHECK-NEXT:` in a comment as a directive.
        header = [
            f"// Regression test written by memref-reduce from {os.path.basename(self.lit.source)} "
            f"({result.ops_before} -> {result.ops_after} ops): it fails while the bug is there.",
            "//",
        ]
        return "\n".join(header + directives + ["", result.module.strip(), ""] + checks) + "\n"


def with_reduced_module(original: str, test_path: str, module: FoundModule, reduced: str) -> str:
    """The test `original` (the text of `test_path`) with `reduced` in place of `module`: where
    the module was a literal of the test, the literal; where it was a file the test names, the
    name, of `<stem>_reduced<suffix>` written beside it (on the line that made the JitModule if
    the name is there, else everywhere). ValueError when it was neither."""
    given = module.origin.get("text")
    if given:
        if given in original:
            return original.replace(given, "\n" + reduced.strip() + "\n", 1)
    path = module.origin.get("file")
    if path:
        name = os.path.basename(path)
        stem, suffix = os.path.splitext(name)
        quoted = re.compile(r"([\"'])" + re.escape(name) + r"([\"'])")
        lines = original.splitlines(keepends=True)
        site = module.site
        at = (
            site[1] - 1
            if site and os.path.realpath(site[0]) == os.path.realpath(test_path) and site[1] <= len(lines)
            else None
        )
        targets = (
            [at]
            if at is not None and quoted.search(lines[at])
            else [i for i, line in enumerate(lines) if quoted.search(line)]
        )
        if targets:
            with open(os.path.join(os.path.dirname(path), f"{stem}_reduced{suffix}"), "w") as f:
                f.write(reduced)
            for i in targets:
                lines[i] = quoted.sub(rf"\g<1>{stem}_reduced{suffix}\g<2>", lines[i])
            return "".join(lines)
    raise ValueError(
        "the module is neither a literal of the test nor a file it names by its name (the reduced module is in -o OUT)"
    )


@dataclass
class CulpritOfTest:
    """What memref-reduce TEST found: the failure, the module, the bisection and the reduction."""

    failure: str
    module: FoundModule
    bisection: Any = None  # BisectResult
    reduction: Any = None  # Reduction
    regression: str | None = None  # how the written regression test ends now
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def report(self) -> str:
        lines = [
            f"the test fails: {self.failure}",
            f"its module: {self._what()}; pipeline {self.module.pipeline}, -O{self.module.opt_level}",
        ]
        lines += [f"  {n}" for n in self.module.notes + self.notes]
        if self.bisection is not None:
            lines.append(self.bisection.report())
        if self.reduction is not None:
            lines.append(self.reduction.report())
        if self.regression:
            lines.append(f"  the regression test, run now: {self.regression}")
        lines.append(f"in {self.seconds:.1f} s")
        return "\n".join(lines)

    def _what(self) -> str:
        if self.module.sha is None:
            return f"the test file, lowered by RUN line {self.module.step_line}"
        return "a JitModule" + (f" (its @{self.module.function} called)" if self.module.function else "")


def culprit_of_test(
    path: str,
    *,
    module: int | None = None,
    params: dict | None = None,
    bisect: bool = True,
    llvm: bool = True,
    reduce: bool = True,
    write_test: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    time_limit: float = 300.0,
) -> CulpritOfTest:
    """Runs lit test `path`, finds the module it fails with, bisects its pipeline and reduces it
    with the test as the check; writes the regression test to `write_test` (default: beside the
    test, `<name>_reduced.<ext>`). ValueError when the test passes or its module cannot be found."""
    start = time.perf_counter()
    lit = LitTest(path, params)
    first = lit.run(timeout=timeout)
    try:
        if not first.outcome.failing:
            raise ValueError(f"TEST: {path} passes: nothing to bisect or reduce")
        failed_at = re.match(r"RUN line (\d+)", first.outcome.key)
        line = int(failed_at.group(1)) if failed_at else 0
        found = (
            from_python_test(first.folder, module) if not lit.source.endswith(".mlir") else from_mlir_test(lit, line)
        )
    finally:
        first.close()
    stem, suffix = os.path.splitext(lit.source)
    result = bisect_and_reduce(
        LitTestCheck(lit, found),
        found,
        first.outcome.summary,
        bisect=bisect,
        llvm=llvm,
        reduce=reduce,
        write_test=write_test or f"{stem}_reduced{suffix}",
        timeout=timeout,
        time_limit=time_limit,
        run_test=lambda test: _run_lit_test(test, timeout),
    )
    result.seconds = time.perf_counter() - start
    return result


def _run_lit_test(path: str, timeout: float) -> Outcome:
    ran = LitTest(path).run(timeout=timeout)
    ran.close()
    return ran.outcome


def bisect_and_reduce(
    check: RerunCheck,
    found: FoundModule,
    failure: str,
    *,
    bisect: bool,
    llvm: bool,
    reduce: bool,
    write_test: str | None,
    timeout: float,
    time_limit: float,
    run_test=None,
) -> CulpritOfTest:
    """bisect_pipeline, then reduce, of `found` with the test rerun as the check (`check`); the
    regression test written to `write_test`, then run by `run_test(path) -> Outcome`."""
    result = CulpritOfTest(failure, found)
    if bisect:
        from .bisect import bisect_pipeline

        result.bisection = bisect_pipeline(
            found.source, found.pipeline, check, opt_level=found.opt_level, llvm=llvm, timeout=timeout
        )
    if not reduce:
        return result
    from .reduction import reduce as reduce_module

    try:
        result.reduction = reduce_module(
            found.source,
            check,
            opt_level=found.opt_level,
            timeout=timeout,
            time_limit=time_limit,
            write_test=write_test,
        )
    except ValueError as e:
        result.notes.append(f"no reduction: {e}")
        return result
    if result.reduction.test and run_test is not None:
        try:
            ran = run_test(result.reduction.test)
        except ValueError as e:
            result.regression = f"could not run it: {e}"
            return result
        same = _comparable(ran.key) == _comparable(result.reduction.failure_key)
        result.regression = (
            "PASSES (it should fail while the bug is there)"
            if not ran.failing
            else f"fails {'the same way as the test' if same else 'otherwise than the test'}: {ran.summary}"
        )
    return result


def _comparable(key: str) -> str:
    """The first line of a test's failure key without line numbers, which a copy with another
    module shifts (and a regression test's runner may report the rest otherwise)."""
    line = key.strip().splitlines()[0] if key.strip() else ""
    return re.sub(r"<test>:\d+:\d+", "<test>", re.sub(r"^RUN line \d+", "RUN line", line))
