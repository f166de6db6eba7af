"""Generating the checks: a test's output -> sections -> CHECK lines, with run-to-run values masked.

- a `TEST: <name>` line (printed by `memref_runtime.testing.run`) becomes
  `CHECK-LABEL: TEST: <name>`, each line after it `CHECK-NEXT:`, a blank line `CHECK-EMPTY:`;
  output before the first label (or of a test without `run`) starts with a plain `CHECK:`;
- addresses (a hex number after `@ = ` or ` at `, or of 9 or more digits) become
  `0x{{[0-9a-f]+}}`; paths under the temp dir or the suite's exec root become `{{.*}}`, the
  part of a path up to the suite's source root `{{.*}}`, a traceback's line numbers `{{[0-9]+}}`;
- a line with `[[` or `{{` is a `CHECK{LITERAL}:` line, or, where it needs a regex anyway, has
  them escaped as `{{\\[\\[}}` / `{{\\{\\{}}`; a line that ends in a digit ends in `{{$}}`
  (`sum 19.0` must not match `sum 19.0625`); text that lit or FileCheck would read as a
  directive (`RUN:`, `CHECK:`) gets its colon as `{{:}}`.

With several RUN lines, each section is checked under the first prefix of each RUN line that
every RUN line using that prefix agrees on (`--check-prefixes=COMMON,A` shares what is common),
as update_test_checks.py does.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from .errors import UpdateError

# The CHECK kinds this tool writes (and so rewrites); others (-NOT, -SAME, -DAG, -COUNT-n)
# are the author's and stay where they are.
GENERATED_KINDS = ("", "-LABEL", "-NEXT", "-EMPTY")
CHECK_KINDS = r"-LABEL|-NEXT|-EMPTY|-SAME|-NOT|-DAG|-COUNT-\d+"

TEST_LABEL = re.compile(r"^TEST: (?P<name>\S.*?)[ \t]*$")
LABEL_PATTERN = re.compile(r"^\s*TEST: (?P<name>\S.*?)(?:\{\{\$\}\})?\s*$")

# lit reads these anywhere in a file (a CHECK line is no exception), FileCheck its prefixes.
LIT_KEYWORDS = ("RUN", "XFAIL", "REQUIRES", "UNSUPPORTED", "ALLOW_RETRIES", "DEFINE", "REDEFINE", "UPDATE-CHECKS")

DEFAULT_PREFIX = "CHECK"


@dataclass(frozen=True)
class CheckLine:
    """One CHECK directive: `<prefix><kind>[{LITERAL}]: <pattern>`."""

    prefix: str
    kind: str
    literal: bool
    pattern: str

    def key(self) -> tuple:
        """What makes two directives the same check (NEXT and plain CHECK are one class)."""
        return (self.prefix, self.kind == "-LABEL", self.kind == "-EMPTY", self.literal, self.pattern.strip())

    def render(self, indent: str, comment: str) -> str:
        head = f"{indent}{comment} {self.prefix}{self.kind}{'{LITERAL}' if self.literal else ''}:"
        return f"{head} {self.pattern}" if self.pattern else head


@dataclass(frozen=True)
class Masks:
    """Run-to-run values of one test: paths under these roots (and addresses)."""

    whole_paths: tuple[str, ...] = ()  # a path under one of these becomes {{.*}}
    source_roots: tuple[str, ...] = ()  # the root part becomes {{.*}}, the rest stays

    def pattern(self) -> re.Pattern:
        # Longest root first, so the source root under /tmp is not taken for a temp path.
        roots = sorted(
            {(r, "whole") for r in self.whole_paths if len(r) > 1}
            | {(r, "root") for r in self.source_roots if len(r) > 1},
            key=lambda item: -len(item[0]),
        )
        parts = [
            rf"(?P<{kind}{i}>{re.escape(root.rstrip('/'))})(?P<rest{i}>(?:[/\\][^\s'\"`,;:()\[\]{{}}<>]*)?)"
            r"(?![^\s'\"`,;:()\[\]{}<>/\\])"
            for i, (root, kind) in enumerate(roots)
        ]
        parts.append(r"(?P<addr>(?:(?<=@ = )|(?<= at ))0x[0-9a-fA-F]+|0x[0-9a-fA-F]{9,})(?![0-9a-zA-Z_])")
        parts.append(r'(?<=", line )(?P<lineno>[0-9]+)(?=, in )')  # a Python traceback's line numbers
        return re.compile("|".join(parts))


def _masked_segments(line: str, masks_re: re.Pattern) -> list[tuple[bool, str]]:
    """`line` as (is_regex, text) segments, run-to-run values as regexes."""
    segments: list[tuple[bool, str]] = []
    end = 0
    for m in masks_re.finditer(line):
        segments.append((False, line[end : m.start()]))
        kind = next(k for k, v in m.groupdict().items() if v and not k.startswith("rest"))
        if kind == "lineno":
            segments.append((True, "[0-9]+"))
        elif kind == "addr":
            digits = m.group()[2:]
            segments += [(False, "0x"), (True, "[0-9a-f]+" if digits == digits.lower() else "[0-9a-fA-F]+")]
        elif kind.startswith("whole"):
            segments.append((True, ".*"))
        else:  # a source root: keep the path inside the tree
            segments += [(True, ".*"), (False, m.group("rest" + kind[len("root") :]))]
        end = m.end()
    segments.append((False, line[end:]))
    return [s for s in segments if s[1]]


def _protect_directives(segments, prefixes) -> list[tuple[bool, str]]:
    """Splits `RUN:`, `CHECK-NEXT:` and the like so that neither lit nor FileCheck sees them."""
    names = "|".join(re.escape(n) for n in sorted(set(LIT_KEYWORDS) | set(prefixes), key=len, reverse=True))
    directive = re.compile(
        rf"(?<![A-Za-z0-9_-])(?:{names})(?:{CHECK_KINDS})?(?:\{{LITERAL\}})?(?=:)"
        r"|(?<![A-Za-z0-9_])END(?=\.)"
    )
    out: list[tuple[bool, str]] = []
    for is_regex, text in segments:
        if is_regex:
            out.append((True, text))
            continue
        end = 0
        for m in directive.finditer(text):
            out += [(False, text[end : m.end()]), (True, ":" if text[m.end()] == ":" else "[.]")]
            end = m.end() + 1
        out.append((False, text[end:]))
    return [s for s in out if s[1]]


def _escape_literal(text: str, after_regex: bool, before_regex: bool) -> str:
    """`text` with `[[` and `{{` escaped for FileCheck's pattern syntax."""
    text = re.sub(r"\[\[|\{\{", lambda m: r"{{\[\[}}" if m.group() == "[[" else r"{{\{\{}}", text)
    if after_regex and text.startswith("}"):  # `{{re}}` + `}` would close at the wrong `}}`
        text = "{{[}]}}" + text[1:]
    if before_regex and text.endswith("{"):  # `{` + `{{re}}` would read as `{{` + `{re}}`
        text = text[:-1] + r"{{\{}}"
    return text


def check_pattern(
    line: str, masks_re: re.Pattern | None = None, prefixes: Iterable[str] = (DEFAULT_PREFIX,), anchor: bool = True
) -> tuple[bool, str]:
    """(literal, pattern): the CHECK pattern that matches output line `line` (not empty);
    with `anchor`, a line that ends in a digit ends in `{{$}}`."""
    if not line.strip():
        return False, "{{^[[:blank:]]+$}}"
    body = line.rstrip()
    segments = _masked_segments(body, masks_re or Masks().pattern())
    segments = _protect_directives(segments, prefixes)
    anchored = anchor and body == line and not segments[-1][0] and body[-1].isdigit()
    if not anchored and not any(is_regex for is_regex, _ in segments):
        return ("[[" in body or "{{" in body), body
    if anchored:
        segments.append((True, "$"))
    merged: list[tuple[bool, str]] = []  # adjacent literal text escaped as one (`[` + `[`)
    for is_regex, part in segments:
        if merged and not is_regex and not merged[-1][0]:
            merged[-1] = (False, merged[-1][1] + part)
        else:
            merged.append((is_regex, part))
    text = ""
    for i, (is_regex, part) in enumerate(merged):
        if is_regex:
            text += "{{" + part + "}}"
        else:
            text += _escape_literal(part, after_regex=i > 0, before_regex=i + 1 < len(merged))
    return False, text


@dataclass
class Section:
    """The output of one `run(f)`: `name` None for what comes before the first `TEST:` line."""

    name: str | None
    lines: list[str]


def split_sections(output: str) -> list[Section]:
    """Splits a test's output at its `TEST: <name>` lines; trailing blank lines are dropped."""
    sections = [Section(None, [])]
    for line in output.replace("\r\n", "\n").split("\n"):
        m = TEST_LABEL.match(line)
        if m:
            sections.append(Section(m.group("name"), []))
        else:
            sections[-1].lines.append(line)
    for section in sections:
        while section.lines and not section.lines[-1].strip():
            section.lines.pop()
    preamble = sections[0].lines
    while preamble and not preamble[0].strip():
        preamble.pop(0)
    return sections if preamble else sections[1:]


def section_checks(section: Section, prefix: str, masks_re: re.Pattern, prefixes: Iterable[str]) -> list[CheckLine]:
    """The CHECK lines of one section under `prefix`."""
    checks = []
    if section.name is not None:
        # Not anchored like other lines ending in a digit: a label is `TEST: <name>`, as written.
        checks.append(
            CheckLine(prefix, "-LABEL", *check_pattern("TEST: " + section.name, masks_re, prefixes, anchor=False))
        )
    for line in section.lines:
        if not line:
            checks.append(CheckLine(prefix, "-EMPTY", False, ""))
        else:
            checks.append(CheckLine(prefix, "-NEXT" if checks else "", *check_pattern(line, masks_re, prefixes)))
    return checks


def section_key(name: Hashable, seen: dict) -> tuple:
    """(name, how many sections of that name came before): a case run twice is two sections."""
    seen[name] = seen.get(name, -1) + 1
    return (name, seen[name])


def generate_blocks(
    runs: list[tuple], masks_re: re.Pattern, all_prefixes: Iterable[str]
) -> dict[tuple, list[CheckLine]]:
    """{section key: CHECK lines}, in output order, from (CheckRun, output) pairs. Each run checks
    a section under the first of its prefixes that every run with that prefix prints the same way
    (update_test_checks' rule)."""
    per_run: list[dict[tuple, list[str]]] = []
    order: list[tuple] = []
    for _, output in runs:
        seen: dict = {}
        sections = {}
        for section in split_sections(output):
            key = section_key(section.name, seen)
            sections[key] = section.lines
            if key not in order:
                order.append(key)
        per_run.append(sections)

    blocks: dict[tuple, list[CheckLine]] = {}
    for key in order:
        chosen: list[tuple[str, list[str]]] = []
        for (run, _), sections in zip(runs, per_run):
            if key not in sections:
                continue
            usable = [
                p
                for p in run.prefixes
                if all(sections.get(key) == other.get(key) for (r, _), other in zip(runs, per_run) if p in r.prefixes)
            ]
            if not usable:
                name = "the output before the first TEST: line" if key[0] is None else f"section TEST: {key[0]}"
                raise UpdateError(
                    f"RUN line {run.line} prints {name} differently from another RUN line with one of its "
                    f"prefixes ({', '.join(run.prefixes)}): give each RUN line a prefix of its own"
                )
            if usable[0] not in [p for p, _ in chosen]:
                chosen.append((usable[0], sections[key]))
        blocks[key] = [
            c
            for prefix, lines in chosen
            for c in section_checks(Section(key[0], lines), prefix, masks_re, all_prefixes)
        ]
    return blocks
