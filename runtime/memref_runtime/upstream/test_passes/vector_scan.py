"""-test-vector-scan-lowering: lower `vector.scan` with upstream's scan lowering patterns.

Upstream's test pass applies the vector dialect's scan lowering patterns greedily to each
function. The same pattern set is public as the transform op
`transform.apply_patterns.vector.lower_scan`, which `transform.apply_patterns` applies the same
way (greedy, with folding): here the transform interpreter runs that on each function.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects.transform import interpreter

SCHEDULE = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%function: !transform.any_op {transform.readonly}) {
    transform.apply_patterns to %function {
      transform.apply_patterns.vector.lower_scan
    } : !transform.any_op
    transform.yield
  }
}
"""

_schedules: dict = {}


def schedule(context: ir.Context) -> ir.Module:
    if context not in _schedules:
        _schedules[context] = ir.Module.parse(SCHEDULE, context)
    return _schedules[context]


def run(op: ir.Operation, options: dict) -> bool:
    module = schedule(op.context)
    interpreter.apply_named_sequence(op, module.body.operations[0], module)
    return True
