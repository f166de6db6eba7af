"""Diagnostics as mlir-opt prints them (`file:line:col: error: message`, the source line, a caret), and
-verify-diagnostics over the diagnostics of several runs (expected-error/warning/remark/note)."""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass

SEVERITIES = ("error", "warning", "remark", "note")
_FILE_LOCATION = re.compile(r'^loc\("((?:[^"\\]|\\.)*)":(\d+):(\d+)')
# A diagnostic line of mlir-opt's output.
_PRINTED = re.compile(r"^(.*?):(\d+)(?::(\d+))?: (error|warning|remark|note): (.*)$")
# expected-error@+1 {{text}}, expected-remark-re@below {{a {{[0-9]+}} b}}, expected-note@-2 ...
_UNPRODUCED = re.compile(r'^(.*?):(\d+):(\d+): error: expected (error|warning|remark|note) "(.*)" was not produced$')
CURRENT_OPERATION = "see current operation:"
_EXPECTED = re.compile(r"expected-(error|warning|remark|note)(-re)?(?:@([+-]?\d+|above|below|unknown))?\s*\{\{(.*)\}\}")


@dataclass
class Diagnostic:
    severity: str
    file: str | None
    line: int
    column: int
    message: str
    show_source: bool = True  # mlir-opt omits the source line of a note where its error is


@functools.lru_cache(maxsize=16)
def source_lines(path: str) -> list:
    try:
        with open(path, errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def file_location(location) -> tuple[str | None, int, int]:
    """(file, line, column) of an ir.Location that is (or starts with) a file location."""
    match = _FILE_LOCATION.match(str(location))
    if not match:
        return None, 0, 0
    return match.group(1).encode().decode("unicode_escape"), int(match.group(2)), int(match.group(3))


def render(diag: Diagnostic, message: str | None = None, underline: int = 1) -> str:
    """`diag` the way mlir-opt's source-manager handler prints it."""
    text = diag.message if message is None else message
    if diag.file is None:
        return f"<unknown>:0: {diag.severity}: {text}\n"
    head = f"{diag.file}:{diag.line}:{diag.column}: {diag.severity}: {text}\n"
    lines = source_lines(diag.file) if diag.show_source else []
    if 0 < diag.line <= len(lines):
        source = lines[diag.line - 1]
        head += f"{source}\n{' ' * (diag.column - 1)}^{'~' * (underline - 1)}\n"
    return head


def from_mlir(diagnostic, parent: Diagnostic | None = None) -> list[Diagnostic]:
    """An MLIR Python diagnostic (ir.DiagnosticInfo or ir.Diagnostic) and its notes."""
    severity = str(diagnostic.severity).rsplit(".", 1)[-1].lower()
    file, line, column = file_location(diagnostic.location)
    here = Diagnostic(
        severity,
        file,
        line,
        column,
        diagnostic.message,
        show_source=parent is None or (parent.file, parent.line, parent.column) != (file, line, column),
    )
    found = [here]
    for note in diagnostic.notes:
        found += from_mlir(note, here)
    return found


def report(diagnostic, collector) -> None:
    """An MLIR Python diagnostic (and its notes), to `collector` (a Collector)."""
    for diag in from_mlir(diagnostic):
        collector.add(diag)


@dataclass
class Expected:
    severity: str
    regex: bool
    file: str
    line: int  # the line the diagnostic is expected at (0: an unknown location)
    at: int  # the line of the directive itself
    column: int
    text: str
    seen: bool = False

    def matches(self, diag: Diagnostic) -> bool:
        if diag.severity != self.severity or (self.line and (diag.file != self.file or diag.line != self.line)):
            return False
        if self.line == 0 and diag.file is not None:
            return False
        if not self.regex:
            return self.text in diag.message
        parts = re.split(r"\{\{(.*?)\}\}", self.text)
        pattern = "".join(p if i % 2 else re.escape(p) for i, p in enumerate(parts))
        return re.search(pattern, diag.message) is not None


def expectations(path: str) -> list[Expected]:
    found, lines = [], source_lines(path)
    for number, line in enumerate(lines, 1):
        for match in _EXPECTED.finditer(line):
            severity, regex, where, text = match.groups()
            target = number
            if where == "above":
                target = number - 1
            elif where == "below":
                target = number + 1
            elif where == "unknown":
                target = 0
            elif where:
                target = number + int(where)
            found.append(Expected(severity, bool(regex), path, target, number, match.start() + 1, text))
    return found


class Collector:
    """The diagnostics of every run of one command, printed as they come (or kept, under
    -verify-diagnostics, to be verified together at the end)."""

    def __init__(self, verify: str | None = None):
        self.verify_level = verify
        self.found: list[Diagnostic] = []
        # What the run reading the input reported of the expected-* lines.
        self.unproduced: list = []

    def add(self, diag: Diagnostic) -> None:
        if self.verify_level and diag.severity == "note" and diag.message.startswith(CURRENT_OPERATION):
            return  # mlir-opt -verify-diagnostics does not print the op on a diagnostic
        self.found.append(diag)
        if not self.verify_level:
            sys.stderr.write(render(diag))
            sys.stderr.flush()

    def take(self, text: str, reads_input: bool) -> None:
        """The stderr of a run of the real mlir-opt: forwarded (but for the not-produced reports
        of the run that read the input), and its diagnostics recorded."""
        lines, kept, i = text.splitlines(keepends=True), [], 0
        while i < len(lines):
            missing = _UNPRODUCED.match(lines[i].rstrip("\n")) if reads_input else None
            block = [lines[i]]
            while i + len(block) < len(lines) and len(block) < 3 and not _PRINTED.match(lines[i + len(block)]):
                block.append(lines[i + len(block)])
            if missing:
                file, line, column, severity, text_ = missing.groups()
                self.unproduced.append((Expected(severity, False, file, 0, int(line), int(column), text_), block))
            else:
                match = _PRINTED.match(lines[i].rstrip("\n"))
                if match:
                    file, number, column, severity, message = match.groups()
                    self.found.append(
                        Diagnostic(
                            severity, None if file == "<unknown>" else file, int(number), int(column or 0), message
                        )
                    )
                kept += block
            i += len(block)
        if not self.verify_level:
            sys.stderr.write("".join(kept))
            sys.stderr.flush()

    def report_unproduced(self) -> None:
        """The not-produced reports of the run that read the input, after every run's diagnostics,
        where a single mlir-opt prints them (it reports each expected-* line so without
        -verify-diagnostics, produced or not)."""
        sys.stderr.write("".join(line for _, block in self.unproduced for line in block))
        sys.stderr.flush()

    def verify(self, inputs: list) -> bool:
        """Matches the diagnostics against the inputs' expected-* lines, printing what mlir-opt's
        verifier prints for each one unexpected or not produced; True when all agree."""
        expected = [e for path in inputs if path != "-" for e in expectations(path)]
        ok = True
        for diag in self.found:
            match = next((e for e in expected if not e.seen and e.matches(diag)), None)
            if match is None:
                match = next((e for e in expected if e.matches(diag)), None)
            if match is not None:
                match.seen = True
            elif self.verify_level != "only-expected" or diag.file is None:
                ok = False
                sys.stderr.write(
                    render(
                        Diagnostic("error", diag.file, diag.line, diag.column, ""),
                        f"unexpected {diag.severity}: {diag.message}",
                    )
                )
        for e in expected:
            if not e.seen:
                ok = False
                where = Diagnostic("error", e.file, e.at, e.column, "")
                sys.stderr.write(render(where, f'expected {e.severity} "{e.text}" was not produced', len(e.text)))
        sys.stderr.flush()
        return ok
