# RUN: not --crash %PYTHON %s 2>&1 | FileCheck %s
# UPDATE-CHECKS: hand-written: the stacks of a crash differ from run to run
"""What a test that crashes prints under lit: its output so far, the Python stack of the crash
(faulthandler), then the native one (LLVM's handler, installed once the MLIR bindings are
loaded; without symbols under `not --crash`, which turns symbolization off). `lit -v` adds the
signal's name and the case to a failed test's report (docs/failures.md)."""

import ctypes

import mlir.ir  # noqa: F401 - loads LLVM, whose handler prints the native stack

from memref_runtime.testing import log, run


def testFirst():
    log("the first case ran")


run(testFirst)
# CHECK-LABEL: TEST: testFirst
# CHECK-NEXT: the first case ran


def testReadsAddressZero():
    ctypes.string_at(0)


run(testReadsAddressZero)
# CHECK-LABEL: TEST: testReadsAddressZero
# CHECK-NEXT: Fatal Python error: Segmentation fault
# CHECK: File "{{.*}}crash_report.py", line {{[0-9]+}} in testReadsAddressZero
# CHECK-NEXT: File "{{.*}}testing/__init__.py", line {{[0-9]+}} in run
# CHECK: {{^ *#?0 .*0x[0-9a-f]+}}
