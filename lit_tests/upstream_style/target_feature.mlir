// target=<triple> of the tools' LLVM (what mlir-opt and mlir-runner run): a regex that names
// another system makes the test UNSUPPORTED, this host's architecture makes it run.
//
// RUN: %PYTHON %S/tools/machine.py "%if target=x86_64{{.*}} %{x86_64%}%if target={{(aarch64|arm64).*}} %{aarch64%}" | FileCheck %s
// REQUIRES: target={{(x86_64|aarch64|arm64)-.*}}
// UNSUPPORTED: target={{.*-(windows|freebsd|aix)-.*}}
// UPDATE-CHECKS: hand-written: %if picks the argument by feature, so one run sees one side

// CHECK: the target is this host's architecture
