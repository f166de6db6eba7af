# RUN: %PYTHON %s %ENABLE_VLA "%VLA_ARCH_ATTR_OPTIONS" "%PATH%" 2>&1 | FileCheck %s
"""Substitutions whose text upstream's configuration fixes: SparseTensor's VLA switches (off
without Arm SVE), and %PATH%, the PATH the tests run with."""

import os
import sys

from memref_runtime.testing import log, run

enable_vla, vla_options, path = sys.argv[1:]


def testVlaSwitches():
    log(repr(enable_vla), repr(vla_options))


def testPathIsTheTestsPath():
    log(path == os.environ["PATH"])


run(testVlaSwitches)
# CHECK-LABEL: TEST: testVlaSwitches
# CHECK-NEXT: 'false' ''
run(testPathIsTheTestsPath)
# CHECK-LABEL: TEST: testPathIsTheTestsPath
# CHECK-NEXT: True
