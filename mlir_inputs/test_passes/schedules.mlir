// Transform schedules for tests/test_test_passes.py (-test-transform-dialect-erase-schedule
// against Debian's): a named sequence beside the payload, a library module of sequences, a
// schedule in a nested module, payload attributes that name the dialect.
module attributes {transform.with_named_sequence} {
  func.func @payload(%a: memref<4xf32>) attributes {transform.target_tag = "here"} {
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<4xf32>
    memref.store %x, %a[%c0] : memref<4xf32>
    return
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
  module @library attributes {transform.with_named_sequence} {
    transform.named_sequence @helper(%op: !transform.any_op {transform.readonly}) {
      transform.yield
    }
    func.func @kept() {
      return
    }
  }
}
