# RUN: FileCheck --version | FileCheck %s --check-prefix=VERSION
# RUN: %PYTHON %s 2>&1 | FileCheck %s --implicit-check-not=Traceback
# REQUIRES: filecheck-llvm
# UPDATE-CHECKS: hand-written: checks what only LLVM's FileCheck has (numeric variables, --implicit-check-not) and its --version
"""With the `filecheck-llvm` feature, FileCheck is LLVM's. A test that needs what only LLVM's
FileCheck has (numeric variables, --implicit-check-not, @LINE) requires that feature, as here."""

import sys

# VERSION: LLVM version

# CHECK: 40 + 2 = [[#SUM:]]
# CHECK-NEXT: twice that is [[#mul(SUM,2)]]
print("40 + 2 =", 40 + 2, file=sys.stderr)
print("twice that is", 2 * (40 + 2), file=sys.stderr)
