"""Textual pass pipelines, `builtin.module(a, b{x=1 y="2"}, func.func(c))`: read into passes with their
nesting, cut, and written back; pass options (`x=1 y="2"`) read as mlir-opt's option parser does."""

from __future__ import annotations

from dataclasses import dataclass


class PipelineError(ValueError):
    """A pipeline or an option string that mlir-opt would refuse; the message says where."""


@dataclass(frozen=True)
class PassStep:
    """One pass as written (`name` and the text between its braces), under `nesting`: the op
    names of the pass managers it is in, outermost first, each with the index of its group."""

    nesting: tuple
    name: str
    options: str | None = None

    @property
    def text(self) -> str:
        return self.name if self.options is None else f"{self.name}{{{self.options}}}"

    @property
    def anchors(self) -> tuple:
        """The op names of the nesting, outermost first."""
        return tuple(op for op, _ in self.nesting)


def _closing(text: str, start: int) -> int:
    """The index just past the bracket that closes text[start] (`{` or `(`), quotes respected."""
    depth, i, quote = 0, start, None
    while i < len(text):
        ch = text[i]
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise PipelineError(f"unbalanced {text[start]!r} in pass pipeline {text!r}")


def parse(text: str) -> list[PassStep]:
    """The passes of a pipeline, in order, each with its nesting (groups are numbered)."""
    steps: list[PassStep] = []
    counter = iter(range(1 << 30))

    def elements(body: str, nesting: tuple) -> None:
        i = 0
        while i < len(body):
            while i < len(body) and body[i] in " \t\n,":
                i += 1
            if i == len(body):
                break
            j = i
            while j < len(body) and body[j] not in "({,)} \t\n":
                j += 1
            name = body[i:j]
            if not name:
                raise PipelineError(f"expected a pass or op name at {body[i:]!r} in pass pipeline {text!r}")
            while j < len(body) and body[j] in " \t\n":
                j += 1
            if j < len(body) and body[j] == "(":
                end = _closing(body, j)
                elements(body[j + 1 : end - 1], nesting + ((name, next(counter)),))
            elif j < len(body) and body[j] == "{":
                end = _closing(body, j)
                steps.append(PassStep(nesting, name, body[j + 1 : end - 1]))
            else:
                end = j
                steps.append(PassStep(nesting, name))
            i = end
            while i < len(body) and body[i] in " \t\n":
                i += 1
            if i < len(body) and body[i] != ",":
                raise PipelineError(f"expected ',' after {name!r} in pass pipeline {text!r}")

    elements(text, ())
    return steps


def write(steps: list[PassStep]) -> str:
    """The pipeline text of `steps`: consecutive steps in the same group share its brackets."""
    out: list[str] = []
    open_groups: list = []
    for step in steps:
        common = 0
        while common < len(open_groups) and common < len(step.nesting) and open_groups[common] == step.nesting[common]:
            common += 1
        while len(open_groups) > common:
            out.append(")")
            open_groups.pop()
        if out and out[-1] != "(":
            out.append(",")
        for group in step.nesting[common:]:
            out.append(f"{group[0]}(")
            open_groups.append(group)
        out.append(step.text)
    out.extend(")" * len(open_groups))
    return "".join(out)


def split_options(text: str) -> list[tuple[str, str | None]]:
    """`a=1 b="x y" c={d=2} e` as [(a, 1), (b, x y), (c, {d=2}), (e, None)] (outer quotes dropped)."""
    pairs: list[tuple[str, str | None]] = []
    i = 0
    while i < len(text):
        while i < len(text) and text[i] in " \t\n":
            i += 1
        if i == len(text):
            break
        j = i
        while j < len(text) and text[j] not in "= \t\n":
            j += 1
        key = text[i:j]
        if j < len(text) and text[j] == "=":
            j += 1
            value_start = j
            while j < len(text) and text[j] not in " \t\n":
                if text[j] in "\"'{":
                    j = _closing(text, j) if text[j] == "{" else text.index(text[j], j + 1) + 1
                else:
                    j += 1
            value = text[value_start:j]
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            pairs.append((key, value))
        else:
            pairs.append((key, None))
        i = j
    return pairs


_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def option_value(pass_name: str, option, value: str | None) -> bool | int | str:
    """`value` as the option's kind (bool, unsigned int, str), or PipelineError as mlir-opt words it."""
    if option.kind is bool:
        if value is None or value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        kind = "boolean"
    elif option.kind is int:
        try:
            number = int(value, 0) if value is not None else None
        except ValueError:
            number = None
        if number is not None and number >= 0:
            return number
        kind = "uint"
    else:
        return value or ""
    raise PipelineError(
        f"for the --{option.name} option: '{value}' value invalid for {kind} argument! (pass {pass_name})"
    )


def read_options(test_pass, text: str | None) -> dict:
    """The options of `test_pass` (a catalog.ProvidedPass) from its option text, defaults filled in."""
    values = {o.name: o.default for o in test_pass.options}
    for key, value in split_options(text or ""):
        option = test_pass.option(key)
        if option is None:
            raise PipelineError(f"<Pass-Options-Parser>: no such option {key}")
        values[key] = option_value(test_pass.name, option, value)
    return values
