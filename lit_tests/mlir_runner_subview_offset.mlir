// memref.subview with a non-zero offset, printed by printMemrefF32 through mlir-runner: the
// descriptor carries offset, sizes and strides in elements, and the base is the global's.
// UPDATE-CHECKS: hand-written: both views must print the same base@, a FileCheck variable
//
// RUN: mlir-opt %s %lower_to_llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

func.func private @printMemrefF32(memref<*xf32>)

// M = arange(16) as 4x4. M[1:3, 1:3] starts at element 1 * 4 + 1 = 5: [[5, 6], [9, 10]].
// CHECK: Unranked Memref base@ = [[BASE:0x[0-9a-f]+]] rank = 2 offset = 5 sizes = [2, 2] strides = [4, 1] data =
// CHECK-NEXT{LITERAL}: [[5,   6],
// CHECK-NEXT{LITERAL}:  [9,   10]]
// M[0:4:2, 1:4:2] starts at element 1, strides [2 * 4, 2] = [8, 2]: [[1, 3], [9, 11]].
// CHECK-NEXT: Unranked Memref base@ = [[BASE]] rank = 2 offset = 1 sizes = [2, 2] strides = [8, 2] data =
// CHECK-NEXT{LITERAL}: [[1,   3],
// CHECK-NEXT{LITERAL}:  [9,   11]]
func.func @main() {
  %m = memref.get_global @M : memref<4x4xf32>
  %inner = memref.subview %m[1, 1] [2, 2] [1, 1]
      : memref<4x4xf32> to memref<2x2xf32, strided<[4, 1], offset: 5>>
  %u0 = memref.cast %inner : memref<2x2xf32, strided<[4, 1], offset: 5>> to memref<*xf32>
  call @printMemrefF32(%u0) : (memref<*xf32>) -> ()
  %odd = memref.subview %m[0, 1] [2, 2] [2, 2]
      : memref<4x4xf32> to memref<2x2xf32, strided<[8, 2], offset: 1>>
  %u1 = memref.cast %odd : memref<2x2xf32, strided<[8, 2], offset: 1>> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  return
}
memref.global "private" constant @M : memref<4x4xf32> = dense<[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0], [12.0, 13.0, 14.0, 15.0]]>
