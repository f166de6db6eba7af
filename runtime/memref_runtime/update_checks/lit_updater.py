"""`lit --update-tests`: memref-update-checks as one of lit's test updaters.

With `--update-tests`, lit (23, the version used here) calls each function of
`lit_config.test_updaters` as `updater(result, test, commands)` for each command of a failing
RUN line that exited non-zero (`result`: that command's ShellCommandResult; `commands`: the
test's script), in list order, until one returns a message. lit prints the message under the
test and still reports the test as failed for this run; with `ALLOW_RETRIES:` it runs the test
again, and a pass then is "Passed After Update" (FIXED). lit's own `diff_test_updater` comes
first and acts only on a failing `diff`; this one acts only on a failing `FileCheck <the test
file>` and returns None for every other command, so the two never handle the same failure.

For that failure it does what `memref-update-checks <test>` does, with the same refusal rules:
it runs the test's RUN lines again, and a run that fails (a non-zero exit before FileCheck, a
signal, a traceback, an "Exception ignored" report) or runs out of time writes nothing.
"""

from __future__ import annotations

import os
from typing import Any

from .errors import UpdateError
from .running import (
    DEFAULT_TIMEOUT,
    filecheck_command,
    filecheck_prefixes,
    substitutions_of,
)
from .update import headline, report, update_test

PROG = "memref-update-checks"


def _checks_this_test(args: list, test) -> bool:
    """Whether `args` (a command lit ran) is FileCheck reading `test`'s own file."""
    words = [str(a) for a in args]
    try:
        return (
            filecheck_prefixes(words, filecheck_command(test, substitutions_of(test, [])), test.getSourcePath())
            is not None
        )
    except UpdateError:  # FileCheck --input-file: not the output of a command of the test
        return False


class CheckLinesUpdater:
    """lit's test updater for a failing `FileCheck <test file>`: rewrites the test's CHECK lines."""

    def __init__(self, lit_config: Any) -> None:
        # lit calls updaters without its LitConfig; the test's RUN lines are parsed with it.
        self.lit_config = lit_config

    def __call__(self, result: Any, test: Any, commands: Any) -> str | None:
        if not result.exitCode or not _checks_this_test(result.command.args, test):
            return None  # not ours (and some lit versions called updaters on passing commands too)
        # lit's own --timeout, else the tool's default: a test that hangs must not hang lit.
        timeout = test.config.maxIndividualTestTime or DEFAULT_TIMEOUT
        path = os.path.relpath(test.getSourcePath())
        done = update_test(path, test, self.lit_config, timeout=timeout)
        if done.status == "updated":
            then = (
                "lit runs it again, as its ALLOW_RETRIES says"
                if getattr(test, "allowed_retries", 0)
                else "lit reports this run as failed: run the test again to check the new lines"
            )
            return f"{PROG}: {headline(done)}\n{report(done)}".rstrip("\n") + f"\n({then})"
        return f"{PROG}: {path}: not updated: " + NOT_UPDATED[done.status].format(message=done.message)


# Why a test was not updated, by FileResult status.
NOT_UPDATED = {
    "unchanged": "the CHECK lines it generates are the ones in the file, so FileCheck fails on a line it does "
    "not write (CHECK-NOT, -SAME, -DAG, -COUNT) or on output that differs from run to run",
    "hand-written": "its CHECK lines are hand-written ({message})",
    "skipped": "lit would not run it ({message})",
    "failed": "its run failed: {message}",
    "timed-out": "{message}",
    "error": "{message}",
}


def register_test_updater(lit_config: Any) -> None:
    """Adds the updater to `lit_config.test_updaters` (where lit has it), once: lit.cfg.py may be loaded
    by more than one suite of a run."""
    updaters = getattr(lit_config, "test_updaters", None)
    if updaters is not None and not any(isinstance(u, CheckLinesUpdater) for u in updaters):
        updaters.append(CheckLinesUpdater(lit_config))
