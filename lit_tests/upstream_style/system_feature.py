# RUN: %PYTHON %s "%if system-linux %{Linux%}%if system-darwin %{Darwin%}%if system-windows %{Windows%}" 2>&1 | FileCheck %s
# REQUIRES: system-linux || system-darwin || system-windows
# UPDATE-CHECKS: hand-written: %if picks the argument by feature, so one run sees one side
"""Exactly one system-* feature holds, and it names the system the tests run on."""

import platform
import sys

from memref_runtime.testing import log, run


def testSystemFeature():
    log(sys.argv[1] == platform.system())


run(testSystemFeature)
# CHECK-LABEL: TEST: testSystemFeature
# CHECK-NEXT: True
