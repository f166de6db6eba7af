// UPDATE-CHECKS: hand-written: checks the split markers and the asserts' lowering, not every line of the LLVM dialect
// Test-only passes with -split-input-file and -verify-diagnostics: each chunk runs on its own;
// a chunk whose pass fails with the error its expected-error line names leaves no output, and
// the run succeeds; the other chunk's assertion is lowered (-test-cf-assert).
//
// RUN: mlir-opt %s -split-input-file -verify-diagnostics -test-arith-emulate-wide-int -test-cf-assert \
// RUN: | FileCheck %s

// The first chunk's output is empty: the output starts with the marker (written here so that it
// does not split this file).
// CHECK: {{^}}// {{-----$}}
// CHECK-NEXT: module {
// CHECK: llvm.func @puts(!llvm.ptr)
// CHECK-LABEL: func.func @asserts
// CHECK: llvm.cond_br
func.func @emulate_division(%a: i64) -> i64 {
  // expected-error@+1 {{failed to legalize operation 'arith.divsi' that was explicitly marked illegal}}
  %q = arith.divsi %a, %a : i64
  return %q : i64
}

// -----

func.func @asserts(%ok: i1) {
  cf.assert %ok, "not ok"
  return
}
