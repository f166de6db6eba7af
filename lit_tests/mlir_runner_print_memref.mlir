// The shared module, lowered by mlir-opt and run by mlir-runner: @main prints a global
// through printMemrefF32 from the runner-utils libraries. The tools are named by their
// substitutions here (%mlir_opt, %mlir_runner); the other mlir_*.mlir tests name them bare.
//
// RUN: %mlir_opt %mlir_inputs/print_memref_f32.mlir %lower_to_llvm \
// RUN: | %mlir_runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

// CHECK: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 3] strides = [3, 1] data =
// CHECK-NEXT{LITERAL}: [[1.5,   2,   -3],
// CHECK-NEXT:  [4,   0.25,   6]]
