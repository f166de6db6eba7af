"""Edits of a module, as text in and text out: what a reduction tries.

Each edit parses the module afresh (a single-threaded Context of this process, reading.py),
changes it, verifies it and prints it; an edit that would leave the module invalid (a value used
after its definition was erased, a call of an erased function) gives None, so that no check is
spent on it. A block is named by its path from the module's body: (position of an op in its
block, region, block) per level.
"""

from __future__ import annotations

import contextlib

from ..bindings import bindings
from .reading import parent_context

Path = tuple  # ((op position, region index, block index), ...)


@contextlib.contextmanager
def _parsed(text: str):
    with parent_context() as context:
        yield bindings().ir.Module.parse(text, context=context)


def _walk(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from _walk(inner.operation)


def count_ops(text: str) -> int:
    """How many operations the module holds (every nested one; the module itself not)."""
    with _parsed(text) as module:
        return sum(1 for _ in _walk(module.operation))


def block_paths(text: str) -> list[Path]:
    """The path of every block that holds an op, outermost first (the module's body is ())."""
    found: list[Path] = [()]

    def visit(block, path: Path) -> None:
        for position, op in enumerate(block.operations):
            for r, region in enumerate(op.operation.regions):
                for b, inner in enumerate(region.blocks):
                    child = path + ((position, r, b),)
                    found.append(child)
                    visit(inner, child)

    with _parsed(text) as module:
        visit(module.body, ())
    return found


def _resolve(module, path: Path):
    block = module.body
    for position, r, b in path:
        ops = list(block.operations)
        if position >= len(ops) or r >= len(ops[position].operation.regions):
            return None
        blocks = list(ops[position].operation.regions[r].blocks)
        if b >= len(blocks):
            return None
        block = blocks[b]
    return block


def _is_terminator(op) -> bool:
    # What every dialect here ends a block with; an op without results and successors that
    # ends its block is treated alike (scf.yield, func.return, affine.yield, cf.br, ...).
    return op.name.endswith((".yield", ".return", ".terminator")) or op.name in (
        "cf.br",
        "cf.cond_br",
        "llvm.return",
        "llvm.br",
    )


def removable(text: str, path: Path) -> list[int]:
    """Positions of the ops of block `path` that an edit may erase (every op but the terminator)."""
    with _parsed(text) as module:
        block = _resolve(module, path)
        if block is None:
            return []
        ops = [op.operation for op in block.operations]
        return [i for i, op in enumerate(ops) if not (i == len(ops) - 1 and _is_terminator(op))]


def _inside(op, chosen: list) -> bool:
    while op is not None:
        if any(op == c for c in chosen):
            return True
        op = op.parent
    return False


def erase(text: str, path: Path, positions: list[int]) -> str | None:
    """The module without the ops at `positions` of block `path`, or None where another op uses
    what they define, or the result does not verify."""
    with _parsed(text) as module:
        block = _resolve(module, path)
        if block is None:
            return None
        ops = [op.operation for op in block.operations]
        chosen = [ops[i] for i in positions if i < len(ops)]
        for op in chosen:
            for inner in [op, *_walk(op)]:
                for result in inner.results:
                    if any(not _inside(use.owner, chosen) for use in result.uses):
                        return None
        for op in reversed(chosen):  # users before what they use: nothing erased is still used
            op.erase()
        return _verified(module)


def _verified(module) -> str | None:
    try:
        module.operation.verify()
    except Exception:  # noqa: BLE001 - MLIRError: not a valid candidate
        return None
    return str(module)


def scalar_values(text: str) -> list[tuple[int, int, str]]:
    """(op number in pre-order, result number, type) of each used integer, index or float result
    of an op other than a constant."""
    found = []
    with _parsed(text) as module:
        for n, op in enumerate(_walk(module.operation)):
            if op.name in ("arith.constant", "llvm.mlir.constant"):
                continue
            for k, result in enumerate(op.results):
                kind = str(result.type)
                if (
                    kind == "index"
                    or kind.startswith("i")
                    and kind[1:].isdigit()
                    or kind in ("f16", "bf16", "f32", "f64")
                ) and any(True for _ in result.uses):
                    found.append((n, k, kind))
    return found


def replace_with_constant(text: str, op_number: int, result: int, literal: str) -> str | None:
    """The module with result `result` of op number `op_number` replaced by `arith.constant literal`."""
    ir = bindings().ir
    with _parsed(text) as module:
        op = next((o for n, o in enumerate(_walk(module.operation)) if n == op_number), None)
        if op is None or result >= len(op.results):
            return None
        value = op.results[result]
        try:
            attribute = ir.Attribute.parse(f"{literal} : {value.type}")
        except Exception:  # noqa: BLE001 - a literal the type cannot take
            return None
        with ir.InsertionPoint(op), op.location:
            constant = ir.Operation.create("arith.constant", results=[value.type], attributes={"value": attribute})
        value.replace_all_uses_with(constant.results[0])
        return _verified(module)


def run_passes(text: str, pipeline: str) -> str | None:
    """The module after `pipeline` (e.g. builtin.module(canonicalize)), None if it failed."""
    with _parsed(text) as module:
        try:
            bindings().passmanager.PassManager.parse(pipeline, context=module.context).run(module.operation)
        except Exception:  # noqa: BLE001
            return None
        return _verified(module)


def verified(text: str) -> str | None:
    """`text` as parsed, verified and printed, or None when it is not a valid module."""
    try:
        with _parsed(text) as module:
            return _verified(module)
    except Exception:  # noqa: BLE001 - MLIRError: not a valid candidate
        return None
