// mlir-opt lowers this file with the runtime's pipeline (%lower_to_llvm), mlir-runner runs
// @main, which prints a vector through printMemrefF32 from MLIR's runner-utils libraries.
//
// RUN: mlir-opt %s %lower_to_llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %v = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    %k = arith.index_cast %i : index to i64
    %f = arith.sitofp %k : i64 to f32
    %sq = arith.mulf %f, %f : f32
    memref.store %sq, %v[%i] : memref<4xf32>
  }
  %u = memref.cast %v : memref<4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %v : memref<4xf32>
  return
}
// CHECK: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 1 offset = 0 sizes = [4] strides = [1] data =
// CHECK-NEXT: [0,  1,  4,  9]
