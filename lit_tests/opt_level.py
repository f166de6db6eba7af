# RUN: rm -rf %t && mkdir -p %t && %PYTHON %s %t 2>&1 | FileCheck %s --check-prefixes=CHECK,LEVEL%opt_level
# REQUIRES: host-supports-jit
# UPDATE-CHECKS: hand-written: the LEVEL<N> prefix comes from -D opt_level (%opt_level), so one run sees one level
"""`lit -D opt_level=N` reaches the test process: every JitModule, and every engine that
memref_runtime.testing makes, compiles at level N (the object code is opt_level=N's), and an
explicit opt_level= still wins. Without -D, the level is the ExecutionEngine's default, 2."""

import os
import sys

import numpy as np
from mlir.ir import *

from memref_runtime import JitModule
from memref_runtime.settings import default_opt_level
from memref_runtime.testing import check_close, execution_engine, log, lower, run

# A loop the optimizer changes at every level that matters here: O0 leaves it alone, O3 vectorizes it.
MODULE = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) attributes { llvm.emit_c_interface } {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
"""


def object_code(engine, name):
    """The object file the engine compiled (it links on the first lookup)."""
    engine.raw_lookup("_mlir_ciface_add")
    path = os.path.join(sys.argv[1], name + ".o")
    engine.dump_to_object_file(path)
    with open(path, "rb") as f:
        return f.read()


def engine_code(opt_level=None):
    """The code testing.execution_engine compiles at `opt_level` (None: the default)."""
    with Context():
        return object_code(execution_engine(lower(Module.parse(MODULE)), opt_level=opt_level), f"engine-{opt_level}")


def jit_code(jit):
    return object_code(jit.engine, f"jit-{jit.opt_level}")


# CHECK-LABEL: TEST: testOptLevelReachesEveryEngine
def testOptLevelReachesEveryEngine():
    # LEVEL0: default opt level: 0
    # LEVEL1: default opt level: 1
    # LEVEL2: default opt level: 2
    # LEVEL3: default opt level: 3
    log("default opt level:", default_opt_level())
    # LEVEL0-NEXT: JitModule().opt_level: 0
    # LEVEL1-NEXT: JitModule().opt_level: 1
    # LEVEL2-NEXT: JitModule().opt_level: 2
    # LEVEL3-NEXT: JitModule().opt_level: 3
    jit = JitModule(MODULE)
    log("JitModule().opt_level:", jit.opt_level)
    # CHECK-NEXT: JitModule(opt_level=1).opt_level: 1
    log("JitModule(opt_level=1).opt_level:", JitModule(MODULE, opt_level=1).opt_level)

    # The code itself: what the default compiles is what the level in force compiles, and
    # O0's code differs from O3's (so the comparison can tell the levels apart).
    level = default_opt_level()
    engines = {n: engine_code(n) for n in sorted({0, 3, level})}
    # CHECK-NEXT: O0 and O3 compile differently: True
    log("O0 and O3 compile differently:", engines[0] != engines[3])
    # CHECK-NEXT: testing.execution_engine() compiles as opt_level=N: True
    log("testing.execution_engine() compiles as opt_level=N:", engine_code() == engines[level])
    # CHECK-NEXT: JitModule() compiles as JitModule(opt_level=N): True
    log(
        "JitModule() compiles as JitModule(opt_level=N):", jit_code(jit) == jit_code(JitModule(MODULE, opt_level=level))
    )

    # CHECK-NEXT: add at the default level: ok, float32, shape (1000,)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    out = np.empty_like(a)
    jit.add(a, b, out)
    check_close("add at the default level", out, a + b)


run(testOptLevelReachesEveryEngine)
