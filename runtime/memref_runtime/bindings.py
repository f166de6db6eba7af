"""Which MLIR Python package provides `ir`, `passmanager` and `execution_engine`, found once.

`MEMREF_RUNTIME_BINDINGS` picks one (`mlir` for the LLVM wheels or a build tree, `torch_mlir`
for torch-mlir's bundled copy); otherwise the first that imports, in that order.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterable
from types import SimpleNamespace

from . import environment

PROVIDERS = ("mlir", "torch_mlir")
ENV_VAR = environment.BINDINGS


@functools.cache
def bindings() -> SimpleNamespace:
    """The MLIR Python modules in use: `.name`, `.ir`, `.passmanager`, `.execution_engine`."""
    wanted = os.environ.get(ENV_VAR)
    if wanted and wanted not in PROVIDERS:
        raise ValueError(f"{ENV_VAR}: expected one of {', '.join(PROVIDERS)}, got {wanted!r}")
    errors = []
    for name in (wanted,) if wanted else PROVIDERS:
        try:
            return SimpleNamespace(
                name=name,
                ir=importlib.import_module(f"{name}.ir"),
                passmanager=importlib.import_module(f"{name}.passmanager"),
                execution_engine=importlib.import_module(f"{name}.execution_engine"),
            )
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise ImportError(
        "no MLIR Python bindings with an ExecutionEngine could be imported ("
        + "; ".join(errors)
        + "); install xtc-mlir-python-bindings or torch-mlir"
    )


# The opt tool that ships with each provider, relative to its package folder: it runs the same
# passes as the bindings, and its --version names the LLVM they were built from.
_OPT_TOOLS = {"mlir": ("bin", "mlir-opt"), "torch_mlir": ("_mlir_libs", "torch-mlir-opt")}


@functools.cache
def opt_tool() -> str | None:
    """The path of the bindings' own opt tool (mlir-opt, torch-mlir-opt), else mlir-opt on PATH."""
    import shutil

    name = bindings().name
    return package_opt_tool(name, importlib.import_module(name).__path__) or shutil.which(
        _OPT_TOOLS.get(name, ("bin", "mlir-opt"))[-1]
    )


def package_folders(name: str) -> list[str]:
    """The folders of package `name` (the bindings, `llvm`), found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def package_opt_tool(name: str, folders: Iterable[str]) -> str | None:
    """The opt tool that the bindings package `name`, found in `folders`, ships (no import)."""
    relative = _OPT_TOOLS.get(name, ("bin", "mlir-opt"))
    return next(
        (tool for tool in (os.path.join(folder, *relative) for folder in folders) if os.access(tool, os.X_OK)), None
    )


@functools.cache
def mlir_major_version() -> int | None:
    """The LLVM/MLIR major version of the bindings in use, or None if it cannot be told."""
    import importlib.metadata
    import re
    import subprocess

    name = bindings().name
    for dist in importlib.metadata.packages_distributions().get(name, []):
        match = re.match(r"(\d{1,3})\.\d", importlib.metadata.version(dist))
        if match:  # torch-mlir's date versions (20261001) do not match
            return int(match.group(1))
    tool = opt_tool()
    if tool:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
        match = re.search(r"LLVM version (\d+)", out)
        if match:
            return int(match.group(1))
    return None
