// vector.print through mlir-runner (printF32, printNewline, ... from the c runner utils).
//
// RUN: mlir-opt %s %lower_to_llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

// a + b = [1 + 0.5, 2 - 2, 3 + 0.25, 4 + 10], a * b = [0.5, -4, 0.75, 40], sum(a + b) = 18.75,
// and the transpose of [[1, 2, 3], [4, 5, 6]].
// CHECK: ( 1.5, 0, 3.25, 14 )
// CHECK-NEXT: ( 0.5, -4, 0.75, 40 )
// CHECK-NEXT: 18.75{{$}}
// CHECK-NEXT: ( ( 1, 4 ), ( 2, 5 ), ( 3, 6 ) )
func.func @main() {
  %a = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : vector<4xf32>
  %b = arith.constant dense<[0.5, -2.0, 0.25, 10.0]> : vector<4xf32>
  %sum = arith.addf %a, %b : vector<4xf32>
  vector.print %sum : vector<4xf32>
  %product = arith.mulf %a, %b : vector<4xf32>
  vector.print %product : vector<4xf32>
  %total = vector.reduction <add>, %sum : vector<4xf32> into f32
  vector.print %total : f32
  %i = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : vector<2x3xi32>
  %t = vector.transpose %i, [1, 0] : vector<2x3xi32> to vector<3x2xi32>
  vector.print %t : vector<3x2xi32>
  return
}
