"""Where the checkout's parts are: the repository, runtime/, mlir_inputs/, and the lit to run;
and the checkout's scripts (.ci/, benchmarks/) loaded as modules."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
RUNTIME_DIR = REPO / "runtime"
MLIR_INPUTS = REPO / "mlir_inputs"
# lit next to this interpreter (a venv's), else the one on PATH.
LIT = shutil.which("lit", path=os.path.dirname(sys.executable)) or shutil.which("lit")


def mlir_input(name: str) -> Path:
    """The shared MLIR module `mlir_inputs/<name>` (FileNotFoundError, with its path, if missing)."""
    path = MLIR_INPUTS / name
    if not path.is_file():
        raise FileNotFoundError(f"mlir_input({name!r}): no shared MLIR module at {path}")
    return path


def load_script(path: Path):
    """The script at `path` (not a module of a package) as a module, loaded as `python PATH` runs
    it: its folder first on sys.path while it loads, for the neighbours it imports. It is in
    sys.modules under its name, as an imported module is (dataclasses look their module up)."""
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module
