"""The lit test format of a memref-runtime suite: lit's ShTest, with hooks before and after each test.

configure() registers the harness's hooks on one instance (config.test_format); a lit.cfg.py
may add its own:

- a *before* hook, `hook(test, lit_config) -> Before | None`, runs ahead of the RUN lines. It
  may end the test with a result of its own (UNSUPPORTED with a reason, say), add per-test
  substitutions (applied before the configuration's own) or preamble commands.
- an *after* hook, `hook(test, lit_config, result) -> result`, may add to what lit prints
  about the test (a crash report, say) or change the result.

A test runs with its Output files to itself (output_lock.py): another lit run of the same suite in
the same exec root (a second terminal, CI's other lane, memref-update-checks, memref-reduce)
that comes to the same test waits until this one ends. Two runs share every test's `%t` and
failure report folder, and one's `rm -rf %t` deletes the files the other is about to read.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import lit.formats
import lit.Test
import lit.TestRunner

from ..output_lock import exclusive


def parsed_script(test: Any, require_script: bool) -> Any:
    """lit's parseIntegratedTestScript of `test` (its script, or the Result lit would give), read
    from a copy: each parse adds the file's REQUIRES, UNSUPPORTED and XFAIL lines to the test's
    own lists, and lit parses the test again when it runs it ("requires: torch, torch")."""
    probe = copy.copy(test)
    probe.xfails, probe.requires, probe.unsupported = [], [], []
    return lit.TestRunner.parseIntegratedTestScript(probe, require_script=require_script)


@dataclass
class Before:
    """What a before hook asks for: a result that ends the test, or additions to the run."""

    result: lit.Test.Result | None = None
    substitutions: list = field(default_factory=list)
    preamble: list = field(default_factory=list)


class MemrefRuntimeShTest(lit.formats.ShTest):
    """ShTest (lit's internal shell, unless asked for the external one) with before/after hooks;
    see the module docstring."""

    def __init__(self, execute_external: bool = False) -> None:
        super().__init__(execute_external=execute_external)
        self.before_hooks: list = []
        self.after_hooks: list = []

    def prepare(self, test: Any, lit_config: Any) -> tuple:
        """(a result that ends the test or None, substitutions, preamble commands): what the before
        hooks ask for. memref-update-checks runs the RUN lines with the same."""
        substitutions, preamble = list(self.extra_substitutions), list(self.preamble_commands)
        for hook in self.before_hooks:
            before = hook(test, lit_config)
            if before is None:
                continue
            if before.result is not None:
                return before.result, substitutions, preamble
            substitutions += before.substitutions
            preamble += before.preamble
        return None, substitutions, preamble

    def execute(self, test: Any, lit_config: Any) -> Any:
        with exclusive(lit.TestRunner.getTempPaths(test)[1]) as waited:
            result = self._execute(test, lit_config)
        if waited:
            result.output = (result.output or "").rstrip("\n") + ("\n\n" if result.output else "") + waited + "\n"
        return result

    def _execute(self, test: Any, lit_config: Any) -> Any:
        result, substitutions, preamble = self.prepare(test, lit_config)
        if result is not None:
            return result
        result = lit.TestRunner.executeShTest(test, lit_config, self.execute_external, substitutions, preamble)
        for hook in self.after_hooks:
            result = hook(test, lit_config, result)
        return result
