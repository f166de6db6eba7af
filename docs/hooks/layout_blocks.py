"""A griffe extension for the API pages: the package's docstrings lay out tables of names in
indented plain-text blocks (a module per line, an option per line). Markdown would run their
lines into one paragraph; this keeps each such block as preformatted text."""

from __future__ import annotations

import re
from typing import Any

import griffe

INDENTED = re.compile(r"^( {2,})\S")
# A row of a table at the margin: one name, then 2 spaces or more (or a module's or folder's
# name and one space), then what it is (`signatures.py    func.func types -> ...`). ruff format
# takes a docstring's common indentation off, so a docstring that is only such a table has its
# rows at the margin.
ROW = re.compile(r"^(?:[^\s`|*#-][^ ]* {2,}\S|[\w./-]+(?:\.py|/) +\S)")


def table_end(lines: list[str], i: int) -> int:
    """The end of the run of margin rows (and their indented continuations) from line i, or i
    when fewer than two rows start there."""
    j, rows = i, 0
    while j < len(lines) and (ROW.match(lines[j]) or (j > i and INDENTED.match(lines[j]))):
        rows += bool(ROW.match(lines[j]))
        j += 1
    return j if rows >= 2 else i


def fenced(text: str) -> str:
    """`text` with each run of indented lines (2 spaces or more), and each table of rows at the
    margin, in a ```text fence."""
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        j = table_end(lines, i)
        if j > i:
            out += ([] if i == 0 or not lines[i - 1].strip() else [""]) + ["```text", *lines[i:j], "```", ""]
            i = j
            continue
        while j < len(lines) and INDENTED.match(lines[j]):
            j += 1
        after_blank = i == 0 or not lines[i - 1].strip()
        # A run that Markdown already reads as code: 4 spaces or more after a blank line.
        if j == i or (after_blank and len(INDENTED.match(lines[i])[1]) >= 4):
            out.extend(lines[i : max(j, i + 1)])
            i = max(j, i + 1)
            continue
        indent = min(len(INDENTED.match(line)[1]) for line in lines[i:j])
        out += ([] if after_blank else [""]) + ["```text", *(line[indent:] for line in lines[i:j]), "```", ""]
        i = j
    return "\n".join(out)


def indentation(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def as_written(docstring: griffe.Docstring) -> str:
    """The docstring with the indentation its author gave it: cleaning removes the smallest
    indentation of the lines after the first, which for a docstring whose every later line is
    part of an indented block (`  signatures.py  ...`) is the block's own."""
    try:
        source = docstring.source.splitlines()
    except ValueError:  # no source lines to read it from
        return docstring.value
    # The lines after the first, as cleaning sees them: without the closing quotes' own line.
    later = [line for line in source[1:] if line.strip() and line.strip() not in ('"""', "'''")]
    removed = min(map(indentation, later), default=0)
    lost = removed - indentation(source[0])  # the opening line's indentation is the code's, not the text's
    if lost <= 0:
        return docstring.value
    first, *rest = docstring.value.splitlines()
    return "\n".join([first, *((" " * lost + line) if line.strip() else line for line in rest)])


def walk(obj: griffe.Object) -> None:
    if obj.docstring is not None:
        obj.docstring.value = fenced(as_written(obj.docstring))
    for member in obj.members.values():
        if not member.is_alias:
            walk(member)


class LayoutBlocks(griffe.Extension):
    """Fences the indented layout blocks of every docstring of a package, once it is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        walk(pkg)
