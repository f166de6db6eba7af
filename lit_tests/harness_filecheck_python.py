# RUN: FileCheck --version | FileCheck %s
# REQUIRES: filecheck-python
"""With the `filecheck-python` feature, FileCheck is the Python `filecheck` package (chosen with
`-D filecheck=...`, or the fallback where no LLVM FileCheck is installed)."""

# CHECK: filecheck version
