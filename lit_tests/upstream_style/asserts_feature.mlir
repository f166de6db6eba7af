// asserts / noasserts: whether the mlir-opt in use is an assertions build (the 22.1.8 wheel
// is one, Debian's mlir-22-tools is not): its --version says so.
//
// RUN: mlir-opt --version | FileCheck %s --check-prefix=%if asserts %{ASSERTS%} %else %{NOASSERTS%}
// REQUIRES: asserts || noasserts
// UPDATE-CHECKS: hand-written: the prefix comes from %if asserts, so one run sees only one of them

// ASSERTS: LLVM version
// ASSERTS-NEXT: with assertions
// NOASSERTS: LLVM version
// NOASSERTS-NOT: with assertions
