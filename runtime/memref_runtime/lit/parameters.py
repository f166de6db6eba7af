"""The `-D NAME=VALUE` parameters the harness reads, as a table, and how they are read.

A parameter that names nothing (a missing path, an unknown value, two names of one setting that
disagree) stops lit with the reason before any test runs. Parameters the table does not know
are left alone: they belong to the suite's own lit.cfg.py. docs/lit-config.md lists the same
table for users (tests/test_lit_configure.py keeps the two equal).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Collection
from typing import Any, NoReturn, TypeVar, overload

_T = TypeVar("_T")

# name -> (older name still accepted, or None; what it sets)
PARAMETERS = {
    "python": (None, "the interpreter that runs the tests (default: the one running lit)"),
    "filecheck": (None, "the FileCheck to use (LLVM's or the Python `filecheck`)"),
    "not": (None, "LLVM's `not`"),
    "count": (None, "LLVM's `count`"),
    "mlir_python": ("mlir_bindings", "the MLIR Python package: `mlir` or `torch_mlir`"),
    "mlir_python_path": (None, "a folder holding that package (an LLVM build's python_packages/mlir_core)"),
    "mlir_runner_utils": (None, "libmlir_runner_utils"),
    "mlir_c_runner_utils": (None, "libmlir_c_runner_utils"),
    "mlir_runtime": ("runtime", "what `import mlir.runtime` gives the tests: `upstream` or `memref_runtime`"),
    "opt_level": (None, "the default opt level (0-3) of every JitModule and memref_runtime.testing engine"),
    "runtime_verification": (None, "MLIR's runtime verification in every JitModule and testing lowering"),
    "test_pass_mlir_opt": (None, "a same-version mlir-opt with MLIR's test-only passes, or `none`"),
    "mlir_src_root": (None, "<llvm-project>/mlir, for %mlir_src_root and %mlir_src_dir"),
    "llvm_src_root": (None, "<llvm-project>/llvm, for %llvm_src_root"),
    "host_cc": (None, "upstream's %host_cc (default: the system's cc)"),
    "host_cxx": (None, "upstream's %host_cxx (default: the system's c++)"),
    "hardware_tests": (None, "upstream's hardware-specific suites: `auto` (those this CPU can run), `1` or `0`"),
    "mlir_run_x86vector_tests": (None, "upstream's X86Vector tests: `auto` (with AVX-512), `1` or `0` (default)"),
    "mlir_run_amx_tests": (None, "upstream's AMX tests: `auto` (with AMX tile, int8 and bf16), `1` or `0` (default)"),
    "mlir_run_arm_sve_tests": (None, "upstream's Arm SVE tests: `auto` (an AArch64 host with SVE), `1` or `0`"),
    "mlir_run_arm_sme_tests": (None, "upstream's Arm SME tests: `auto` (an AArch64 host with SME), `1` or `0`"),
    "exec_root": (None, "where lit writes the Output/ folders"),
    "python_server": (None, "%PYTHON through a pre-started interpreter (1, the default on Linux) or not (0)"),
    "timing": (None, "a folder where each test process writes where its time went"),
    "record_check_input": (None, "a folder where what each test pipes into FileCheck/count is kept"),
    "perf_tests": (None, "the performance tests, `REQUIRES: perf-tests` (1, the default) or not (0)"),
}


class Parameters:
    """lit's `-D` parameters, read by their names in PARAMETERS; errors stop lit naming the parameter."""

    def __init__(self, lit_config: Any) -> None:
        self.given: dict[str, str] = lit_config.params
        self.fatal: Callable[[str], NoReturn] = lit_config.fatal

    def __contains__(self, name: str) -> bool:
        older = PARAMETERS[name][0]
        return name in self.given or (older is not None and older in self.given)

    @overload
    def get(self, name: str) -> str | None: ...
    @overload
    def get(self, name: str, default: str) -> str: ...
    def get(self, name: str, default: str | None = None) -> str | None:
        """`-D name=...`, or its older name; both given must agree."""
        older = PARAMETERS[name][0]
        given = {n: self.given[n] for n in (name, older) if n and n in self.given}
        if len(set(given.values())) > 1:
            new, old = given.values()
            self.fatal(f"-D {name} and -D {older} name the same setting, got {new!r} and {old!r}")
        return next(iter(given.values()), default)

    def choice(self, name: str, choices: Collection[str], default: str) -> str:
        value = self.get(name, default)
        if value not in choices:
            self.fatal(f"-D {name}: expected one of {', '.join(choices)}, got {value!r}")
        return value

    def path(self, name: str, executable: bool) -> str | None:
        """The path `-D name=...` gives, or None; lit stops when it names nothing there."""
        value = self.get(name)
        if value is None:
            return None
        path = shutil.which(value) if executable else value
        if not path or not (os.access(path, os.X_OK) if executable else os.path.isfile(path)):
            what = "an executable" if executable else "a file"
            self.fatal(f"-D {name}: expected the path of {what}, got {value!r}, which is not one")
        return path

    def parsed(self, name: str, parse: Callable[[str, str], _T]) -> _T | None:
        """`parse(value, "-D name")` of a given parameter (None when not given); its ValueError stops lit."""
        if name not in self:
            return None
        try:
            return parse(self.get(name, ""), f"-D {name}")  # given: the default is never used
        except ValueError as e:
            self.fatal(str(e))
