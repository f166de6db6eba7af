// %mcr_aarch64_cmd is mlir-runner on a host without an AArch64 emulator, as upstream's
// Integration/lit.local.cfg defines it (the Arm SVE/SME tests and some SparseTensor ones run
// through it).
//
// RUN: mlir-opt %s --convert-vector-to-scf --convert-scf-to-cf --convert-to-llvm \
// RUN: | %mcr_aarch64_cmd -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, mlir-tools

// CHECK: ( 2, 4, 6 )
func.func @main() {
  %v = arith.constant dense<[1, 2, 3]> : vector<3xi64>
  %w = arith.addi %v, %v : vector<3xi64>
  vector.print %w : vector<3xi64>
  return
}
