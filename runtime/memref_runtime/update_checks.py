"""memref-update-checks: write a lit test's CHECK lines from what the test really prints.

The workflow of LLVM's `update_test_checks.py` and MLIR's `generate-test-checks.py` for this
suite: run the test's RUN lines as lit would (the suite's own `lit.cfg.py`, substitutions,
environment and internal shell), stop each pipeline before `FileCheck %s`, and turn what would
have reached FileCheck into CHECK lines:

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

Where the lines go: a section's existing CHECK lines are aligned with the new ones (as `diff`
does), so an unchanged line stays where it is, a changed line is rewritten in place and a new
line goes next to its neighbours; comments, code and hand-added CHECK-NOT/-SAME/-DAG/-COUNT
lines are left alone. A section with no CHECK lines yet goes right after its `run(<name>)`
call (or the `@run`-decorated function), else at the end of the file. With several RUN lines,
each section is checked under the first prefix of each RUN line that every RUN line using that
prefix agrees on (`--check-prefixes=COMMON,A` shares what is common), as update_test_checks.py
does. A file with a `UPDATE-CHECKS: hand-written: <reason>` comment is left alone.

    memref-update-checks lit_tests/my_case.py         # rewrite, then read `git diff`
    memref-update-checks --check lit_tests            # CI: exit 1 and a diff if out of date
    memref-update-checks -D mlir_python=torch_mlir lit_tests/i1_memref_bool.py

Exit status: 0 done (or up to date), 1 `--check` found a file to update, 2 an error.
Importing this module does not import MLIR: tests run in their own processes.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass, field

__all__ = ["UpdateError", "FileResult", "update_files", "check_pattern", "split_sections", "main"]

HAND_WRITTEN = re.compile(r"^[ \t]*(?:#|//|;)[ \t]*UPDATE-CHECKS:[ \t]*hand-written:(?P<reason>.*)$", re.M)

# The CHECK kinds this tool writes (and so rewrites); others (-NOT, -SAME, -DAG, -COUNT-n)
# are the author's and stay where they are.
GENERATED_KINDS = ("", "-LABEL", "-NEXT", "-EMPTY")
CHECK_KINDS = r"-LABEL|-NEXT|-EMPTY|-SAME|-NOT|-DAG|-COUNT-\d+"

TEST_LABEL = re.compile(r"^TEST: (?P<name>\S.*?)[ \t]*$")
LABEL_PATTERN = re.compile(r"^\s*TEST: (?P<name>\S.*?)(?:\{\{\$\}\})?\s*$")

# lit reads these anywhere in a file (a CHECK line is no exception), FileCheck its prefixes.
LIT_KEYWORDS = ("RUN", "XFAIL", "REQUIRES", "UNSUPPORTED", "ALLOW_RETRIES", "DEFINE", "REDEFINE",
                "UPDATE-CHECKS")

# FileCheck options that take their value as the next argument.
FILECHECK_VALUE_OPTIONS = {"check-prefix", "check-prefixes", "comment-prefixes", "implicit-check-not",
                           "input-file", "dump-input", "dump-input-context", "dump-input-filter"}

DEFAULT_PREFIX = "CHECK"
OUTPUT_TAIL_LINES = 30


class UpdateError(Exception):
    """A file this tool cannot update; the message says why and what to do."""


class Skipped(Exception):
    """A test lit would not run here (REQUIRES, UNSUPPORTED, XFAIL): left unchanged."""


@dataclass
class FileResult:
    """What happened to one file: `status` is one of STATUSES, `message` says more."""

    path: str
    status: str
    message: str = ""
    old_text: str = ""
    new_text: str = ""
    warnings: list[str] = field(default_factory=list)


STATUSES = ("unchanged", "updated", "out-of-date", "hand-written", "skipped", "error")


# ---------------------------------------------------------------------------
# Output -> CHECK patterns.
# ---------------------------------------------------------------------------


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
        roots = sorted({(r, "whole") for r in self.whole_paths if len(r) > 1}
                       | {(r, "root") for r in self.source_roots if len(r) > 1},
                       key=lambda item: -len(item[0]))
        parts = [rf"(?P<{kind}{i}>{re.escape(root.rstrip('/'))})(?P<rest{i}>(?:[/\\][^\s'\"`,;:()\[\]{{}}<>]*)?)"
                 r"(?![^\s'\"`,;:()\[\]{}<>/\\])"
                 for i, (root, kind) in enumerate(roots)]
        parts.append(r"(?P<addr>(?:(?<=@ = )|(?<= at ))0x[0-9a-fA-F]+|0x[0-9a-fA-F]{9,})(?![0-9a-zA-Z_])")
        parts.append(r'(?<=", line )(?P<lineno>[0-9]+)(?=, in )')  # a Python traceback's line numbers
        return re.compile("|".join(parts))


def _masked_segments(line: str, masks_re: re.Pattern) -> list[tuple[bool, str]]:
    """`line` as (is_regex, text) segments, run-to-run values as regexes."""
    segments: list[tuple[bool, str]] = []
    end = 0
    for m in masks_re.finditer(line):
        segments.append((False, line[end:m.start()]))
        kind = next(k for k, v in m.groupdict().items() if v and not k.startswith("rest"))
        if kind == "lineno":
            segments.append((True, "[0-9]+"))
        elif kind == "addr":
            digits = m.group()[2:]
            segments += [(False, "0x"), (True, "[0-9a-f]+" if digits == digits.lower() else "[0-9a-fA-F]+")]
        elif kind.startswith("whole"):
            segments.append((True, ".*"))
        else:  # a source root: keep the path inside the tree
            segments += [(True, ".*"), (False, m.group("rest" + kind[len("root"):]))]
        end = m.end()
    segments.append((False, line[end:]))
    return [s for s in segments if s[1]]


def _protect_directives(segments, prefixes) -> list[tuple[bool, str]]:
    """Splits `RUN:`, `CHECK-NEXT:` and the like so that neither lit nor FileCheck sees them."""
    names = "|".join(re.escape(n) for n in sorted(set(LIT_KEYWORDS) | set(prefixes), key=len, reverse=True))
    directive = re.compile(rf"(?<![A-Za-z0-9_-])(?:{names})(?:{CHECK_KINDS})?(?:\{{LITERAL\}})?(?=:)|(?<![A-Za-z0-9_])END(?=\.)")
    out: list[tuple[bool, str]] = []
    for is_regex, text in segments:
        if is_regex:
            out.append((True, text))
            continue
        end = 0
        for m in directive.finditer(text):
            out += [(False, text[end:m.end()]), (True, ":" if text[m.end()] == ":" else "[.]")]
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


def check_pattern(line: str, masks_re: re.Pattern | None = None, prefixes=(DEFAULT_PREFIX,),
                  anchor: bool = True) -> tuple[bool, str]:
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


def section_checks(section: Section, prefix: str, masks_re: re.Pattern, prefixes) -> list[CheckLine]:
    """The CHECK lines of one section under `prefix`."""
    checks = []
    if section.name is not None:
        # Not anchored like other lines ending in a digit: a label is `TEST: <name>`, as written.
        checks.append(CheckLine(prefix, "-LABEL", *check_pattern("TEST: " + section.name, masks_re, prefixes,
                                                                  anchor=False)))
    for line in section.lines:
        if not line:
            checks.append(CheckLine(prefix, "-EMPTY", False, ""))
        else:
            checks.append(CheckLine(prefix, "-NEXT" if checks else "", *check_pattern(line, masks_re, prefixes)))
    return checks


# ---------------------------------------------------------------------------
# lit: the suite, the RUN lines, running them.
# ---------------------------------------------------------------------------


@dataclass
class CheckRun:
    """A RUN line that pipes into `FileCheck <this file>`: the command before it, its prefixes."""

    line: int
    command: object  # lit.ShCommands.Pipeline without the FileCheck
    text: str
    prefixes: list[str]


def make_lit_config(params: dict[str, str]):
    """A LitConfig as `lit -D ...` makes one (only the arguments this lit version knows)."""
    import inspect

    import lit.LitConfig

    wanted = dict(progname="memref-update-checks", path=[], quiet=False, diagnostic_level="warning",
                  useValgrind=False, valgrindLeakCheck=False, valgrindArgs=[], noExecute=False,
                  debug=False, isWindows=os.name == "nt", order="lexical", params=dict(params))
    accepted = inspect.signature(lit.LitConfig.LitConfig.__init__).parameters
    return lit.LitConfig.LitConfig(**{k: v for k, v in wanted.items() if k in accepted})


def discover(inputs: list[str], lit_config) -> list[tuple[str, object]]:
    """(path, lit Test or UpdateError) for each test file named by `inputs` (files or folders)."""
    import lit.discovery

    suites: dict = {}
    local_configs: dict = {}
    found = []
    for given in inputs:
        if not os.path.exists(given):
            found.append((given, UpdateError(f"no such file or folder: {given!r}")))
            continue
        errors = lit_config.numErrors
        try:
            _, tests = lit.discovery.getTests(os.path.abspath(given), lit_config, suites, local_configs)
            tests = list(tests)
        except SystemExit:
            tests = None
        if tests is None or lit_config.numErrors > errors:
            found.append((given, UpdateError("lit could not load the test suite (see lit's message above)")))
        elif not tests:
            found.append((given, UpdateError(
                "not a test of any lit suite: no lit.cfg.py above it, or the suite does not collect it")))
        elif os.path.isdir(given):
            found += sorted(((os.path.relpath(t.getSourcePath()), t) for t in tests), key=lambda pt: pt[0])
        else:
            found += [(given, t) for t in tests]
    return found


def _filecheck_prefixes(args: list[str], filecheck: list[str], source: str) -> list[str] | None:
    """The check prefixes if `args` run FileCheck on `source` (the test itself), else None."""
    names = {os.path.basename(filecheck[0]) if filecheck else "", "FileCheck", "filecheck", "FileCheck.exe"}
    if filecheck and args[:len(filecheck)] == filecheck:
        rest = args[len(filecheck):]
    elif args and os.path.basename(args[0]) in names:
        rest = args[1:]
    else:
        return None
    prefixes: list[str] = []
    check_file = None
    it = iter(rest)
    for arg in it:
        if not arg.startswith("-") or arg == "-":
            check_file = check_file or arg
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if not eq and name in FILECHECK_VALUE_OPTIONS:
            value = next(it, "")
        if name == "check-prefix":
            prefixes.append(value)
        elif name == "check-prefixes":
            prefixes += [p for p in value.split(",") if p]
        elif name == "input-file":
            raise UpdateError(f"FileCheck reads --input-file={value}, not the command's output: "
                              "this tool cannot update it")
    if check_file is None or os.path.realpath(check_file) != os.path.realpath(source):
        return None
    return prefixes or [DEFAULT_PREFIX]


def _reads_this_file(node, filecheck, source) -> bool:
    import lit.ShUtil as sh

    if isinstance(node, sh.Seq):
        return _reads_this_file(node.lhs, filecheck, source) or _reads_this_file(node.rhs, filecheck, source)
    return any(_filecheck_prefixes([str(a) for a in c.args], filecheck, source) for c in node.commands)


def _and_steps(node) -> list:
    """A RUN line's `a && b && c` as [a, b, c]."""
    import lit.ShUtil as sh

    if isinstance(node, sh.Seq) and node.op == "&&":
        return _and_steps(node.lhs) + _and_steps(node.rhs)
    return [node]


def script_steps(test, lit_config) -> list[tuple[int, str, object, list[str] | None]]:
    """The test's RUN lines after lit's substitutions, as (line, text, command, prefixes) steps:
    prefixes is None for a step that does not pipe into FileCheck of this file."""
    import lit.ShUtil as sh
    import lit.Test
    import lit.TestRunner as runner

    if test.config.unsupported:
        raise Skipped("the suite marks it unsupported")
    parsed = runner.parseIntegratedTestScript(test)
    if isinstance(parsed, lit.Test.Result):
        if parsed.code == lit.Test.UNSUPPORTED:
            raise Skipped(parsed.output)
        raise UpdateError(f"lit cannot run it: {parsed.output}")
    if test.isExpectedToFail():
        raise Skipped("it is expected to fail (XFAIL)")
    for directive in parsed:
        if "%if" in getattr(directive, "command", ""):
            raise UpdateError(
                f"RUN line {directive.start_line_number} uses %if: what it checks depends on the configuration "
                "and one run sees only one side; mark the file `UPDATE-CHECKS: hand-written: <reason>`")
    tmp_dir, tmp_base = runner.getTempPaths(test)
    substitutions = runner.getDefaultSubstitutions(test, tmp_dir, tmp_base)
    conditions = {feature: True for feature in test.config.available_features}
    limit = test.config.recursiveExpansionLimit
    script = runner.applySubstitutions(parsed, substitutions, conditions, recursion_limit=limit)
    filecheck = shlex.split(runner.applySubstitutions(["FileCheck"], substitutions, conditions, recursion_limit=limit)[0])
    source = test.getSourcePath()

    steps = []
    for ln in script:
        m = re.fullmatch(runner.kPdbgRegex, ln)
        where, command = (m.group(1), m.group(2)) if m else ("RUN", ln)
        number = re.search(r"line (\d+)", where)
        line = int(number.group(1)) if number else 0
        try:
            node = sh.ShParser(command.strip(), lit_config.isWindows, test.config.pipefail).parse()
        except Exception as e:  # lit's parser raises bare ValueErrors
            raise UpdateError(f"RUN line {line}: lit's shell cannot parse {command.strip()!r}: {e}")
        for step in _and_steps(node):
            prefixes = None
            if isinstance(step, sh.Pipeline):
                prefixes = _filecheck_prefixes([str(a) for a in step.commands[-1].args], filecheck, source)
            if prefixes is not None:
                if len(step.commands) == 1:
                    raise UpdateError(f"RUN line {line}: FileCheck reads no command's output")
                step = sh.Pipeline(step.commands[:-1], step.negate, step.pipe_err)
            elif _reads_this_file(step, filecheck, source):
                raise UpdateError(f"RUN line {line}: FileCheck of this file inside `;`, `||` or `&`, or not at "
                                  "the end of its pipeline: split the RUN line so that it ends in `| FileCheck %s`")
            steps.append((line, command.strip(), step, prefixes))
    if not any(prefixes is not None for *_, prefixes in steps):
        raise UpdateError("no RUN line pipes into `FileCheck %s`: nothing to generate")
    return steps


def execute(test, command) -> tuple[int, str, str]:
    """Runs `command` (a parsed lit shell command) as lit's internal shell runs a RUN line:
    the test's environment, its exec folder as cwd. Returns (exit status, stdout, stderr)."""
    import lit.TestRunner as runner

    tmp_dir, _ = runner.getTempPaths(test)
    os.makedirs(tmp_dir, exist_ok=True)
    shell_env = runner.ShellEnvironment(os.path.dirname(test.getExecPath()), test.config.environment)
    shell_env.env["LIT_CURRENT_TESTCASE"] = test.getFullName()
    results: list = []
    timeout = test.config.maxIndividualTestTime or 0
    status, timeout_info = runner.executeShCmd(command, shell_env, results, timeout=timeout)
    out = "".join(r.stdout for r in results)
    err = "".join(r.stderr for r in results) + (f"\n{timeout_info}" if timeout_info else "")
    return status, out, err


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()
    more = f"  ... {len(lines) - OUTPUT_TAIL_LINES} lines before ...\n" if len(lines) > OUTPUT_TAIL_LINES else ""
    return more + "\n".join("  | " + line for line in lines[-OUTPUT_TAIL_LINES:])


def run_checks(test, lit_config) -> list[tuple[CheckRun, str]]:
    """Runs the test's RUN lines in order; for each one that pipes into FileCheck of this file,
    (the run, what would have reached FileCheck)."""
    outputs: dict[str, str] = {}  # one run of a command that several RUN lines check
    runs = []
    for line, text, command, prefixes in script_steps(test, lit_config):
        key = repr(command)
        output = outputs.get(key) if prefixes is not None else None
        if output is None:
            status, out, err = execute(test, command)
            if status != 0:
                raise UpdateError(f"RUN line {line} failed (exit status {status}) before FileCheck:\n  $ {text}\n"
                                  + _tail(out + err))
            output = outputs[key] = out
        if prefixes is not None:
            runs.append((CheckRun(line, command, text, prefixes), output))
    return runs


# ---------------------------------------------------------------------------
# Sections -> CHECK blocks, prefix by prefix.
# ---------------------------------------------------------------------------


def _section_key(name, seen: dict) -> tuple:
    seen[name] = seen.get(name, -1) + 1
    return (name, seen[name])


def generate_blocks(runs: list[tuple[CheckRun, str]], masks_re, all_prefixes) -> dict[tuple, list[CheckLine]]:
    """{section key: CHECK lines}, in output order. Each run checks a section under the first of
    its prefixes that every run with that prefix prints the same way (update_test_checks' rule)."""
    per_run: list[dict[tuple, list[str]]] = []
    order: list[tuple] = []
    for _, output in runs:
        seen: dict = {}
        sections = {}
        for section in split_sections(output):
            key = _section_key(section.name, seen)
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
            usable = [p for p in run.prefixes
                      if all(sections.get(key) == other.get(key) for (r, _), other in zip(runs, per_run)
                             if p in r.prefixes)]
            if not usable:
                name = "the output before the first TEST: line" if key[0] is None else f"section TEST: {key[0]}"
                raise UpdateError(
                    f"RUN line {run.line} prints {name} differently from another RUN line with one of its "
                    f"prefixes ({', '.join(run.prefixes)}): give each RUN line a prefix of its own")
            if usable[0] not in [p for p, _ in chosen]:
                chosen.append((usable[0], sections[key]))
        blocks[key] = [c for prefix, lines in chosen
                       for c in section_checks(Section(key[0], lines), prefix, masks_re, all_prefixes)]
    return blocks


# ---------------------------------------------------------------------------
# The file: where the CHECK lines are, where new ones go.
# ---------------------------------------------------------------------------


def comment_marker(text: str) -> str:
    """The comment leader of a test's RUN lines (`#` in Python, `//` in MLIR)."""
    m = re.search(r"^[ \t]*(\S+?)[ \t]*RUN:", text, re.M)
    if not m:
        raise UpdateError("no `RUN:` line found")
    return m.group(1)


def _check_line_re(comment: str, prefixes) -> re.Pattern:
    names = "|".join(re.escape(p) for p in sorted(set(prefixes), key=len, reverse=True))
    return re.compile(rf"^(?P<indent>[ \t]*){re.escape(comment)}[ \t]*(?P<prefix>{names})(?P<kind>{CHECK_KINDS})?"
                      rf"(?P<literal>\{{LITERAL\}})?:(?P<pattern>.*?)\r?\n?$")


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


def rewrite(text: str, blocks: dict[tuple, list[CheckLine]], prefixes) -> str:
    """`text` with its generated CHECK lines replaced by `blocks`."""
    comment = comment_marker(text)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    check_re = _check_line_re(comment, prefixes)

    # The existing generated CHECK lines, by section.
    old: dict[tuple, list[tuple[int, str, CheckLine]]] = {}
    key, seen = (None, 0), {}
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
            _, occurrence = _section_key((check.prefix, label.group("name")), seen)
            key = (label.group("name"), occurrence)
        old.setdefault(key, []).append((i, m.group("indent"), check))

    replaced: dict[int, list[str]] = {}
    inserted: dict[float, list[str]] = {}

    def insert(position: float, checks: list[CheckLine], indent: str, first: bool = False):
        rendered = [c.render(indent, comment) + "\n" for c in checks]
        inserted[position] = rendered + inserted.get(position, []) if first else inserted.get(position, []) + rendered

    keys = list(blocks)
    placed: dict[tuple, tuple[float, str]] = {}  # where each section's first line went, its indent
    last = -1.0  # position of the last line placed so far
    for n, key in enumerate(keys):
        new = blocks[key]
        if key in old:
            before = old[key]
            matcher = difflib.SequenceMatcher(None, [c.key() for *_, c in before], [c.key() for c in new],
                                              autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                if tag == "equal":
                    for (i, indent, _), check in zip(before[i1:i2], new[j1:j2]):
                        replaced[i] = [check.render(indent, comment) + "\n"]
                elif tag in ("replace", "delete"):
                    # Line k of the old run becomes line k of the new one, in its place; extra new
                    # lines follow the last of those, extra old lines go.
                    pairs = max(1, min(i2 - i1, j2 - j1))
                    for k, (i, indent, _) in enumerate(before[i1:i2]):
                        chunk = new[j1 + k:j1 + k + 1] if k < pairs - 1 else new[j1 + k:j2] if k == pairs - 1 else []
                        replaced[i] = [c.render(indent, comment) + "\n" for c in chunk]
                elif i1 < len(before):
                    insert(before[i1][0] - 0.5, new[j1:j2], before[i1][1])
                else:
                    insert(before[-1][0] + 0.5, new[j1:j2], before[-1][1])
            placed[key] = (before[0][0] - 0.5, before[0][1])
            last = max(last, before[-1][0] + 0.5)
            continue
        if key[0] is None:
            continue  # the preamble goes before the first section, once that is placed
        # A new section: after its run(name) call if that keeps the file in output order, else
        # before the next section that has lines, else at the end.
        following = [old[k][0][0] - 0.5 for k in keys[n + 1:] if k in old]
        limit = following[0] if following else float("inf")
        anchor, anchor_indent = _run_call_anchor(lines, key[0]) or (None, "")
        if anchor is not None and last <= anchor + 0.5 <= limit:
            position, indent = anchor + 0.5, anchor_indent
        elif following:
            position, indent = limit, re.match(r"[ \t]*", lines[int(limit + 0.5)]).group()
        else:
            position, indent = len(lines) - 0.5, ""
        insert(position, new, indent)
        placed[key] = (position, indent)
        last = position

    preamble = next((k for k in keys if k[0] is None), None)
    if preamble is not None and preamble not in old:
        position, indent = next((placed[k] for k in keys if k in placed), (len(lines) - 0.5, ""))
        insert(position, blocks[preamble], indent, first=True)

    # Sections that are no longer printed lose their generated lines.
    for key, before in old.items():
        if key not in blocks:
            for i, *_ in before:
                replaced[i] = []

    out = []
    for i, line in enumerate(lines):
        out += inserted.get(i - 0.5, [])
        out += replaced.get(i, [line])
    out += inserted.get(len(lines) - 0.5, [])
    return "".join(out)


def _used_prefixes(text: str, prefixes) -> set[str]:
    check_re = _check_line_re(comment_marker(text), prefixes)
    return {m.group("prefix") for m in map(check_re.match, text.splitlines()) if m}


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------


def run_to_run_masks(test) -> Masks:
    """The run-to-run paths of `test`: its Output folder, the suite's exec root, the temp dir,
    and the suite's source root."""
    import lit.TestRunner as runner

    tmp_dir, _ = runner.getTempPaths(test)
    return Masks(whole_paths=(tmp_dir, test.suite.exec_root, tempfile.gettempdir()),
                 source_roots=(test.suite.source_root,))


def update_file(path: str, test, lit_config) -> FileResult:
    """The new text of test file `path` (a FileResult with old_text and new_text set)."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    result = FileResult(path, "unchanged", old_text=text, new_text=text)
    hand = HAND_WRITTEN.search(text)
    if hand:
        reason = hand.group("reason").strip()
        if not reason:
            raise UpdateError("`UPDATE-CHECKS: hand-written:` needs a reason after the colon")
        result.status, result.message = "hand-written", reason
        return result
    comment_marker(text)
    runs = run_checks(test, lit_config)
    prefixes = [p for run, _ in runs for p in run.prefixes]
    blocks = generate_blocks(runs, run_to_run_masks(test).pattern(), prefixes)
    result.new_text = rewrite(text, blocks, prefixes)
    used = _used_prefixes(result.new_text, prefixes)
    for run, _ in runs:
        unused = [p for p in run.prefixes if p not in used]
        if len(unused) == len(run.prefixes):
            raise UpdateError(f"RUN line {run.line}: the command prints nothing to check")
        if unused:
            result.warnings.append(
                f"RUN line {run.line}: prefix {', '.join(unused)} has no CHECK lines (every section is the same "
                f"under another prefix); LLVM's FileCheck rejects an unused prefix: drop it from the RUN line")
    return result


def update_files(inputs: list[str], params: dict[str, str] | None = None, check: bool = False) -> list[FileResult]:
    """Updates (or with `check`, only compares) the CHECK lines of the tests named by `inputs`."""
    lit_config = make_lit_config(params or {})
    results = []
    for path, test in discover(inputs, lit_config):
        if isinstance(test, UpdateError):
            results.append(FileResult(path, "error", str(test)))
            continue
        try:
            result = update_file(test.getSourcePath(), test, lit_config)
            result.path = path
        except Skipped as e:
            results.append(FileResult(path, "skipped", str(e)))
            continue
        except UpdateError as e:
            results.append(FileResult(path, "error", str(e)))
            continue
        if result.status == "unchanged" and result.new_text != result.old_text:
            result.status = "out-of-date" if check else "updated"
            if not check:
                with open(test.getSourcePath(), "w", encoding="utf-8", newline="") as f:
                    f.write(result.new_text)
        results.append(result)
    return results


def _parse_param(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="memref-update-checks",
        description="Generate or refresh the CHECK lines of lit tests from what they print.")
    parser.add_argument("paths", nargs="+", metavar="FILE", help="lit test files, or folders of them")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; print a diff and exit 1 if a file's CHECK lines are out of date")
    parser.add_argument("-D", "--param", action="append", type=_parse_param, default=[], metavar="NAME=VALUE",
                        help="a lit parameter, as `lit -D` takes it (e.g. mlir_python=torch_mlir)")
    args = parser.parse_args(argv)

    results = update_files(args.paths, dict(args.param), check=args.check)
    for r in results:
        for warning in r.warnings:
            print(f"warning: {r.path}: {warning}", file=sys.stderr)
        if r.status == "out-of-date":
            sys.stdout.writelines(difflib.unified_diff(
                r.old_text.splitlines(keepends=True), r.new_text.splitlines(keepends=True),
                fromfile=f"a/{r.path}", tofile=f"b/{r.path}"))
            print(f"out of date: {r.path} (run memref-update-checks {r.path})")
        elif r.status == "error":
            print(f"error: {r.path}: {r.message}", file=sys.stderr)
        elif r.status in ("hand-written", "skipped"):
            print(f"{r.status}: {r.path}: {r.message}")
        elif r.status == "updated" or not args.check:
            print(f"{r.status}: {r.path}")
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    print("memref-update-checks: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    if counts["error"]:
        return 2
    return 1 if counts["out-of-date"] else 0


if __name__ == "__main__":
    sys.exit(main())
