# RUN: %PYTHON %s "%if mlir-tools %{%mlir_opt%} %else %{none%}" 2>&1 | FileCheck %s --check-prefixes=CHECK,%if mlir-python-path %{TREE%} %else %{INSTALLED%}
# UPDATE-CHECKS: hand-written: its prefixes come from %if on mlir-python-path, so one run sees only TREE or only INSTALLED
"""Which MLIR the tests get: `from mlir.ir import *` resolves to the provider lit.cfg.py chose
(-D mlir_python=, default the `mlir` package), taken from -D mlir_python_path= when given,
else from the installed distribution; the tools on PATH come from the same place."""

import importlib
import os
import shutil
import sys

import mlir.ir

from memref_runtime.testing import log

provider = os.environ["MEMREF_RUNTIME_BINDINGS"]
tree = os.environ.get("MEMREF_RUNTIME_MLIR_PYTHON_PATH")
ir_file = importlib.import_module(provider + ".ir").__file__


def under(path, folder):
    return os.path.abspath(path).startswith(os.path.join(os.path.abspath(folder), ""))


# `mlir.ir` is the provider's own module, whatever the provider is called.
# CHECK: mlir.ir is the provider's ir module: True
log("mlir.ir is the provider's ir module:", mlir.ir.Context is importlib.import_module(provider + ".ir").Context)

# TREE: provider's ir module from -D mlir_python_path: True
# INSTALLED: provider's ir module from an installed distribution: True
if tree:
    log("provider's ir module from -D mlir_python_path:", under(ir_file, tree))
else:
    log(
        "provider's ir module from an installed distribution:",
        any(part in ir_file.split(os.sep) for part in ("site-packages", "dist-packages")),
    )

# The bare `mlir-opt` on PATH is the %mlir_opt that lit chose (a build tree's bin/ comes first),
# or there is none at all (torch_mlir ships no mlir-opt).
# CHECK: mlir-opt on PATH is %mlir_opt: True
chosen = None if sys.argv[1] == "none" else os.path.realpath(sys.argv[1])
on_path = shutil.which("mlir-opt")
log("mlir-opt on PATH is %mlir_opt:", chosen == (on_path and os.path.realpath(on_path)))

# The Context works: an op parses and prints through this provider.
# CHECK: func.func @f()
with mlir.ir.Context():
    log(mlir.ir.Module.parse("func.func @f() { return }"))
