# RUN: %PYTHON %s "%if target=x86_64{{.*}} %{x86_64%}%if target={{(aarch64|arm64).*}} %{aarch64%}" \
# RUN:     "%if native %{native%}" 2>&1 | FileCheck %s
# REQUIRES: target={{(x86_64|aarch64|arm64)-.*}}
# UPDATE-CHECKS: hand-written: %if picks the argument by feature, so one run sees one side
"""target=<triple> of the bindings' LLVM (what a .py test runs): its architecture is this
host's, and the triple is native (host=<triple> is the same)."""

import os
import sys

sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from tools.machine import llvm_arch  # noqa: E402

from memref_runtime.testing import log, run  # noqa: E402


def testTargetIsTheHost():
    log(sys.argv[1] == llvm_arch(), sys.argv[2])


run(testTargetIsTheHost)
# CHECK-LABEL: TEST: testTargetIsTheHost
# CHECK-NEXT: True native
