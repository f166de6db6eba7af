"""A pass pipeline as the steps a bisection cuts: each pass as spelled, a nested op pipeline
opened into its passes, Python passes by name; and a module run through the first steps, then
finished by the default lowering.

`builtin.module(canonicalize,func.func(cse,loop-invariant-code-motion))` is the steps
`canonicalize`, `func.func(cse)`, `func.func(loop-invariant-code-motion)`. Running a nested
pipeline one pass at a time gives what running it whole gives: the passes of an op pipeline
each work on one op (a function) at a time, so their order per op is all that matters.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ..bindings import bindings
from ..jit.lowering import default_pipeline, lower_printed
from ..jit.mlir_source import parse_module
from ..jit.module import prepare_module
from ..jit.pipeline_text import module_pipeline, pass_name, top_level_passes
from .reading import parent_context


class Step(NamedTuple):
    """One pass of a pipeline: as spelled there, and the op pipelines it is nested in."""

    spelled: str  # "loop-invariant-code-motion", "convert-vector-to-llvm{reassociate-fp-reductions}"
    anchors: tuple = ()  # ("func.func",) for a pass inside func.func(...)
    python: Callable | None = None  # a Python pass: run(op, pass_) as PassManager.add takes it

    @property
    def runnable(self) -> str:
        """The step as a pipeline element: `func.func(cse)`."""
        text = self.spelled
        for anchor in reversed(self.anchors):
            text = f"{anchor}({text})"
        return text

    def __str__(self) -> str:
        return self.spelled


class PipelineError(ValueError):
    """A pipeline the bisection cannot take apart."""


def _nested(element: str) -> tuple[str, str] | None:
    """(op name, inner passes) of an op pipeline `func.func(a,b)`, None for a pass."""
    paren, brace = element.find("("), element.find("{")
    if paren < 0 or (0 <= brace < paren) or not element.endswith(")"):
        return None
    return element[:paren].strip(), element[paren + 1 : -1]


def _open(element: str, anchors: tuple, python_passes: dict) -> list[Step]:
    nested = _nested(element)
    if nested is None:
        python = python_passes.get(pass_name(element))
        if python is not None and anchors:
            raise PipelineError(
                f"Python pass {element!r} inside {'('.join(anchors)}(...): a Python pass "
                "runs on the whole module; put it at the top level of the pipeline"
            )
        return [Step(element, anchors, python)]
    anchor, inner = nested
    passes = top_level_passes(module_pipeline([inner])) if inner.strip() else []
    if passes is None:
        raise PipelineError(f"cannot read the nested pipeline {element!r}")
    return [step for p in passes for step in _open(p, anchors + (anchor,), python_passes)]


def split_pipeline(pipeline: str, python_passes: dict | None = None) -> list[Step]:
    """The steps of `builtin.module(...)`, in order; `python_passes` maps names used in it to
    Python passes (`run(op, pass_)`, as `PassManager.add` takes them)."""
    passes = top_level_passes(pipeline)
    if passes is None:
        raise PipelineError(f"--pass-pipeline: expected builtin.module(...) with balanced brackets, got {pipeline!r}")
    return [step for p in passes for step in _open(p, (), python_passes or {})]


def run_steps(module, steps: list[Step]) -> None:
    """Runs `steps` on `module` in place (MLIRError or ValueError when one fails)."""
    if not steps:
        return
    pm = bindings().passmanager.PassManager(context=module.context)
    for step in steps:
        if step.python is not None:
            pm.add(step.python, name=step.spelled, argument=step.spelled)
        else:
            pm.add(step.runnable)
    pm.run(module.operation)


def prepared(source: str) -> str:
    """`source` as JitModule lowers it: public functions with llvm.emit_c_interface."""
    with parent_context() as context:
        module = parse_module(bindings().ir, source, context)
        prepare_module(module)
        return str(module)


class Cut(NamedTuple):
    """The module after the first steps of a pipeline, and that finished by the default lowering."""

    before: str  # MLIR after the steps
    lowered: str  # `before` lowered to the LLVM dialect by the default pipeline
    completion: str  # the default pipeline that finished it


def cut(source: str, steps: list[Step]) -> Cut:
    """Runs `steps` on prepared `source`, then the default pipeline for what they left (a no-op
    where the steps lowered everything already); LoweringError when that cannot finish it."""
    ir = bindings().ir
    with ir.Context() as context:
        module = parse_module(ir, source, context)
        run_steps(module, steps)
        before = str(module)
        completion = default_pipeline(module)
        lowered = lower_printed(module, before, completion, runtime_verification=False)
        left = _not_lowered(lowered)
        if left:
            raise LeftOver(f"the default lowering leaves {', '.join(left)} (no pass of it lowers them)")
        return Cut(before, str(lowered), completion)


class LeftOver(RuntimeError):
    """The default lowering cannot finish a cut: ops outside the LLVM dialect remain."""


def _not_lowered(module) -> list[str]:
    """The names of the ops left outside the llvm and builtin dialects, once each."""
    found: dict[str, None] = {}

    def visit(op) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    name = inner.operation.name
                    if name.split(".", 1)[0] not in ("llvm", "builtin"):
                        found.setdefault(name)
                    visit(inner.operation)

    visit(module.operation)
    return list(found)
