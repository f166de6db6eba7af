"""Which MLIR Python package provides `ir`, `passmanager` and `execution_engine`, found once.

`MEMREF_RUNTIME_BINDINGS` picks one (`mlir` for the LLVM wheels or a build tree, `torch_mlir`
for torch-mlir's bundled copy); otherwise the first that imports, in that order.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import SimpleNamespace

PROVIDERS = ("mlir", "torch_mlir")
ENV_VAR = "MEMREF_RUNTIME_BINDINGS"


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
    raise ImportError("no MLIR Python bindings with an ExecutionEngine could be imported ("
                      + "; ".join(errors) + "); install xtc-mlir-python-bindings or torch-mlir")
