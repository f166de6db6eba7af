"""-test-cf-assert: lower `cf.assert` to LLVM the way upstream's test pass does, without abort().

For each assertion (in the order MLIR's dialect conversion visits ops): its block is split
before it; the block ends in `llvm.cond_br %cond, ^continue, ^failure`; the failure block, at the
end of the region, puts() the message (a private constant global `assert_msg`, uniqued, holding
its bytes and a NUL) and branches on to ^continue. The globals and the declaration of puts go to
the start of the nearest module, each new one before the last. A failed assertion reports its
message and the program goes on: a test can check it.

The dialect conversion that upstream's pass runs also folds every op it visits that folds
(all but the LLVM dialect's). A public pass does exactly that conversion with nothing else to
convert but `ub` ops: `convert-ub-to-llvm` runs first here (through the bindings), unless the
module has `ub` ops, which upstream's pass would keep (then the IR is not folded).
"""

from __future__ import annotations

from mlir import ir, passmanager

from .ir_build import create, nearest, symbol_names, unique_symbol, walk_preorder

PRINT_FUNCTION = "puts"
GLOBAL_NAME = "assert_msg"


def message_global(module: ir.Operation, message: bytes) -> tuple[str, str]:
    """A private constant global holding `message` and a NUL, at the start of `module`; its name
    and LLVM array type."""
    data = message + b"\0"
    array = f"!llvm.array<{len(data)} x i8>"
    name = unique_symbol(symbol_names(module), GLOBAL_NAME)
    values = ", ".join(str(b - 256 if b > 127 else b) for b in data)
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]):
        create(
            "llvm.mlir.global",
            attributes={
                "addr_space": "0 : i32",
                "constant": ir.UnitAttr.get(),
                "global_type": f"{array}",
                "linkage": "#llvm.linkage<private>",
                "sym_name": ir.StringAttr.get(name),
                "value": f"dense<[{values}]> : tensor<{len(data)}xi8>",
                "visibility_": "0 : i64",
            },
            regions=1,
        )
    return name, array


def declare_print(module: ir.Operation) -> None:
    if PRINT_FUNCTION in symbol_names(module):
        return
    with ir.InsertionPoint.at_block_begin(module.regions[0].blocks[0]), module.location:
        create(
            "llvm.func",
            attributes={
                "CConv": "#llvm.cconv<ccc>",
                "function_type": "!llvm.func<void (ptr)>",
                "linkage": "#llvm.linkage<external>",
                "sym_name": ir.StringAttr.get(PRINT_FUNCTION),
                "visibility_": "0 : i64",
            },
            regions=1,
        )


def lower(assertion: ir.Operation) -> None:
    module = nearest(assertion, "builtin.module")
    block, region = assertion.block, assertion.block.region
    continuation = block.create_after()
    following = False
    for op in list(block.operations):
        if following:
            continuation.append(op.operation)
        following = following or op.operation == assertion
    failure = region.blocks.append()
    message = ir.StringAttr(assertion.attributes["msg"]).value_bytes
    with assertion.location:
        name, array = message_global(module, message)
        with ir.InsertionPoint(failure):
            ptr = ir.Type.parse("!llvm.ptr")
            address = create("llvm.mlir.addressof", [ptr], attributes={"global_name": f"@{name}"})
            element = create(
                "llvm.getelementptr",
                [ptr],
                [address.result],
                attributes={"elem_type": array, "rawConstantIndices": "array<i32: 0>"},
            )
            declare_print(module)
            create(
                "llvm.call",
                [],
                [element.result],
                attributes={
                    "CConv": "#llvm.cconv<ccc>",
                    "TailCallKind": "#llvm.tailcallkind<none>",
                    "callee": f"@{PRINT_FUNCTION}",
                    "fastmathFlags": "#llvm.fastmath<none>",
                    "op_bundle_sizes": "array<i32>",
                    "operandSegmentSizes": "array<i32: 1, 0>",
                },
            )
            create("llvm.br", successors=[continuation])
        with ir.InsertionPoint(block):
            create(
                "llvm.cond_br",
                [],
                [assertion.operands[0]],
                {"operandSegmentSizes": "array<i32: 1, 0, 0>"},
                successors=[continuation, failure],
            )
    assertion.erase()


FOLDING_PIPELINE = "builtin.module(convert-ub-to-llvm)"


def run(op: ir.Operation, options: dict) -> bool:
    names: list = []
    walk_preorder(op, lambda o: names.append(o.name))
    if not any(name.startswith("ub.") for name in names):
        passmanager.PassManager.parse(FOLDING_PIPELINE).run(op)
    assertions = []
    walk_preorder(op, lambda o: assertions.append(o) if o.name == "cf.assert" else None)
    for assertion in assertions:
        lower(assertion)
    return True
