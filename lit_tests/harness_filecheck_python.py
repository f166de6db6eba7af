# RUN: FileCheck --version | FileCheck %s
# REQUIRES: filecheck-python
# UPDATE-CHECKS: hand-written: checks which FileCheck runs (its --version), not a test's output
"""With the `filecheck-python` feature, FileCheck is the Python `filecheck` package (chosen with
`-D filecheck=...`, or the fallback where no LLVM FileCheck is installed)."""

# CHECK: filecheck version
