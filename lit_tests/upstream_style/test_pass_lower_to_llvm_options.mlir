// UPDATE-CHECKS: hand-written: each prefix checks only the flag an option sets on the reductions, not the whole LLVM dialect
// -test-lower-to-llvm's option: with reassociate-fp-reductions, vector.reduction's fadd may be
// reassociated (fastmath reassoc); without it, or set to false, it may not. Also as an element
// of a pass pipeline, after a pass of the pipeline's own.
//
// RUN: mlir-opt %s -test-lower-to-llvm="reassociate-fp-reductions" | FileCheck %s --check-prefix=REASSOC
// RUN: mlir-opt %s -test-lower-to-llvm | FileCheck %s --check-prefix=ORDERED
// RUN: mlir-opt %s -test-lower-to-llvm="reassociate-fp-reductions=false" | FileCheck %s --check-prefix=ORDERED
// RUN: mlir-opt %s --pass-pipeline="builtin.module(canonicalize,test-lower-to-llvm{reassociate-fp-reductions=1})" \
// RUN: | FileCheck %s --check-prefix=REASSOC

// REASSOC-LABEL: llvm.func @sum
// REASSOC: "llvm.intr.vector.reduce.fadd"({{.*}}) <{fastmathFlags = #llvm.fastmath<reassoc>}> : (f32, vector<8xf32>) -> f32
// ORDERED-LABEL: llvm.func @sum
// ORDERED: "llvm.intr.vector.reduce.fadd"({{.*}}) <{fastmathFlags = #llvm.fastmath<none>}> : (f32, vector<8xf32>) -> f32
func.func @sum(%v: vector<8xf32>) -> f32 {
  %r = vector.reduction <add>, %v : vector<8xf32> into f32
  return %r : f32
}
