"""Running a test's RUN lines as lit does: the suite's lit.cfg.py, its test format's before hooks,
substitutions, environment and internal shell; each pipeline stopped before `FileCheck <this
file>`, each RUN line within a time limit, each run judged by the refusal rules of failures.py.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from .. import environment
from ..output_lock import exclusive
from .checks import DEFAULT_PREFIX, Masks
from .errors import RunFailed, Skipped, UpdateError
from .failures import excerpt, run_failure

# FileCheck options that take their value as the next argument.
FILECHECK_VALUE_OPTIONS = {
    "check-prefix",
    "check-prefixes",
    "comment-prefixes",
    "implicit-check-not",
    "input-file",
    "dump-input",
    "dump-input-context",
    "dump-input-filter",
}

# Seconds a RUN line may take (`--timeout`; 0: no limit). A test that hangs must not hang CI.
DEFAULT_TIMEOUT = 300.0


@dataclass
class Step:
    """One `&&`-separated part of a RUN line, after lit's substitutions.

    `command` is lit's parsed pipeline, without its `| FileCheck <this file>`; `prefixes` are
    that FileCheck's check prefixes (None for a step that does not pipe into it) and `filecheck`
    that FileCheck command as lit parsed it; `text` is the RUN line as written in the test."""

    line: int
    text: str
    command: object
    prefixes: list[str] | None
    filecheck: object = None


def make_lit_config(params: dict[str, str]) -> Any:
    """A LitConfig as `lit -D ...` makes one (only the arguments this lit version knows)."""
    import inspect

    import lit.LitConfig

    wanted = dict(
        progname="memref-update-checks",
        path=[],
        quiet=False,
        diagnostic_level="warning",
        useValgrind=False,
        valgrindLeakCheck=False,
        valgrindArgs=[],
        noExecute=False,
        debug=False,
        isWindows=os.name == "nt",
        order="lexical",
        params=dict(params),
    )
    accepted = inspect.signature(lit.LitConfig.LitConfig.__init__).parameters
    return lit.LitConfig.LitConfig(**{k: v for k, v in wanted.items() if k in accepted})


NOT_A_TEST = (
    "not a test of any lit suite (no lit.cfg.py above it, or its suite does not collect it: a helper "
    "module, a lit.local.cfg, an inputs folder): left alone"
)


def discover(inputs: list[str], lit_config: Any) -> list[tuple[str, object]]:
    """(path, lit Test, or UpdateError, or Skipped) for each test file named by `inputs` (files or
    folders). A named file that is not a test (a pre-commit hook passes every changed file) is
    Skipped, with a note; a folder that holds no test is an UpdateError."""
    import lit.discovery

    suites: dict = {}
    local_configs: dict = {}
    found: list[tuple[str, object]] = []
    for given in inputs:
        if not os.path.exists(given):
            found.append((given, UpdateError(f"no such file or folder: {given!r}")))
            continue
        errors = lit_config.numErrors
        try:
            _, tests = lit.discovery.getTests(os.path.abspath(given), lit_config, suites, local_configs)
            tests = list(tests)
        except SystemExit:
            tests = None
        if tests is None or lit_config.numErrors > errors:
            found.append((given, UpdateError("lit could not load the test suite (see lit's message above)")))
        elif os.path.isdir(given):
            if not tests:
                found.append(
                    (
                        given,
                        UpdateError(
                            "no test of any lit suite in this folder: no lit.cfg.py above "
                            "it, or its suite collects nothing there"
                        ),
                    )
                )
            found += sorted(((os.path.relpath(t.getSourcePath()), t) for t in tests), key=lambda pt: pt[0])
        else:
            tests = [t for t in tests if _walked_into(t, lit_config, local_configs)]
            found += [(given, t) for t in tests] or [(given, Skipped(NOT_A_TEST))]
    return found


def _walked_into(test, lit_config, local_configs: dict) -> bool:
    """Whether lit, walking its suite, reaches `test`: no folder on the way is excluded (lit
    builds a test for any file named on its command line, excluded folders included)."""
    import lit.discovery

    path = test.path_in_suite
    for depth in range(len(path) - 1):
        parent = lit.discovery.getLocalConfig(test.suite, path[:depth], lit_config, local_configs)
        if path[depth] in parent.excludes or path[depth] in ("Output", ".svn", ".git"):
            return False
    return True


def filecheck_prefixes(args: list[str], filecheck: list[str], source: str) -> list[str] | None:
    """The check prefixes if `args` run FileCheck on `source` (the test itself), else None."""
    names = {os.path.basename(filecheck[0]) if filecheck else "", "FileCheck", "filecheck", "FileCheck.exe"}
    if filecheck and args[: len(filecheck)] == filecheck:
        rest = args[len(filecheck) :]
    elif args and os.path.basename(args[0]) in names:
        rest = args[1:]
    else:
        return None
    prefixes: list[str] = []
    check_file = None
    it = iter(rest)
    for arg in it:
        if not arg.startswith("-") or arg == "-":
            check_file = check_file or arg
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if not eq and name in FILECHECK_VALUE_OPTIONS:
            value = next(it, "")
        if name == "check-prefix":
            prefixes.append(value)
        elif name == "check-prefixes":
            prefixes += [p for p in value.split(",") if p]
        elif name == "input-file":
            raise UpdateError(
                f"FileCheck reads --input-file={value}, not the command's output: this tool cannot update it"
            )
    if check_file is None or os.path.realpath(check_file) != os.path.realpath(source):
        return None
    return prefixes or [DEFAULT_PREFIX]


def _reads_this_file(node, filecheck, source) -> bool:
    import lit.ShUtil as sh

    if isinstance(node, sh.Seq):
        return _reads_this_file(node.lhs, filecheck, source) or _reads_this_file(node.rhs, filecheck, source)
    return any(filecheck_prefixes([str(a) for a in c.args], filecheck, source) for c in node.commands)


def _and_steps(node) -> list:
    """A RUN line's `a && b && c` as [a, b, c]."""
    import lit.ShUtil as sh

    if isinstance(node, sh.Seq) and node.op == "&&":
        return _and_steps(node.lhs) + _and_steps(node.rhs)
    return [node]


def _prepare(test, lit_config) -> tuple[list, list]:
    """(substitutions, preamble commands) the suite's test format adds for `test`, as lit's
    run of it would; Skipped or UpdateError when the format ends the test before its RUN lines."""
    import lit.Test

    test_format = test.config.test_format
    prepare = getattr(test_format, "prepare", None)
    if prepare is None:  # lit's own ShTest
        return (
            list(getattr(test_format, "extra_substitutions", [])),
            list(getattr(test_format, "preamble_commands", [])),
        )
    result, substitutions, preamble = prepare(test, lit_config)
    if result is None:
        return substitutions, preamble
    if result.code == lit.Test.UNSUPPORTED:
        raise Skipped(result.output)
    raise UpdateError(
        f"the suite's test format ends the test as {result.code.name} before its RUN lines: {result.output}"
    )


def filecheck_command(test: Any, substitutions: list) -> list[str]:
    """The words `FileCheck` becomes in `test`'s RUN lines."""
    import lit.TestRunner as runner

    conditions = {feature: True for feature in test.config.available_features}
    expanded = runner.applySubstitutions(
        ["FileCheck"], substitutions, conditions, recursion_limit=test.config.recursiveExpansionLimit
    )
    return shlex.split(expanded[0])


def substitutions_of(test: Any, extra: list) -> list:
    """`extra`, then lit's default substitutions of `test` (%s, %t, ...) and the suite's own."""
    import lit.TestRunner as runner

    tmp_dir, tmp_base = runner.getTempPaths(test)
    return list(extra) + runner.getDefaultSubstitutions(test, tmp_dir, tmp_base)


def script_steps(test: Any, lit_config: Any, require_filecheck: bool = True) -> list[Step]:
    """The test's preamble and RUN lines after lit's substitutions, split at `&&`; UpdateError
    when none pipes into `FileCheck <this file>`, if `require_filecheck`."""
    import lit.ShUtil as sh
    import lit.Test
    import lit.TestRunner as runner

    if test.config.unsupported:
        raise Skipped("the suite marks it unsupported")
    extra, preamble = _prepare(test, lit_config)
    parsed = runner.parseIntegratedTestScript(test, require_script=not preamble)
    if isinstance(parsed, lit.Test.Result):
        if parsed.code == lit.Test.UNSUPPORTED:
            raise Skipped(parsed.output)
        raise UpdateError(f"lit cannot run it: {parsed.output}")
    if test.isExpectedToFail():
        raise Skipped("it is expected to fail (XFAIL)")
    for directive in parsed:
        if "%if" in getattr(directive, "command", ""):
            raise UpdateError(
                f"RUN line {directive.start_line_number} uses %if: what it checks depends on the configuration "
                "and one run sees only one side; mark the file `UPDATE-CHECKS: hand-written: <reason>`"
            )
    script = [runner.buildPdbgCommand("preamble command line", ln) for ln in preamble] + list(parsed)
    # The lines as written (substitution directives, DEFINE/REDEFINE, expand to no line).
    written = [d if isinstance(d, str) else d.command for d in script if not isinstance(d, runner.SubstDirective)]
    substitutions = substitutions_of(test, extra)
    conditions = {feature: True for feature in test.config.available_features}
    expanded = runner.applySubstitutions(
        script, substitutions, conditions, recursion_limit=test.config.recursiveExpansionLimit
    )
    filecheck = filecheck_command(test, substitutions)
    source = test.getSourcePath()

    steps = []
    for raw, ln in zip(written, expanded):
        m = re.fullmatch(runner.kPdbgRegex, ln)
        where, command = (m.group(1), m.group(2)) if m else ("RUN", ln)
        number = re.search(r"line (\d+)", where)
        line = int(number.group(1)) if number else 0
        m = re.fullmatch(runner.kPdbgRegex, raw)
        text = (m.group(2) if m else raw).strip()
        try:
            node = sh.ShParser(command.strip(), lit_config.isWindows, test.config.pipefail).parse()
        except Exception as e:  # lit's parser raises bare ValueErrors
            raise UpdateError(f"RUN line {line}: lit's shell cannot parse {command.strip()!r}: {e}") from e
        for step in _and_steps(node):
            prefixes, checker = None, None
            if isinstance(step, sh.Pipeline):
                prefixes = filecheck_prefixes([str(a) for a in step.commands[-1].args], filecheck, source)
            if prefixes is not None:
                if len(step.commands) == 1:
                    raise UpdateError(f"RUN line {line}: FileCheck reads no command's output")
                checker = step.commands[-1]
                step = sh.Pipeline(step.commands[:-1], step.negate, step.pipe_err)
            elif _reads_this_file(step, filecheck, source):
                raise UpdateError(
                    f"RUN line {line}: FileCheck of this file inside `;`, `||` or `&`, or not at "
                    "the end of its pipeline: split the RUN line so that it ends in `| FileCheck %s`"
                )
            steps.append(Step(line, text, step, prefixes, checker))
    if require_filecheck and not any(step.prefixes is not None for step in steps):
        raise UpdateError("no RUN line pipes into `FileCheck %s`: nothing to generate")
    return steps


@dataclass
class Execution:
    """What running one step gave: lit's exit status (None if it never started), the output,
    lit's result of each command, whether the time limit killed it."""

    status: int | None
    out: str
    err: str
    results: list
    timed_out: bool


def execute(test: Any, command: Any, timeout: float = 0) -> Execution:
    """Runs `command` (a parsed lit shell command) as lit's internal shell runs a RUN line: the
    test's environment, its exec folder as cwd; with `timeout` > 0, lit kills the process tree
    (with psutil) when it runs out."""
    import lit.TestRunner as runner

    tmp_dir, _ = runner.getTempPaths(test)
    os.makedirs(tmp_dir, exist_ok=True)
    shell_env = runner.ShellEnvironment(os.path.dirname(test.getExecPath()), test.config.environment)
    shell_env.env[environment.LIT_CURRENT_TESTCASE] = test.getFullName()
    results: list = []
    status, timeout_info = runner.executeShCmd(command, shell_env, results, timeout=timeout)
    return Execution(
        status,
        "".join(r.stdout for r in results),
        "".join(r.stderr for r in results),
        results,
        timeout_info is not None,
    )


def run_checks(
    test: Any, lit_config: Any, timeout: float = DEFAULT_TIMEOUT, allow_traceback: bool = False
) -> list[tuple[Step, str]]:
    """Runs the test's RUN lines in order; for each step that pipes into FileCheck of this file,
    (the step, what would have reached FileCheck). Raises RunFailed for a run that failed or ran
    out of time (each RUN line gets `timeout` seconds; 0: no limit)."""
    import lit.TestRunner as runner

    with exclusive(runner.getTempPaths(test)[1]):  # a lit run of the same test beside it waits
        return _run_checks(test, lit_config, timeout, allow_traceback)


def _run_checks(test: Any, lit_config: Any, timeout: float, allow_traceback: bool) -> list[tuple[Step, str]]:
    outputs: dict[str, str] = {}  # one run of a command that several RUN lines check
    started: dict[int, float] = {}
    runs = []
    for step in script_steps(test, lit_config):
        key = repr(step.command)
        output = outputs.get(key) if step.prefixes is not None else None
        if output is None:
            begun = started.setdefault(step.line, time.monotonic())
            left = timeout - (time.monotonic() - begun) if timeout else 0
            if timeout and left <= 0:
                raise RunFailed("timed-out", step.line, step.text, _time_limit(timeout))
            done = execute(test, step.command, timeout=left)
            if done.timed_out:
                raise RunFailed("timed-out", step.line, step.text, _time_limit(timeout), excerpt(done.out + done.err))
            failure = run_failure(done.status, done.results, done.out, done.err, allow_traceback)
            if failure:
                raise RunFailed("failed", step.line, step.text, *failure)
            output = outputs[key] = done.out
        if step.prefixes is not None:
            runs.append((step, output))
    return runs


def _time_limit(timeout: float) -> str:
    return f"ran out of time: more than {timeout:g} s (--timeout {timeout:g}); its processes were killed"


def run_to_run_masks(test: Any) -> Masks:
    """The run-to-run paths of `test`: its Output folder, the suite's exec root, the temp dir,
    and the suite's source root."""
    import lit.TestRunner as runner

    tmp_dir, _ = runner.getTempPaths(test)
    return Masks(
        whole_paths=(tmp_dir, test.suite.exec_root, tempfile.gettempdir()), source_roots=(test.suite.source_root,)
    )
