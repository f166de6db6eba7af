# RUN: %PYTHON %s "%if asserts %{asserts%} %else %{noasserts%}" 2>&1 | FileCheck %s
# REQUIRES: asserts || noasserts
# UPDATE-CHECKS: hand-written: %if picks the argument by feature, so one run sees one side
"""asserts / noasserts in a .py test describe the bindings' LLVM (their own opt tool's build),
which may differ from the tools' (the CMake route runs Debian's tools with the wheel's
bindings)."""

import subprocess
import sys

from memref_runtime.bindings import opt_tool
from memref_runtime.testing import log, run


def testAssertsIsTheBindingsBuild():
    version = subprocess.run([opt_tool(), "--version"], capture_output=True, text=True).stdout
    log(sys.argv[1] == ("asserts" if "with assertions" in version else "noasserts"))


run(testAssertsIsTheBindingsBuild)
# CHECK-LABEL: TEST: testAssertsIsTheBindingsBuild
# CHECK-NEXT: True
