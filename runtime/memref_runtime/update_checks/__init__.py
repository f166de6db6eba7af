"""memref-update-checks: write a lit test's CHECK lines from what the test really prints.

The workflow of LLVM's `update_test_checks.py` and MLIR's `generate-test-checks.py` for this
suite: run the test's RUN lines as lit would (the suite's own `lit.cfg.py`, test format,
substitutions, environment and internal shell), stop each pipeline before `FileCheck %s`, and
turn what would have reached FileCheck into CHECK lines. One module per concern:

  running.py    the RUN lines: lit's config, substitutions and shell; the time limit
  failures.py   the refusal rules: when a run failed, so that nothing is written from it
  checks.py     output -> sections -> CHECK lines, run-to-run values masked
  rewrite.py    where a file's CHECK lines are and where new ones go
  update.py     one file or many: run, generate, rewrite (or compare), report what was written
  cli.py        the command line (`memref-update-checks`, `python -m memref_runtime.update_checks`)
  lit_updater.py  `lit --update-tests`: the same update for a test whose FileCheck failed

A file with `UPDATE-CHECKS: hand-written: <reason>` is left alone; one with
`UPDATE-CHECKS: allow-traceback: <reason>` may print tracebacks (docs/update-checks.md).

    memref-update-checks lit_tests/my_case.py         # rewrite; prints what it wrote
    memref-update-checks --check lit_tests            # CI: exit 1 and a diff if out of date
    memref-update-checks -D mlir_python=torch_mlir lit_tests/i1_memref_bool.py
    lit --update-tests lit_tests                      # the failing tests' CHECK lines

Exit status: 0 done (or up to date), 1 `--check` found a file to update, 2 a file was not
updated (an error, a failed run, a timeout).

Importing this package imports neither MLIR nor lit (lit is imported when a test runs); its
modules import each other relatively, so that lit.cfg.py can load it by path under a name of
its own without importing memref_runtime (and so numpy) into lit's interpreter.
"""

from __future__ import annotations

from .checks import Masks, check_pattern, split_sections
from .cli import main
from .errors import RunFailed, Skipped, UpdateError
from .lit_updater import CheckLinesUpdater, register_test_updater
from .running import DEFAULT_TIMEOUT
from .update import FileResult, update_file, update_files

__all__ = [
    "UpdateError",
    "RunFailed",
    "Skipped",
    "FileResult",
    "update_file",
    "update_files",
    "check_pattern",
    "split_sections",
    "Masks",
    "DEFAULT_TIMEOUT",
    "main",
    "CheckLinesUpdater",
    "register_test_updater",
]
