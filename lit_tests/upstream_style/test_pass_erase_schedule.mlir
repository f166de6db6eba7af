// UPDATE-CHECKS: hand-written: the IR prefix checks only that the schedule is gone; the values are worked out by hand
// A transform schedule tiles the matmul (-transform-interpreter), then
// -test-transform-dialect-erase-schedule takes the schedule out of the IR before lowering
// (-test-lower-to-llvm), as upstream's Linalg tests do.
//
// RUN: mlir-opt %s -transform-interpreter -test-transform-dialect-erase-schedule -test-lower-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
//
// The IR after both: the loops of the 1x2 tiles, no transform op left (the module keeps its
// attribute), the functions as they were but tiled.
// RUN: mlir-opt %s -transform-interpreter -test-transform-dialect-erase-schedule \
// RUN: | FileCheck %s --check-prefix=IR
// REQUIRES: host-supports-jit, runner-utils

// [[1, 2, 3, 4], [5, 6, 7, 8]] x [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]]
//   = [[1 + 4, 2 + 4, 3 + 4], [5 + 8, 6 + 8, 7 + 8]] = [[5, 6, 7], [13, 14, 15]]
// CHECK: ( ( 5, 6, 7 ), ( 13, 14, 15 ) )

// IR: module attributes {transform.with_named_sequence}
// IR-LABEL: func.func @matmul
// IR: scf.for
// IR: scf.for
// IR: linalg.matmul
// IR-NOT: transform.named_sequence
// IR-NOT: transform.structured
module attributes {transform.with_named_sequence} {
  func.func @matmul(%a: memref<2x4xf32>, %b: memref<4x3xf32>, %c: memref<2x3xf32>) {
    linalg.matmul ins(%a, %b : memref<2x4xf32>, memref<4x3xf32>) outs(%c : memref<2x3xf32>)
    return
  }

  func.func @main() {
    %a = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : vector<2x4xf32>
    %b = arith.constant dense<[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]]> : vector<4x3xf32>
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %ma = memref.alloca() : memref<2x4xf32>
    %mb = memref.alloca() : memref<4x3xf32>
    %mc = memref.alloca() : memref<2x3xf32>
    vector.transfer_write %a, %ma[%c0, %c0] : vector<2x4xf32>, memref<2x4xf32>
    vector.transfer_write %b, %mb[%c0, %c0] : vector<4x3xf32>, memref<4x3xf32>
    linalg.fill ins(%zero : f32) outs(%mc : memref<2x3xf32>)
    func.call @matmul(%ma, %mb, %mc) : (memref<2x4xf32>, memref<4x3xf32>, memref<2x3xf32>) -> ()
    %r = vector.transfer_read %mc[%c0, %c0], %zero : memref<2x3xf32>, vector<2x3xf32>
    vector.print %r : vector<2x3xf32>
    return
  }

  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %tiled, %rows, %cols = transform.structured.tile_using_for %mm tile_sizes [1, 2]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    transform.yield
  }
}
