# RUN: %PYTHON %s %mlir_inputs 2>&1 | FileCheck %s
# UPDATE-CHECKS: hand-written: patterns on purpose: the number of shared modules grows with mlir_inputs/, and a path may use either separator
"""What lit.cfg.py promises every test: the runtime from the source tree, and the shared
MLIR modules, each of which parses and verifies."""

import glob
import os
import sys

from mlir.ir import Context, Module

import memref_runtime
from memref_runtime.testing import log

MLIR_INPUTS = sys.argv[1]
REPO_ROOT = os.path.dirname(os.path.abspath(MLIR_INPUTS))


# memref_runtime comes from runtime/ through PYTHONPATH, so no `pip install -e` is needed.
# CHECK: memref_runtime from runtime{{[/\\]}}memref_runtime{{[/\\]}}__init__.py
log("memref_runtime from", os.path.relpath(memref_runtime.__file__, REPO_ROOT))

# CHECK: MLIR_INPUTS is %mlir_inputs: True
log("MLIR_INPUTS is %mlir_inputs:", os.environ.get("MLIR_INPUTS") == MLIR_INPUTS)

# CHECK-NOT: FAILED
# CHECK: parsed {{[1-9][0-9]*}} shared modules
paths = sorted(glob.glob(os.path.join(MLIR_INPUTS, "*.mlir")))
for path in paths:
    with Context(), open(path) as f:
        try:
            Module.parse(f.read()).operation.verify()
        except Exception as e:
            log(os.path.basename(path), "FAILED:", e)
log("parsed", len(paths), "shared modules")
