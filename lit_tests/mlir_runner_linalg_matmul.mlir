// A linalg kernel through the real tools: mlir-opt lowers it with the runtime's default
// pipeline (%lower_to_llvm), mlir-runner runs @main, printMemrefF32 prints the result.
//
// RUN: mlir-opt %s %lower_to_llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

func.func private @printMemrefF32(memref<*xf32>)

// C = A x B, A = [[1, 2, 3], [4, 5, 6]], B = [[1, 0], [0, 1], [2, -1]]:
//   C[0] = [1 + 0 + 6, 0 + 2 - 3] = [7, -1], C[1] = [4 + 0 + 12, 0 + 5 - 6] = [16, -1].
// CHECK: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 2 offset = 0 sizes = [2, 2] strides = [2, 1] data =
// CHECK-NEXT{LITERAL}: [[7,   -1],
// CHECK-NEXT:  [16,   -1]]
func.func @main() {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<2x3xf32>
  %b = memref.alloc() : memref<3x2xf32>
  %c = memref.alloc() : memref<2x2xf32>
  %ga = memref.get_global @A : memref<2x3xf32>
  %gb = memref.get_global @B : memref<3x2xf32>
  memref.copy %ga, %a : memref<2x3xf32> to memref<2x3xf32>
  memref.copy %gb, %b : memref<3x2xf32> to memref<3x2xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x2xf32>)
  linalg.matmul ins(%a, %b : memref<2x3xf32>, memref<3x2xf32>) outs(%c : memref<2x2xf32>)
  %u = memref.cast %c : memref<2x2xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  memref.dealloc %a : memref<2x3xf32>
  memref.dealloc %b : memref<3x2xf32>
  memref.dealloc %c : memref<2x2xf32>
  return
}
memref.global "private" constant @A : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @B : memref<3x2xf32> = dense<[[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]]>
