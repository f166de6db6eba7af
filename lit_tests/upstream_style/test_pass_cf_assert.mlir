// -test-cf-assert lowers cf.assert to a message and no abort(), so a failed assertion can be
// checked and the run goes on (a test-only pass, like -test-lower-to-llvm in the same run).
//
// RUN: mlir-opt %s -test-cf-assert -test-lower-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils 2>&1 \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils

// 2 < 1 is false: the assertion's message, then the run continues to the print.
// CHECK: assertion foo
// CHECK-NEXT: after the assertion
func.func @main() {
  %a = arith.constant 2 : i32
  %b = arith.constant 1 : i32
  %ok = arith.cmpi slt, %a, %b : i32
  cf.assert %ok, "assertion foo"
  vector.print str "after the assertion\n"
  return
}
