"""An mlir-opt run cut into runs: public passes for the real mlir-opt, provided test passes in Python.

The runs keep the order of the passes. Consecutive public passes share one run of the real
mlir-opt; a test pass that upstream defines as a pipeline of public passes joins them as that
pipeline. Pass flags stay flags (mlir-opt nests them implicitly); a pipeline-defined test pass
given as a flag runs as a textual pipeline of its own, with upstream's nesting.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from . import pipeline
from .catalog import FUNCTION, MODULE, ProvidedPass
from .command_line import Invocation, ProvidedStep


@dataclass
class RealRun:
    """Public passes, for one run of the real mlir-opt: pass flags as written, or pipeline steps."""

    flags: list = field(default_factory=list)
    steps: list = field(default_factory=list)

    def pass_arguments(self) -> list:
        return [f"--pass-pipeline={pipeline.write(self.steps)}"] if self.steps else list(self.flags)


@dataclass
class PythonRun:
    """One provided test pass, run in Python on the ops at `anchors` (op names from the top op
    down; None matches any op)."""

    test_pass: ProvidedPass
    options: dict
    anchors: tuple


def _anchors(step: ProvidedStep) -> tuple:
    if step.nesting:
        names = tuple(None if op == "any" else op for op, _ in step.nesting)
        last, wanted = names[-1], step.test_pass.anchor
        if wanted is not None and last != wanted:
            raise pipeline.PipelineError(
                f"Can't add pass '{step.test_pass.name}' restricted to '{wanted}' on a PassManager intended to"
                f" run on '{last or 'any'}', did you intend to nest?"
            )
        return names
    # A flag: mlir-opt nests a pass for func.func under the top-level module implicitly.
    return (None, FUNCTION) if step.test_pass.anchor == FUNCTION else (None,)


def _expansion(step: ProvidedStep, options: dict, groups) -> list:
    """The public pipeline of a pipeline-defined test pass, as pipeline steps under its nesting."""
    base = step.nesting or ((MODULE, next(groups)),)
    steps = []
    assert step.test_pass.pipeline is not None
    for relative, text in step.test_pass.pipeline(options):
        name, _, rest = text.partition("{")
        nesting = base + tuple((op, next(groups)) for op in relative)
        steps.append(pipeline.PassStep(nesting, name, rest[:-1] if rest else None))
    return steps


def plan(inv: Invocation) -> list:
    """The runs of `inv`, in order (PipelineError for a test pass's bad options or nesting)."""
    runs: list = []
    groups = itertools.count(1 << 20)  # group numbers the parsed pipeline does not use

    def real(flag_form: bool) -> RealRun:
        last = runs[-1] if runs else None
        if isinstance(last, RealRun) and (not last.steps if flag_form else not last.flags):
            return last
        runs.append(RealRun())
        return runs[-1]

    for step in inv.steps:
        if isinstance(step, ProvidedStep):
            options = pipeline.read_options(step.test_pass, step.options)
            if step.test_pass.pipeline is not None:
                real(False).steps.extend(_expansion(step, options, groups))
            else:
                runs.append(PythonRun(step.test_pass, options, _anchors(step)))
        elif isinstance(step, str):
            real(True).flags.append(step)
        else:
            real(False).steps.append(step)
    # The real mlir-opt reads the input and prints the output, as a single run would.
    if not runs or not isinstance(runs[0], RealRun):
        runs.insert(0, RealRun())
    if not isinstance(runs[-1], RealRun):
        runs.append(RealRun())
    return runs
