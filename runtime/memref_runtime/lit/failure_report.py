"""The failure report in `lit -v`: what a failed test's Python processes printed, and how they ended.

lit shows a failed test's commands and the output of the last one. Under
`%PYTHON %s 2>&1 | FileCheck %s` everything the test printed went to FileCheck, which shows at
most a few lines around its first error, and a crash shows only "exit status: -11". Here:

- before a test, a folder `Output/<test>.report/` is made and its path exported to the test's
  commands as MEMREF_RUNTIME_REPORT (a preamble command); each Python test process copies its
  fds 1 and 2 there and records how it ended (memref_runtime/process/report.py, run by the site
  hook `process/_site/sitecustomize.py`);
- after a failed test, this module appends to lit's output, for each Python process
  (process/failure_report.py reads the folder), how it ended (exit status, or the signal's
  name) and the last `TEST:` label it printed; for those that failed, everything they printed
  in the order it happened, which holds the exception with MLIR's diagnostics, or on a crash
  the Python stack and the native one. A passed test's folder is removed.

configure() calls `install(config.test_format)`; nothing here imports numpy or MLIR.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import lit.Test
import lit.TestRunner

from ..environment import REPORT as REPORT_ENV
from ..process.failure_report import format_report
from .test_format import Before, MemrefRuntimeShTest, parsed_script


def report_folder(test: Any) -> str:
    """`Output/<test>.report`, next to lit's own `%t` files of `test`."""
    _, tmp_base = lit.TestRunner.getTempPaths(test)
    return tmp_base + ".report"


class FailureReport:
    """The before and after hooks of the suite's test format (test_format.py)."""

    def before(self, test: Any, lit_config: Any) -> Before | None:
        # A preamble makes lit run a file that has no RUN line: only tests lit would run get one.
        if isinstance(parsed_script(test, require_script=True), lit.Test.Result):
            return None
        folder = report_folder(test)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder, exist_ok=True)
        return Before(preamble=[f'export {REPORT_ENV}="{folder}"'])

    def after(self, test: Any, lit_config: Any, result: Any) -> Any:
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


def install(test_format: MemrefRuntimeShTest) -> FailureReport:
    """Registers the failure report's hooks on `test_format` (a MemrefRuntimeShTest)."""
    report = FailureReport()
    test_format.before_hooks.append(report.before)
    test_format.after_hooks.append(report.after)
    return report
