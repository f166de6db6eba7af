// UPDATE-CHECKS: hand-written: the IR prefix checks only that vector.scan is gone; the sums are worked out by hand
// -test-vector-scan-lowering on scans of other kinds, shapes and modes than upstream's test, given
// as a pass pipeline with -test-lower-to-llvm after it in the same pipeline.
//
// RUN: mlir-opt %s --pass-pipeline="builtin.module(func.func(test-vector-scan-lowering),test-lower-to-llvm)" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// RUN: mlir-opt %s -test-vector-scan-lowering | FileCheck %s --check-prefix=IR
// REQUIRES: host-supports-jit, runner-utils

// Inclusive sums of [1, 2, 3, 4] from 0: 1, 1+2, 1+2+3, 1+2+3+4.
// CHECK: ( 1, 3, 6, 10 )
// Exclusive sums from 5: the initial value first, then 5+1, 5+1+2, 5+1+2+3.
// CHECK-NEXT: ( 5, 6, 8, 11 )
// Products along each row of [[1, 2, 3], [4, 5, 6]] from 1, and the row products.
// CHECK-NEXT: ( ( 1, 2, 6 ), ( 4, 20, 120 ) )
// CHECK-NEXT: ( 6, 120 )
// Running maximum of [3, -1, 4, 1.5] from 0.
// CHECK-NEXT: ( 3, 3, 4, 4 )

// IR-LABEL: func.func @main
// IR-NOT: vector.scan
func.func @main() {
  %v = arith.constant dense<[1, 2, 3, 4]> : vector<4xi32>
  %i0 = arith.constant dense<0> : vector<i32>
  %i5 = arith.constant dense<5> : vector<i32>
  %a:2 = vector.scan <add>, %v, %i0 {inclusive = true, reduction_dim = 0} : vector<4xi32>, vector<i32>
  vector.print %a#0 : vector<4xi32>
  %b:2 = vector.scan <add>, %v, %i5 {inclusive = false, reduction_dim = 0} : vector<4xi32>, vector<i32>
  vector.print %b#0 : vector<4xi32>
  %m = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : vector<2x3xi32>
  %one = arith.constant dense<1> : vector<2xi32>
  %c:2 = vector.scan <mul>, %m, %one {inclusive = true, reduction_dim = 1} : vector<2x3xi32>, vector<2xi32>
  vector.print %c#0 : vector<2x3xi32>
  vector.print %c#1 : vector<2xi32>
  %f = arith.constant dense<[3.0, -1.0, 4.0, 1.5]> : vector<4xf32>
  %fi = arith.constant dense<0.0> : vector<f32>
  %d:2 = vector.scan <maximumf>, %f, %fi {inclusive = true, reduction_dim = 0} : vector<4xf32>, vector<f32>
  vector.print %d#0 : vector<4xf32>
  return
}
