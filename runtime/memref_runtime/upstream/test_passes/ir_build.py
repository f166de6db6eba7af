"""Small helpers for building and walking IR with the bindings, shared by the Python test passes."""

from __future__ import annotations

from mlir import ir


def create(
    name: str, results=(), operands=(), attributes: dict | None = None, successors=None, regions: int = 0
) -> ir.Operation:
    """An op at the current insertion point and location; attribute values may be given as text."""
    attrs = {k: ir.Attribute.parse(v) if isinstance(v, str) else v for k, v in (attributes or {}).items()}
    return ir.Operation.create(
        name, results=list(results), operands=list(operands), attributes=attrs, successors=successors, regions=regions
    )


def ops_by_block(op: ir.Operation) -> dict:
    """Block -> its ops in order, for every block nested in `op`. (A walk hands over plain
    Operations: iterating a block's ops would make OpViews, importing each dialect's Python
    module, linalg's taking 0.1 s.)"""
    found: dict = {}

    def add(nested: ir.Operation) -> ir.WalkResult:
        if nested != op:
            found.setdefault(nested.block, []).append(nested)
        return ir.WalkResult.ADVANCE

    op.walk(add, ir.WalkOrder.PRE_ORDER)
    return found


def blocks_in_dominance_order(region: ir.Region, ops: dict) -> list:
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
        in_block = ops.get(block)
        stack.extend(reversed(list(in_block[-1].successors)) if in_block else [])
    return order


def walk_preorder(op: ir.Operation, visit, ops: dict | None = None) -> None:
    """`visit(op)` for every op nested in `op` (not `op` itself), parents first, blocks in
    dominance order, as MLIR's dialect conversion collects the ops it converts."""
    ops = ops_by_block(op) if ops is None else ops
    for region in op.regions:
        for block in blocks_in_dominance_order(region, ops):
            for child in ops.get(block, []):
                visit(child)
                walk_preorder(child, visit, ops)


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
