// %mlir_apfloat_wrappers: arithmetic on f8E4M3FN, which LLVM cannot do, lowered to calls of
// the APFloat wrappers (upstream's Arith/CPU APFloat tests, also Linux and macOS only).
//
// RUN: mlir-opt %s --convert-arith-to-apfloat --convert-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void \
// RUN:     -shared-libs=%mlir_c_runner_utils -shared-libs=%mlir_apfloat_wrappers \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, mlir-tools
// REQUIRES: system-linux || system-darwin

// f8E4M3FN has 3 bits of mantissa: 1.5 + 2.0 = 3.5 is exact, 1.5 * 2.75 = 4.125 rounds to
// the nearest of 4.0 and 4.5, i.e. 4.
// CHECK: 3.5{{$}}
// CHECK-NEXT: 4{{$}}
func.func @main() {
  %a = arith.constant 1.5 : f8E4M3FN
  %b = arith.constant 2.0 : f8E4M3FN
  %c = arith.constant 2.75 : f8E4M3FN
  %sum = arith.addf %a, %b : f8E4M3FN
  vector.print %sum : f8E4M3FN
  %product = arith.mulf %a, %c : f8E4M3FN
  vector.print %product : f8E4M3FN
  return
}
