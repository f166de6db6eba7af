"""Where the checkout's parts are: the repository, runtime/, mlir_inputs/, and the lit to run."""

from __future__ import annotations

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
