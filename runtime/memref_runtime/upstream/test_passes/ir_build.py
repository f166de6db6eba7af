"""Small helpers for building and walking IR with the bindings, shared by the Python test passes."""

from __future__ import annotations

from mlir import ir


def create(name: str, results=(), operands=(), attributes: dict | None = None, successors=None,
           regions: int = 0) -> ir.Operation:
    """An op at the current insertion point and location; attribute values may be given as text."""
    attrs = {k: ir.Attribute.parse(v) if isinstance(v, str) else v for k, v in (attributes or {}).items()}
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attrs,
                               successors=successors, regions=regions)


def blocks_in_dominance_order(region: ir.Region) -> list:
    """The blocks of `region` reachable from its entry, depth first along the successors (the order
    in which MLIR's forward-dominance walks visit them; unreachable blocks are not visited)."""
    blocks = list(region.blocks)
    if not blocks:
        return []
    seen, order, stack = set(), [], [blocks[0]]
    while stack:
        block = stack.pop()
        if block in seen:
            continue
        seen.add(block)
        order.append(block)
        terminator = _last_op(block)
        successors = list(terminator.successors) if terminator is not None else []
        stack.extend(reversed(successors))
    return order


def _last_op(block: ir.Block) -> ir.Operation | None:
    operations = block.operations
    return operations[len(operations) - 1].operation if len(operations) else None


def walk_preorder(op: ir.Operation, visit) -> None:
    """`visit(op)` for every op nested in `op` (not `op` itself), parents first, blocks in
    dominance order, as MLIR's dialect conversion collects the ops it converts."""
    for region in op.regions:
        for block in blocks_in_dominance_order(region):
            for child in block.operations:
                child = child.operation
                visit(child)
                walk_preorder(child, visit)


def nearest(op: ir.Operation, name: str) -> ir.Operation | None:
    """The closest ancestor of `op` named `name`."""
    parent = op.parent
    while parent is not None and parent.name != name:
        parent = parent.parent
    return parent.operation if parent is not None else None


def symbol_names(table: ir.Operation) -> set:
    """The symbols defined directly in the body of `table` (a module)."""
    names = set()
    for op in table.regions[0].blocks[0].operations:
        attributes = op.operation.attributes
        if "sym_name" in attributes:
            names.add(ir.StringAttr(attributes["sym_name"]).value)
    return names


def unique_symbol(taken: set, base: str) -> str:
    """`base`, else `base_0`, `base_1`, ...: the first name not in `taken` (MLIR's uniquing)."""
    if base not in taken:
        return base
    counter = 0
    while f"{base}_{counter}" in taken:
        counter += 1
    return f"{base}_{counter}"
