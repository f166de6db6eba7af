// UPDATE-CHECKS: hand-written: checks what the patterns rewrote, with FileCheck variables for the operands
// -test-pdl-bytecode-pass: the PDL patterns of `module @patterns` are applied to `module @ir`,
// with upstream's native constraints and rewrites of that test pass (single_entity_constraint,
// op_constr_return_type, the rewrites "rewriter" and "creator"). The patterns module is gone
// from the output.
//
// RUN: mlir-opt %s -allow-unregistered-dialect -test-pdl-bytecode-pass | FileCheck %s

// "test.op"(%x) passes single_entity_constraint (its name is test.op); the native rewrite
// "rewriter" puts "test.success"(%x) in its place. "test.keep" fails that constraint and stays.
// "test.other" is replaced by the op that the native rewrite "creator" builds ("test.success",
// no operands). op_constr_return_type gives f32 for "test.success_op", which becomes a
// "test.typed" op of that type.
// CHECK-NOT: module @patterns
// CHECK-LABEL: module @ir
// CHECK: func.func @f(%[[X:.*]]: i32)
// CHECK-NEXT: "test.success"(%[[X]]) : (i32) -> ()
// CHECK-NEXT: "test.success"() : () -> ()
// CHECK-NEXT: "test.keep"(%[[X]]) : (i32) -> ()
// CHECK-NEXT: "test.typed"() : () -> f32
// CHECK-NEXT: return

module @patterns {
  pdl.pattern : benefit(1) {
    %input = pdl.operand
    %root = pdl.operation "test.op"(%input : !pdl.value)
    pdl.apply_native_constraint "single_entity_constraint"(%root : !pdl.operation)
    pdl.rewrite %root with "rewriter"(%input : !pdl.value)
  }
  pdl.pattern : benefit(1) {
    %input = pdl.operand
    %root = pdl.operation "test.keep"(%input : !pdl.value)
    pdl.apply_native_constraint "single_entity_constraint"(%root : !pdl.operation)
    pdl.rewrite %root with "rewriter"(%input : !pdl.value)
  }
  pdl.pattern : benefit(1) {
    %root = pdl.operation "test.other"
    pdl.rewrite %root {
      %made = pdl.apply_native_rewrite "creator"(%root : !pdl.operation) : !pdl.operation
      pdl.replace %root with %made
    }
  }
  pdl.pattern : benefit(1) {
    %root = pdl.operation "test.success_op"
    %type = pdl.apply_native_constraint "op_constr_return_type"(%root : !pdl.operation) : !pdl.type
    pdl.rewrite %root {
      %typed = pdl.operation "test.typed" -> (%type : !pdl.type)
      pdl.erase %root
    }
  }
}

module @ir {
  func.func @f(%x: i32) {
    "test.op"(%x) : (i32) -> ()
    "test.other"() : () -> ()
    "test.keep"(%x) : (i32) -> ()
    "test.success_op"() : () -> ()
    return
  }
}
