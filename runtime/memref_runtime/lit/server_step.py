"""The lit side of the harness's speed features (configure()'s last step).

- `-D python_server=1|0`: `%PYTHON` runs each test command in a child forked from a pre-started
  interpreter (memref_runtime.pyserver) instead of a fresh one. The servers of a lit run live
  in a private folder (pyserver/lifecycle.py), and end with the lit run (at exit here, or when
  they see this process end).
- `-D record_check_input=DIR`: what each test pipes into FileCheck or count is also written to
  DIR/<test>.input (benchmarks/compare_python_server.py diffs it between two runs).
- `-D timing=DIR`: each test process writes where its time went to DIR (memref_runtime.process.timing;
  benchmarks/suite.py reads it).

Runs in lit's own interpreter: nothing here imports numpy or MLIR.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from ..environment import PYTHON_SERVER_DIR, PYTHON_SERVER_OWNER, TIMING
from ..pyserver.lifecycle import client_command, prestart, start_run, unsupported_reason
from .test_format import Before

DEFAULT_PYTHON_SERVER = True


def configure(config: Any, lit_config: Any, params: Mapping[str, str], parse_flag: Callable[[str, str], bool]) -> None:
    """The server behind %PYTHON, input recording, timing (configure()'s last step: it rewrites
    %PYTHON and needs the final environment)."""
    wanted = parse_flag(params.get("python_server", str(int(DEFAULT_PYTHON_SERVER))), "-D python_server")
    reason = unsupported_reason()
    if wanted and reason:
        if "python_server" in params:
            lit_config.warning(f"-D python_server=1: {reason}; every test runs in a fresh interpreter")
        wanted = False
    if wanted:
        folder = start_run()
        config.environment[PYTHON_SERVER_DIR] = folder
        config.environment[PYTHON_SERVER_OWNER] = str(os.getpid())
        config.available_features.add("python-server")
        python = next((_unquoted(v) for k, v in config.substitutions if k == "%PYTHON"), sys.executable)
        config.substitutions[:] = [
            (key, client_command(python) if key == "%PYTHON" else value) for key, value in config.substitutions
        ]
        if not LISTING_OPTIONS.intersection(sys.argv[1:]):  # tests will run
            prestart(python, config.environment)
    if params.get("timing"):
        config.environment[TIMING] = os.path.abspath(params["timing"])
    if params.get("record_check_input"):
        folder = os.path.abspath(params["record_check_input"])
        os.makedirs(folder, exist_ok=True)
        config.test_format.before_hooks.append(InputRecorder(folder))


# lit options that list and stop before any test runs (--show-all and the other --show-<result>
# options run the tests; --version exits before any configuration is read).
LISTING_OPTIONS = frozenset({"--show-suites", "--show-tests", "--show-used-features"})


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value


def input_name(test_name: str) -> str:
    """The file name under which a test's checked input is recorded."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", test_name.split("::", 1)[-1].strip()) + ".input"


class InputRecorder:
    """Before hook: `| FileCheck` and `| count` become `| tee -a DIR/<test>.input | ...`.

    A plain class (no closure): lit pickles the test format, hooks included, for its workers.
    """

    def __init__(self, folder: str):
        self.folder = folder

    def __call__(self, test, lit_config):
        path = os.path.join(self.folder, input_name(test.getFullName()))
        if os.path.exists(path):
            os.unlink(path)  # a rerun starts afresh
        # lit escapes backslashes in replacements (no group references): a lookahead instead.
        return Before(substitutions=[(r"\|\s*(?=(FileCheck|count)\b)", f"| tee -a {path} | ")])
