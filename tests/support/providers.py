"""Which bindings provider the session runs (lit's and the pytest plugin's MEMREF_RUNTIME_BINDINGS)."""

from __future__ import annotations

import os

import pytest

PROVIDER = os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir"

# The culprit tests plant miscompiles in the wheels' MLIR 22 pipelines and run the wheels' tools
# (mlir-opt, mlir-translate, mlir-runner, mlir-reduce); another provider (torch-mlir, a newer MLIR)
# ships none of those tools and lowers the planted kernels differently.
needs_wheel_tools = pytest.mark.skipif(
    PROVIDER != "mlir",
    reason=f"needs the xtc wheels' MLIR 22 and its tools; the provider in use is {PROVIDER!r}",
)
