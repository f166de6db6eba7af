"""The session header: the MLIR in use, the suite settings and the FileCheck, found without
importing the bindings (a pytest run that never uses MLIR does not pay for loading it)."""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import subprocess

from .. import settings as suite
from ..bindings import ENV_VAR as BINDINGS_ENV
from ..bindings import PROVIDERS, package_folders, package_opt_tool
from . import filecheck
from .options import Settings


@functools.cache
def _distribution(name: str) -> str | None:
    """`dist version` of the distribution that installs package `name`, if any."""
    for dist in importlib.metadata.packages_distributions().get(name, []):
        return f"{dist} {importlib.metadata.version(dist)}"
    return None


def _tool_llvm_version(name: str, folders: list[str]) -> str | None:
    tool = package_opt_tool(name, folders)
    if not tool:
        return None
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"LLVM version (\S+)", out)
    return match.group(1) if match else None


def mlir_line(settings: Settings) -> str:
    """`MLIR 22.1.8 (mlir: xtc-mlir-python-bindings 22.1.8.4, from <folder>)`, or why there is none."""
    wanted = settings.python or os.environ.get(BINDINGS_ENV)
    for name in (wanted,) if wanted else PROVIDERS:
        folders = package_folders(name)
        if not folders:
            continue
        dist = _distribution(name)
        version = re.match(r"(\d+\.\d+\.\d+)", dist.split()[-1]) if dist else None
        mlir = version.group(1) if version else _tool_llvm_version(name, folders) or "(version unknown)"
        alias = "; `import mlir` gives it" if name != "mlir" else ""
        return f"MLIR {mlir} ({name}: {dist or 'no distribution'}, from {folders[0]}{alias})"
    return f"MLIR: no bindings package ({', '.join((wanted,) if wanted else PROVIDERS)}) can be found"


def lines(settings: Settings) -> list[str]:
    """The lines memref-runtime adds to pytest's session header."""
    default = suite.default_opt_level()
    levels = (
        f"opt levels {', '.join(map(str, settings.opt_levels))} for tests that use `jit` "
        f"(--mlir-opt-levels), {default} for the others"
        if settings.opt_levels
        else f"opt level {default}"
    )
    verification = "on" if suite.default_runtime_verification() else "off"
    found = filecheck.find(settings.filecheck)
    isolation = ("every test" if settings.isolate else "tests marked isolated") + (
        f", timeout {settings.timeout:g} s" if settings.timeout else ""
    )
    return [
        f"memref-runtime: {mlir_line(settings)}",
        f"memref-runtime: {levels}, runtime verification {verification}, isolation: {isolation}, "
        f"Context leak check {'on' if settings.leak_check else 'off'}, checks fail "
        f"{'every test' if settings.checks or settings.isolate else 'the tests that ask (else they warn)'}",
        f"memref-runtime: FileCheck {found.describe() if found else 'none found'}",
    ]
