"""Rewriting a test file: where its generated CHECK lines are, and where new ones go.

A section's existing CHECK lines are aligned with the new ones (as `diff` does), so an unchanged
line stays where it is, a changed line is rewritten in place and a new line goes next to its
neighbours; comments, code and hand-added CHECK-NOT/-SAME/-DAG/-COUNT lines are left alone. A
section with no CHECK lines yet goes right after its `run(<name>)` call (or the `@run`-decorated
function), else at the end of the file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from .checks import CHECK_KINDS, GENERATED_KINDS, LABEL_PATTERN, CheckLine, section_key
from .errors import UpdateError


def comment_marker(text: str) -> str:
    """The comment leader of a test's RUN lines (`#` in Python, `//` in MLIR)."""
    m = re.search(r"^[ \t]*(\S+?)[ \t]*RUN:", text, re.M)
    if not m:
        raise UpdateError("no `RUN:` line found")
    return m.group(1)


def _check_line_re(comment: str, prefixes) -> re.Pattern:
    names = "|".join(re.escape(p) for p in sorted(set(prefixes), key=len, reverse=True))
    return re.compile(
        rf"^(?P<indent>[ \t]*){re.escape(comment)}[ \t]*(?P<prefix>{names})(?P<kind>{CHECK_KINDS})?"
        rf"(?P<literal>\{{LITERAL\}})?:(?P<pattern>.*?)\r?\n?$"
    )


def _run_call_anchor(lines: list[str], name: str) -> tuple[int, str] | None:
    """(index, indent) of the line after which a new section `name` goes: its `run(name)` call,
    or the last line of a `@run`-decorated `def name` (with the indent of the `def`)."""
    call = re.compile(rf"^(?P<indent>[ \t]*)run\([ \t]*{re.escape(name)}[ \t]*\)[ \t]*(#.*)?$")
    for i, line in enumerate(lines):
        m = call.match(line.rstrip("\r\n"))
        if m:
            return i, m.group("indent")
    define = re.compile(rf"^(?P<indent>[ \t]*)def {re.escape(name)}\(")
    for i, line in enumerate(lines):
        m = define.match(line)
        if m and i > 0 and lines[i - 1].strip().startswith("@run"):
            last = i
            for j in range(i + 1, len(lines)):
                text = lines[j].rstrip()
                if text and len(text) - len(text.lstrip()) <= len(m.group("indent")):
                    break
                if text:
                    last = j
            return last, m.group("indent")
    return None


# A generated CHECK line found in the file: (line index, its indent, the line).
Found = tuple[int, str, CheckLine]


def parse(lines: list[str], check_re: re.Pattern) -> dict[tuple, list[Found]]:
    """The file's generated CHECK lines, by section key ((label, occurrence); (None, 0) before
    the first label)."""
    old: dict[tuple, list[Found]] = {}
    key: tuple = (None, 0)
    seen: dict = {}
    for i, line in enumerate(lines):
        m = check_re.match(line)
        if not m or (m.group("kind") or "") not in GENERATED_KINDS:
            continue
        pattern = m.group("pattern")
        pattern = pattern[1:] if pattern.startswith(" ") else pattern  # the one space after the colon
        check = CheckLine(m.group("prefix"), m.group("kind") or "", bool(m.group("literal")), pattern)
        label = LABEL_PATTERN.match(pattern) if check.kind == "-LABEL" else None
        if label:
            # A section's labels under several prefixes name one section.
            _, occurrence = section_key((check.prefix, label.group("name")), seen)
            key = (label.group("name"), occurrence)
        old.setdefault(key, []).append((i, m.group("indent"), check))
    return old


class Edits:
    """What becomes of the file's lines: line i replaced by `replaced[i]` (none: deleted), and
    lines inserted at half positions (`inserted[i - 0.5]` goes before line i)."""

    def __init__(self, comment: str):
        self.comment = comment
        self.replaced: dict[int, list[str]] = {}
        self.inserted: dict[float, list[str]] = {}

    def render(self, checks: list[CheckLine], indent: str) -> list[str]:
        return [c.render(indent, self.comment) + "\n" for c in checks]

    def insert(self, position: float, checks: list[CheckLine], indent: str, first: bool = False) -> None:
        rendered, there = self.render(checks, indent), self.inserted.get(position, [])
        self.inserted[position] = rendered + there if first else there + rendered

    def update(self, before: list[Found], new: list[CheckLine]) -> None:
        """A section that has CHECK lines: aligned with its new ones, as `diff` does."""
        matcher = difflib.SequenceMatcher(None, [c.key() for *_, c in before], [c.key() for c in new], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                for (i, indent, _), check in zip(before[i1:i2], new[j1:j2]):
                    self.replaced[i] = self.render([check], indent)
            elif tag in ("replace", "delete"):
                # Line k of the old run becomes line k of the new one, in its place; extra new
                # lines follow the last of those, extra old lines go.
                pairs = max(1, min(i2 - i1, j2 - j1))
                for k, (i, indent, _) in enumerate(before[i1:i2]):
                    chunk = new[j1 + k : j1 + k + 1] if k < pairs - 1 else new[j1 + k : j2] if k == pairs - 1 else []
                    self.replaced[i] = self.render(chunk, indent)
            elif i1 < len(before):
                self.insert(before[i1][0] - 0.5, new[j1:j2], before[i1][1])
            else:
                self.insert(before[-1][0] + 0.5, new[j1:j2], before[-1][1])

    def emit(self, lines: list[str]) -> str:
        out = []
        for i, line in enumerate(lines):
            out += self.inserted.get(i - 0.5, [])
            out += self.replaced.get(i, [line])
        out += self.inserted.get(len(lines) - 0.5, [])
        return "".join(out)


def _new_section_place(lines: list[str], name: str, last: float, following: list[float]) -> tuple[float, str]:
    """Where a section without CHECK lines goes: after its run(name) call if that keeps the file
    in output order, else before the next section that has lines, else at the end."""
    limit = following[0] if following else float("inf")
    anchor, anchor_indent = _run_call_anchor(lines, name) or (None, "")
    if anchor is not None and last <= anchor + 0.5 <= limit:
        return anchor + 0.5, anchor_indent
    if following:
        line = lines[int(limit + 0.5)]
        return limit, line[: len(line) - len(line.lstrip(" \t"))]  # its indentation
    return len(lines) - 0.5, ""


def place(lines: list[str], old: dict[tuple, list[Found]], blocks: dict[tuple, list[CheckLine]], edits: Edits) -> None:
    """Records in `edits` where each section's new CHECK lines go (the module docstring's rules)."""
    keys = list(blocks)
    placed: dict[tuple, tuple[float, str]] = {}  # where each section's first line went, its indent
    last = -1.0  # position of the last line placed so far
    for n, key in enumerate(keys):
        if key in old:
            before = old[key]
            edits.update(before, blocks[key])
            placed[key] = (before[0][0] - 0.5, before[0][1])
            last = max(last, before[-1][0] + 0.5)
        elif key[0] is not None:  # the preamble goes before the first section, once that is placed
            following = [old[k][0][0] - 0.5 for k in keys[n + 1 :] if k in old]
            position, indent = _new_section_place(lines, key[0], last, following)
            edits.insert(position, blocks[key], indent)
            placed[key] = (position, indent)
            last = position
    preamble = next((k for k in keys if k[0] is None), None)
    if preamble is not None and preamble not in old:
        position, indent = next((placed[k] for k in keys if k in placed), (len(lines) - 0.5, ""))
        edits.insert(position, blocks[preamble], indent, first=True)
    # Sections that are no longer printed lose their generated lines.
    for key, before in old.items():
        if key not in blocks:
            for i, *_ in before:
                edits.replaced[i] = []


def rewrite(text: str, blocks: dict[tuple, list[CheckLine]], prefixes: Iterable[str]) -> str:
    """`text` with its generated CHECK lines replaced by `blocks`: parse, place, emit."""
    comment = comment_marker(text)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    edits = Edits(comment)
    place(lines, parse(lines, _check_line_re(comment, prefixes)), blocks, edits)
    return edits.emit(lines)


def used_prefixes(text: str, prefixes: Iterable[str]) -> set[str]:
    """The prefixes that have at least one CHECK line (of any kind) in `text`."""
    check_re = _check_line_re(comment_marker(text), prefixes)
    return {m.group("prefix") for m in map(check_re.match, text.splitlines()) if m}
