"""-test-pdl-bytecode-pass: apply the PDL patterns of `module @patterns` to `module @ir`.

As upstream's test pass: the patterns module is taken out of the IR, compiled (PDL bytecode)
with the test's native constraints and rewrites registered under their names, and applied
greedily to the body of `module @ir`. Without both modules the pass does nothing.

The native functions are written here after upstream's (what each checks or builds). The MLIR
Python bindings pass operations, values, types and attributes to and from native functions,
but not ranges: a pattern that calls one of the three that take or return ranges
(multi_entity_var_constraint, var_creator, op_constr_return_type_range) is refused with an
error that says so, rather than run differently.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.rewrite import PatternRewriter, PDLModule, PDLResultList, apply_patterns_and_fold_greedily

NEEDS_RANGES = ("multi_entity_var_constraint", "var_creator", "op_constr_return_type_range")
# A native constraint returns something true to fail, as the bindings' rewrite patterns do.
FAIL, SUCCEED = True, False


def _named(op, name: str) -> bool:
    return op.operation.name == name


def single_entity_constraint(rewriter: PatternRewriter, results: PDLResultList, values: list) -> bool:
    return SUCCEED if _named(values[0], "test.op") else FAIL


def multi_entity_constraint(rewriter: PatternRewriter, results: PDLResultList, values: list) -> bool:
    return SUCCEED if _named(values[1], "test.op") else FAIL


def op_constr_return_attr(rewriter: PatternRewriter, results: PDLResultList, values: list) -> bool:
    if not _named(values[0], "test.success_op"):
        return FAIL
    results.append(ir.StringAttr.get("test.success"))
    return SUCCEED


def op_constr_return_type(rewriter: PatternRewriter, results: PDLResultList, values: list) -> bool:
    if not _named(values[0], "test.success_op"):
        return FAIL
    results.append(ir.F32Type.get())
    return SUCCEED


def op_multiple_returns_failure(rewriter: PatternRewriter, results: PDLResultList, values: list) -> bool:
    return FAIL


def creator(rewriter: PatternRewriter, results: PDLResultList, values: list) -> None:
    with rewriter.ip, values[0].location:
        results.append(ir.Operation.create("test.success"))


def type_creator(rewriter: PatternRewriter, results: PDLResultList, values: list) -> None:
    results.append(ir.F32Type.get())


def str_creator(rewriter: PatternRewriter, results: PDLResultList, values: list) -> None:
    results.append(ir.StringAttr.get("test.str"))


def rewriter_function(rewriter: PatternRewriter, results: PDLResultList, values: list) -> None:
    root, value = values
    with rewriter.ip, root.location:
        ir.Operation.create("test.success", operands=[value])
    rewriter.erase_op(root.operation)


CONSTRAINTS = {
    f.__name__: f
    for f in (
        single_entity_constraint,
        multi_entity_constraint,
        op_constr_return_attr,
        op_constr_return_type,
        op_multiple_returns_failure,
    )
}
REWRITES: dict[str, Callable] = {
    "creator": creator,
    "type_creator": type_creator,
    "str_creator": str_creator,
    "rewriter": rewriter_function,
}


def child_module(op: ir.Operation, name: str) -> ir.Operation | None:
    for child in op.regions[0].blocks[0].operations:
        child = child.operation
        if (
            child.name == "builtin.module"
            and "sym_name" in child.attributes
            and ir.StringAttr(child.attributes["sym_name"]).value == name
        ):
            return child
    return None


def native_calls(op: ir.Operation) -> list:
    found = []
    for region in op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name in ("pdl.apply_native_constraint", "pdl.apply_native_rewrite"):
                    found.append((child, ir.StringAttr(child.attributes["name"]).value))
                found += native_calls(child)
    return found


def run(op: ir.Operation, options: dict) -> bool:
    patterns, payload = child_module(op, "patterns"), child_module(op, "ir")
    if patterns is None or payload is None:
        return True
    for call, name in native_calls(patterns):
        if name in NEEDS_RANGES:
            call.location.emit_error(
                f"the PDL native function '{name}' takes or returns ranges, which the MLIR Python bindings cannot"
                " pass: this -test-pdl-bytecode-pass (memref-runtime's, in Python) cannot run it"
            )
            return False
    compiled = ir.Module.create()
    for child in list(patterns.regions[0].blocks[0].operations):
        compiled.body.append(child.operation)
    patterns.erase()
    module = PDLModule(compiled)
    for name, function in CONSTRAINTS.items():
        module.register_constraint_function(name, function)
    for name, function in REWRITES.items():
        module.register_rewrite_function(name, function)
    apply_patterns_and_fold_greedily(payload, module.freeze())
    return True
