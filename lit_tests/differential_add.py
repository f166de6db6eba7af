# RUN: rm -rf %t && %PYTHON %s %t 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""check_against draws strided views from the signature of an add over 2-D strided memrefs:
the right kernel passes, and a loop that stops one column early is found, with a minimised
example and a replay script (differential_layout.py: a read that ignores the layout)."""

import os
import subprocess
import sys

from memref_runtime import JitModule
from memref_runtime.differential import DifferentialError, check_against
from memref_runtime.testing import log, mlir_inputs, run


def reference(a, b, out):
    out[...] = a + b


# CHECK-LABEL: TEST: testRightKernelPasses
# CHECK-NEXT: examples: 100{{$}}
# CHECK-NEXT: layouts: ['empty', 'gap', 'negative stride', 'offset', 'transposed', 'zero stride']
def testRightKernelPasses():
    jit = JitModule(os.path.join(mlir_inputs(), "differential_add.mlir"))
    # %out (argument 2) is written: only %a and %b get zero (broadcast) strides.
    summary = check_against(jit.add, reference, outputs=[2])
    # 100 examples, with every kind of layout the issue asks for among them.
    log("examples:", summary.examples)
    log("layouts:", sorted(summary.layouts))


run(testRightKernelPasses)


def find_fault(name):
    """Runs check_against on @name, logs the report's stable lines, replays the example (saved
    under the test's %t folder)."""
    jit = JitModule(os.path.join(mlir_inputs(), "differential_add.mlir"))
    try:
        check_against(getattr(jit, name), reference, outputs=[2], save_to=os.path.join(sys.argv[1], name))
    except DifferentialError as e:
        lines = str(e).splitlines()
        log(lines[0])
        log("differs:", [line.split(" after the call:")[0].strip() for line in lines if "after the call:" in line])
        replay = subprocess.run([sys.executable, os.path.join(e.folder, "replay.py")], capture_output=True, text=True)
        same = replay.returncode == 1 and "after the call:" in replay.stderr
        log("replay.py fails the same way:", same)
        if not same:  # what it did instead, for whoever reads the failure
            log(f"replay.py's exit status: {replay.returncode}; its output:\n{replay.stdout}{replay.stderr}")
    else:
        log(name, "passed, which it must not")


# CHECK-LABEL: TEST: testOffByOneIsFound
# CHECK-NEXT: check_against(@add_off_by_one): the function and the reference differ on this example (minimised by Hypothesis; seed 0, up to 100 examples)
# CHECK-NEXT: differs: ['argument 2 (memref<?x?xf32, strided<[?, ?], offset: ?>>)']
# CHECK-NEXT: replay.py fails the same way: True
def testOffByOneIsFound():
    find_fault("add_off_by_one")


run(testOffByOneIsFound)
