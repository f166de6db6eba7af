// mlir-opt lowers to the LLVM dialect, mlir-translate emits LLVM IR.
// UPDATE-CHECKS: hand-written: LLVM IR checked by its shape (FileCheck variables for the SSA names)
//
// RUN: mlir-opt %s %lower_to_llvm | mlir-translate --mlir-to-llvmir | FileCheck %s
// REQUIRES: mlir-tools

// CHECK-LABEL: define float @axpy(float %0, float %1, float %2)
// CHECK-NEXT:    %[[P:[0-9]+]] = fmul float %0, %1
// CHECK-NEXT:    %[[S:[0-9]+]] = fadd float %[[P]], %2
// CHECK-NEXT:    ret float %[[S]]
func.func @axpy(%a: f32, %x: f32, %y: f32) -> f32 {
  %p = arith.mulf %a, %x : f32
  %s = arith.addf %p, %y : f32
  return %s : f32
}
