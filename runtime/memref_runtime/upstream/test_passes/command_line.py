"""An mlir-opt command line, read the way mlir-opt reads it: the input, the passes in order (flags or
--pass-pipeline), the options every run needs, and the options that only shape the final output.

Which words are passes comes from the real mlir-opt's --help (its "Compiler passes to run"),
kept on disk while that mlir-opt is unchanged (MEMREF_RUNTIME_PROBE_CACHE=0 turns that off).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ... import probe_cache
from . import pipeline
from .catalog import PROVIDED, ProvidedPass

DEFAULT_SPLIT_MARKER = "// -----"
# Options that only decide how the final output is printed or where it goes; the runs before
# the last print in a form the next run reads back exactly (generic ops, every location).
PRINTING_OPTIONS = frozenset(
    {
        "mlir-print-debuginfo",
        "mlir-print-op-generic",
        "mlir-print-local-scope",
        "mlir-print-assume-verified",
        "mlir-print-skip-regions",
        "mlir-print-unique-ssa-ids",
        "mlir-print-value-users",
        "mlir-print-elementsattrs-with-hex-if-larger",
        "mlir-elide-elementsattrs-if-larger",
        "mlir-elide-resource-strings-if-larger",
        "mlir-pretty-debuginfo",
        "mlir-use-nameloc-as-prefix",
        "emit-bytecode",
        "emit-bytecode-version",
        "elide-resource-data-from-bytecode",
    }
)
HELP_PASS_SECTION = "Compiler passes to run"
_OPTION_LINE = re.compile(r"^( +)--?([\w-]+)(\[?=<[^>]*>\]?| <[^>]*>)?")


@dataclass(frozen=True)
class OptHelp:
    """What an mlir-opt's --help says: its passes (and pass pipelines), and which of its other
    options take a value that may be written as the next word (`-o FILE`)."""

    passes: frozenset
    valued: frozenset


def read_help(text: str) -> OptHelp:
    passes, valued, pass_indent = set(), set(), None
    for line in text.splitlines():
        if line.strip() == HELP_PASS_SECTION:
            pass_indent = -1
            continue
        match = _OPTION_LINE.match(line)
        if not match:
            continue
        indent, name, value = len(match.group(1)), match.group(2), match.group(3) or ""
        if pass_indent is not None and indent <= 2:
            pass_indent = None  # back to the general options
        if pass_indent is not None:
            pass_indent = indent if pass_indent == -1 else pass_indent
            if indent == pass_indent:
                passes.add(name)
        elif value and not value.startswith("["):
            valued.add(name)
    return OptHelp(frozenset(passes), frozenset(valued))


def opt_help(mlir_opt: str) -> OptHelp:
    """The --help of `mlir-opt`, read (probe_cache keeps it on disk while the executable is unchanged)."""
    return read_help(probe_cache.tool_output([mlir_opt, "--help"]))


@dataclass(frozen=True)
class ProvidedStep:
    """A provided test pass in the run: its catalog entry, its option text, where it is nested."""

    test_pass: ProvidedPass
    options: str | None
    nesting: tuple = ()


@dataclass
class Invocation:
    """One mlir-opt command line, sorted by what each word is for."""

    inputs: list = field(default_factory=list)  # the input file words ('-' is stdin)
    common: list = field(default_factory=list)  # options every run of mlir-opt gets
    printing: list = field(default_factory=list)  # options of the final print only
    output: str | None = None  # -o FILE
    split_marker: str | None = None  # -split-input-file[=MARKER]
    output_marker: str = DEFAULT_SPLIT_MARKER  # --output-split-marker=
    verify: str | None = None  # -verify-diagnostics[=LEVEL]
    allow_unregistered: bool = False
    pipeline_text: str | None = None  # --pass-pipeline=
    steps: list = field(default_factory=list)  # flags: the words; pipeline: PassStep/ProvidedStep

    @property
    def has_test_passes(self) -> bool:
        return any(isinstance(s, ProvidedStep) for s in self.steps)


def _name_and_value(word: str) -> tuple[str, str | None]:
    name, eq, value = word.lstrip("-").partition("=")
    return name, (value if eq else None)


def parse(argv: list, help_text: OptHelp | None = None, mlir_opt: str | None = None) -> Invocation:
    """Sorts mlir-opt's `argv` (without the program) into an Invocation. The real mlir-opt's
    --help is read only when a word might be a pass (`help_text` given, or read from `mlir_opt`)."""
    inv, words, i = Invocation(), list(argv), 0
    known = help_text

    def value_of(name: str, value: str | None) -> str:
        nonlocal i
        if value is not None:
            return value
        if i + 1 >= len(words):
            raise pipeline.PipelineError(f"mlir-opt: Not enough positional command line arguments specified! ({name})")
        i += 1
        return words[i]

    while i < len(words):
        word = words[i]
        if word == "-" or not word.startswith("-"):
            inv.inputs.append(word)
        else:
            name, value = _name_and_value(word)
            if name in PROVIDED:
                inv.steps.append(ProvidedStep(PROVIDED[name], value))
            elif name in ("pass-pipeline", "p"):
                inv.pipeline_text = value_of(name, value)
            elif name == "o":
                inv.output = value_of(name, value)
            elif name == "split-input-file":
                inv.split_marker = value if value else DEFAULT_SPLIT_MARKER
            elif name == "output-split-marker":
                inv.output_marker = value_of(name, value)
            elif name == "verify-diagnostics":
                inv.verify = value or "all"
            elif name in PRINTING_OPTIONS:
                inv.printing.append(word)
            else:
                if known is None:
                    known = opt_help(mlir_opt) if mlir_opt else OptHelp(frozenset(), frozenset())
                if name in known.passes:
                    inv.steps.append(word)
                else:
                    inv.allow_unregistered |= name == "allow-unregistered-dialect"
                    inv.common.append(word)
                    if value is None and name in known.valued and i + 1 < len(words):
                        i += 1
                        inv.common.append(words[i])
        i += 1
    if inv.pipeline_text is not None:
        steps = pipeline.parse(inv.pipeline_text)
        inv.steps = [ProvidedStep(PROVIDED[s.name], s.options, s.nesting) if s.name in PROVIDED else s for s in steps]
    return inv
