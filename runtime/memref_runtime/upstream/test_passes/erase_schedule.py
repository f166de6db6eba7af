"""-test-transform-dialect-erase-schedule: erase the transform dialect's ops from the IR.

Upstream's pass erases every op that implements TransformOpInterface, outermost first (what is
nested in one goes with it). Every such op is in the transform dialect or one of its extensions,
whose ops are all named `transform.*`; the ones there that are not transform ops (pattern
descriptors, `transform.yield`) only ever sit inside one.
"""

from __future__ import annotations

from mlir import ir


def transform_ops(op: ir.Operation) -> list:
    """The outermost transform-dialect ops nested in `op`, in IR order."""
    found = []

    def visit(nested: ir.Operation) -> ir.WalkResult:
        if nested != op and nested.name.startswith("transform."):
            found.append(nested)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def run(op: ir.Operation, options: dict) -> bool:
    for schedule in reversed(transform_ops(op)):
        schedule.erase()
    return True
