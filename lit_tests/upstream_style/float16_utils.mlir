// %mlir_float16_utils: vector.print of f16 and bf16 calls printF16/printBF16 from it.
//
// RUN: mlir-opt %s --convert-vector-to-scf --convert-scf-to-cf --convert-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_c_runner_utils,%mlir_float16_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, mlir-tools

// 1.5 and -0.25 are exact in f16; 2.25 is exact in bf16 (8 bits of mantissa).
// CHECK: ( 1.5, -0.25 )
// CHECK-NEXT: 2.25{{$}}
func.func @main() {
  %h = arith.constant dense<[1.5, -0.25]> : vector<2xf16>
  vector.print %h : vector<2xf16>
  %b = arith.constant 2.25 : bf16
  vector.print %b : bf16
  return
}
