"""Parsing MLIR text or files so that an error shows where it is in the source.

MLIR's parse errors name a location, `"-":4:20` for text (the bindings give text no file
name), and the line itself is nowhere in the message. `parse_module` parses a file under its own
name (`Module.parseFile`) and adds to a failed parse the source lines its diagnostics point at,
with a caret under the column:

    error: "-":4:20: use of value '%a' expects different type than prior uses: ...
    the MLIR source at line 4, column 20:
         4 |   %x = memref.load %a[%c0] : memref<?xf64>
           |                    ^

The lines are added as exception notes (PEP 678: Python 3.11 and later print them after the
message; on 3.10 the error is MLIR's alone). The exception is the bindings' own `MLIRError`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from typing import Any

# `"name":line:col` inside a diagnostic's location, `loc("-":4:20)` printed.
_LOCATION = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')
MAX_EXCERPTS = 5


def parse_module(ir: Any, source: str | bytes | None, context: Any, *, path: str | os.PathLike | None = None) -> Any:
    """`ir.Module` from MLIR text or bytecode `source`, or from the file at `path` (named by it
    in diagnostics, where the bindings can parse a file). A parse error (the bindings'
    `MLIRError`) carries the source lines its diagnostics point at, as notes."""
    names = {"-"}
    parse_file = None
    if path is not None:
        file = os.fspath(path)
        names.add(file)
        parse_file = getattr(ir.Module, "parseFile", None)
        if parse_file is None:
            source = _read(file)
    try:
        if parse_file is not None:
            return parse_file(file, context=context)
        return ir.Module.parse(source, context=context)
    except ir.MLIRError as error:
        # MLIR read the file itself: read it here only to show the lines of a failed parse.
        _add_excerpts(error, _read(file) if source is None else source, names)
        raise


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def excerpts(error: Exception, source: str | bytes, names: Collection[str]) -> list[str]:
    """One text per distinct location of `error`'s diagnostics (and their notes) inside
    `source` (named by one of `names`): the line and a caret under the column."""
    if isinstance(source, bytes):
        if source.startswith(b"ML\xefR"):  # bytecode: no lines to show
            return []
        source = source.decode("utf-8", "replace")
    lines = source.splitlines()
    seen: set[tuple[int, int]] = set()
    out: list[str] = []
    for diagnostic in getattr(error, "error_diagnostics", None) or ():
        for item in [diagnostic, *diagnostic.notes]:
            match = _LOCATION.search(str(item.location))
            if match is None or match.group(1) not in names:
                continue
            line, column = int(match.group(2)), int(match.group(3))
            if (line, column) in seen or not 1 <= line <= len(lines) or len(out) == MAX_EXCERPTS:
                continue
            seen.add((line, column))
            text = lines[line - 1].expandtabs(1)
            gutter = f"{line:6d} | "
            out.append(
                f"the MLIR source at line {line}, column {column}:\n{gutter}{text}\n"
                f"{' ' * (len(gutter) - 2)}| {' ' * (column - 1)}^"
            )
    return out


def _add_excerpts(error, source, names) -> None:
    if not hasattr(error, "add_note"):  # Python 3.10: no notes
        return
    for text in excerpts(error, source, names):
        error.add_note(text)
