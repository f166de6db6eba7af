"""-test-arith-emulate-wide-int: emulate wide integers in the functions named with a prefix only.

Upstream's test pass runs the arith/vector wide-integer emulation patterns on each function
whose name starts with `function-prefix`: an arith or vector op on integers wider than
`widest-int-supported` (i64 with 32) becomes ops on halves (vector<2xi32>); everything else,
the signature, calls and returns included, keeps its types, and where a converted value meets
an unconverted one an `llvm.bitcast` joins them (placed where MLIR's conversion driver places
its materializations: after the value's definition, at the start of the block for an argument).

The public `arith-emulate-wide-int` pass has the same patterns but also converts signatures,
calls and returns, and makes no such bitcasts. So here the public pass runs (through the
bindings) on a scratch module that holds the function's body in an op it does not know, with
the body's own calls and returns stood in for by unknown ops, and each boundary between
converted and unconverted values spelled as a call the public pass does convert (to a function
that does not exist). Afterwards those calls become the bitcasts and the body goes back. Values
of a width the emulation has no type for (other than twice the widest) get no such call: the
first op on one fails as upstream's does.
"""

from __future__ import annotations

from mlir import ir, passmanager

from .ir_build import create, walk_preorder

PREFIX = "memref_runtime.wide_int"
INTO, OUT_OF = f"@{PREFIX}_into", f"@{PREFIX}_out_of"  # the calls that mark a boundary
# Converted by the public pass, not by upstream's test pass.
HIDDEN = ("func.call", "func.return", "func.call_indirect")


class Scope:
    """A function's body in a scratch module, prepared for the public pass and put back after."""

    def __init__(self, function: ir.Operation, widest: int, isolate: bool = False):
        # `isolate`: every converted op gets its own boundaries, so that an op the patterns
        # cannot convert fails as itself (the way upstream's pass reports it).
        self.function, self.widest, self.isolate = function, widest, isolate
        with function.location:
            self.scratch = create("builtin.module", regions=1)
            self.scratch.regions[0].blocks.append()
            with ir.InsertionPoint(self.scratch.regions[0].blocks[0]):
                self.op = create(f"{PREFIX}_scope", regions=1)
            self.holder = create(f"{PREFIX}_holder", regions=1)  # detached: unseen by the pass
        self.holding = self.holder.regions[0].blocks.append()
        for block in list(function.regions[0].blocks):
            block.append_to(self.op.regions[0])
        self.hidden: list = []
        self.entered: dict = {}  # unconverted value -> the call that brings it in

    def nested_ops(self) -> list:
        found: list = []
        walk_preorder(self.op, found.append)
        return found

    def width(self, type_: ir.Type) -> int:
        if isinstance(type_, ir.VectorType):
            type_ = type_.element_type
        return type_.width if isinstance(type_, ir.IntegerType) else 0

    def wide(self, type_: ir.Type) -> bool:
        return self.width(type_) > self.widest

    def convertible(self, type_: ir.Type) -> bool:
        """Whether the emulation has a type for it (twice the widest width: two halves)."""
        return self.width(type_) == 2 * self.widest

    def converted(self, op) -> bool:
        """Whether upstream's test pass converts `op`: an arith or vector op on wide integers."""
        op = op.operation
        return op.name.split(".", 1)[0] in ("arith", "vector") and any(
            self.wide(v.type) for v in [*op.operands, *op.results]
        )

    def hide(self, op: ir.Operation) -> None:
        """An unknown op stands in for `op`, which waits in the holder with detached operands."""
        with ir.InsertionPoint(op), op.location:
            stand_in = create(f"{PREFIX}_stand_in", [r.type for r in op.results], list(op.operands))
        for old, new in zip(op.results, stand_in.results):
            old.replace_all_uses_with(new)
        for index, value in enumerate(list(op.operands)):
            op.operands[index] = self.holding.add_argument(value.type, op.location)
        self.holding.append(op)
        self.hidden.append((op, stand_in))

    def prepare(self) -> None:
        for op in self.nested_ops():
            if op.name in HIDDEN:
                self.hide(op)
        # In the order the conversion driver asks for operands, so that the bitcasts of block
        # arguments (each put at the start of the block) come out in its order.
        for op in self.nested_ops():
            if self.converted(op):
                for index, value in enumerate(op.operands):
                    if self.convertible(value.type) and (
                        self.isolate or isinstance(value.owner, ir.Block) or not self.converted(value.owner)
                    ):
                        op.operands[index] = self.enter(value, op.location)
                for value in op.results:
                    self.leave(value)

    def enter(self, value: ir.Value, location: ir.Location) -> ir.Value:
        """The value a converted op uses for unconverted wide `value`: a call's result."""
        if value not in self.entered:
            owner = value.owner
            at = (
                ir.InsertionPoint.at_block_begin(owner)
                if isinstance(owner, ir.Block)
                else ir.InsertionPoint.after(owner.operation)
            )
            with at, location:
                box = create(f"{PREFIX}_box", [ir.TupleType.get_tuple([value.type])], [value])
                self.entered[value] = create("func.call", [value.type], [box.result], {"callee": INTO}).result
        return self.entered[value]

    def leave(self, value: ir.Value) -> None:
        """Uses of converted wide `value` by unconverted ops go through a call's argument."""
        outside = [use for use in value.uses if not self.converted(use.owner)]
        if not outside or not self.convertible(value.type) or self.isolate:
            return
        with ir.InsertionPoint.after(value.owner.operation), value.owner.operation.location:
            call = create("func.call", [ir.TupleType.get_tuple([value.type])], [value], {"callee": OUT_OF})
            unbox = create(f"{PREFIX}_unbox", [value.type], [call.result])
        for use in outside:
            use.owner.operation.operands[use.operand_number] = unbox.result

    def boundary_to_bitcast(self, call: ir.Operation) -> None:
        """`box + call INTO` or `call OUT_OF + unbox` -> one llvm.bitcast in the call's place."""
        if str(call.attributes["callee"]) == INTO:
            box = call.operands[0].owner.operation
            source, result, extra = box.operands[0], call.results[0], box
        else:
            unbox = next(iter(call.results[0].uses)).owner.operation
            source, result, extra = call.operands[0], unbox.results[0], unbox
        with ir.InsertionPoint(call), call.location:
            bitcast = create("llvm.bitcast", [result.type], [source])
        result.replace_all_uses_with(bitcast.result)
        (call.erase(), extra.erase()) if str(call.attributes["callee"]) == INTO else (extra.erase(), call.erase())

    def restore(self) -> None:
        """The bitcasts in place of the boundaries, the hidden ops back, the body back."""
        for op in self.nested_ops():
            if op.name == "func.call" and str(op.attributes["callee"]) in (INTO, OUT_OF):
                self.boundary_to_bitcast(op)
        for op, stand_in in self.hidden:
            op.move_before(stand_in)
            for index, value in enumerate(stand_in.operands):
                op.operands[index] = value
            for new, old in zip(stand_in.results, op.results):
                new.replace_all_uses_with(old)
            stand_in.erase()
        for block in list(self.op.regions[0].blocks):
            block.append_to(self.function.regions[0])
        self.scratch.erase()
        self.holder.erase()


def convert(function: ir.Operation, widest: int, isolate: bool = False) -> None:
    """Runs the public pass on the body of `function` (MLIRError if it fails)."""
    scope = Scope(function, widest, isolate)
    try:
        scope.prepare()
        manager = passmanager.PassManager.parse(
            f"builtin.module(arith-emulate-wide-int{{widest-int-supported={widest}}})"
        )
        manager.enable_verifier(False)
        manager.run(scope.scratch)
    finally:
        scope.restore()


def emulate(function: ir.Operation, widest: int) -> None:
    """Emulates wide integers in `function`; MLIRError with upstream's diagnostics if it cannot."""
    context = function.context
    allowed, context.allow_unregistered_dialects = context.allow_unregistered_dialects, True
    copy = function.clone(ip=False)
    try:
        convert(function, widest)
    except ir.MLIRError:
        try:
            convert(copy, widest, isolate=True)  # the failing op, as upstream names it
        except ir.MLIRError as named:
            raise named from None
        raise
    finally:
        copy.erase()
        context.allow_unregistered_dialects = allowed


def run(op: ir.Operation, options: dict) -> bool:
    widest = options["widest-int-supported"]
    if widest < 2 or widest & (widest - 1):
        return False  # upstream's pass fails without a message
    name = ir.StringAttr(op.attributes["sym_name"]).value
    if not name.startswith(options["function-prefix"]):
        return True
    emulate(op, widest)
    return True
