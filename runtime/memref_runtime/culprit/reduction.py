"""reduce: shrink a failing module while the check keeps failing the same way.

The steps, each kept only where the check still fails with the same key (checks.py):

1. for an Against check: its inputs shrunk (shrink.py), then only the outputs that were wrong
   are compared, on the failing inputs and two more probes of the same shapes;
2. whole ops erased, in halves, quarters... of each block (delta debugging), the module's
   functions first: an op that the failing path does not need goes, with what it alone used;
3. canonicalize and cse (mlir-reduce's opt-reduction-pass strategy, run here), which fold what
   the erasures left, a loop of one iteration included;
4. values replaced by constants (0, 1, and the sizes of the inputs), where every probe gives
   the same outputs with the constant (a loop bound that the shrunk inputs fixed, say);
Steps 2-4 repeat until a round changes nothing, or the time limit is reached. With
`mlir_reduce=True` the wheel's mlir-reduce runs first, its reduction-tree strategy with this
same check through a callback script (mlir_reduce.py). It is not the default: it erases op
ranges as step 2 does, but without looking at uses, so inside a function nearly every candidate
it makes is invalid; on tests/test_culprit_reduce.py's 60-op module it reaches 24 ops (the
unused functions gone) in 5 runs, and steps 2-4 then take 23 more, 30 in all and 8.2 s, where
steps 2-4 alone take 29 runs and 5.9 s to the same 9 ops.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..settings import resolve_opt_level
from . import edits
from .checks import DEFAULT_TIMEOUT, Checker
from .isolation import run_forked
from .outcome import Outcome
from .reading import read_module

CLEANUPS = ("builtin.module(canonicalize,cse)", "builtin.module(symbol-dce)")
DEFAULT_TIME_LIMIT = 300.0


@dataclass
class Reduction:
    """A reduced module, the failure it keeps, and how it was reduced."""

    module: str
    failure: str  # the kept failure, one line
    ops_before: int
    ops_after: int
    runs: int = 0  # check runs (candidates that did not verify cost none)
    seconds: float = 0.0
    stages: list[str] = field(default_factory=list)
    inputs: list | None = None  # Against: the failing inputs (shrunk)
    expected: dict | None = None  # Against: the reference's outputs on them, for the compared outputs
    test: str | None = None  # the regression test written, if any
    notes: list[str] = field(default_factory=list)
    failure_key: str = ""  # the kept failure as the check keys it ("the same way")

    def report(self) -> str:
        lines = [
            f"reduced: {self.ops_before} -> {self.ops_after} ops in {self.seconds:.1f} s, {self.runs} check runs",
            f"  still failing the same way: {self.failure}",
        ]
        lines += [f"  {s}" for s in self.stages] + [f"  {n}" for n in self.notes]
        if self.test:
            lines.append(f"  regression test: {self.test}")
        return "\n".join(lines)


class _Reducer:
    def __init__(self, text: str, checker: Checker, opt_level: int, key: str, deadline: float):
        self.text, self.checker, self.opt_level, self.key, self.deadline = text, checker, opt_level, key, deadline
        self.seen: dict[str, bool] = {}

    def late(self) -> bool:
        return time.monotonic() > self.deadline

    def fails_alike(self, candidate: str) -> bool:
        """Whether `candidate` fails as the input did (each text checked once)."""
        if candidate not in self.seen:
            self.seen[candidate] = self.checker.run(candidate, opt_level=self.opt_level).key == self.key
        return self.seen[candidate]

    def interesting(self, candidate: str | None) -> bool:
        """Whether `candidate` (None: not valid) fails as the input did; takes it if so."""
        if candidate is None or candidate == self.text or self.late() or not self.fails_alike(candidate):
            return False
        self.text = candidate
        return True

    def erase_in(self, path: edits.Path) -> None:
        """Delta debugging over the ops of one block: chunks of halving size."""
        units = edits.removable(self.text, path)
        chunk = max(1, len(units) // 2)
        while units and not self.late():
            i = 0
            while i < len(units):
                if self.interesting(edits.erase(self.text, path, units[i : i + chunk])):
                    units = edits.removable(self.text, path)
                else:
                    i += chunk
            if chunk == 1:
                break
            chunk = max(1, chunk // 2)

    def erase_round(self) -> None:
        self.erase_in(())  # functions and globals first
        for path in reversed(edits.block_paths(self.text)):  # innermost first: paths above stay valid
            if path and not self.late():
                self.erase_in(path)

    def cleanups(self) -> None:
        for pipeline in CLEANUPS:
            self.interesting(edits.run_passes(self.text, pipeline))

    def constants(self, literals: list[str]) -> None:
        done: set = set()
        while not self.late():
            values = [v for v in edits.scalar_values(self.text) if v not in done]
            if not values:
                return
            number, result, kind = values[0]
            done.add(values[0])
            options = literals if kind.startswith(("i", "index")) else ["0.0", "1.0"]
            for literal in options:
                if self.interesting(edits.replace_with_constant(self.text, number, result, literal)):
                    self.cleanups()
                    done.clear()
                    break


def _stage(name: str, before: int, text: str, runs_before: int, checker: Checker) -> str:
    return f"{name}: {before} -> {edits.count_ops(text)} ops, {checker.runs - runs_before} check runs"


def reduce(
    module,
    check,
    *,
    pipeline: str | None = None,
    opt_level: int | None = None,
    test_args=(),
    timeout: float = DEFAULT_TIMEOUT,
    time_limit: float = DEFAULT_TIME_LIMIT,
    mlir_reduce: bool = False,
    write_test: str | None = None,
) -> Reduction:
    """Shrinks `module` (MLIR text or a path) while `check` keeps failing the same way.

    `check`: a command (the candidate module file appended, a non-zero exit status meaning
    "still failing"; `test_args` go before it), a callable taking a JitModule of the candidate
    (lowered by `pipeline`, JIT-compiled at `opt_level`) that fails by raising, or
    Against(function, reference, inputs), whose inputs shrink too. `write_test`: a path for the
    regression test (`.py` in a lit suite: a lit test; `test_*.py`: a pytest function)."""
    start = time.perf_counter()
    text = read_module(module)
    level = resolve_opt_level(opt_level)
    checker = Checker(check, test_args=test_args, pipeline=pipeline, timeout=timeout)
    result = Reduction(text, "", edits.count_ops(text), 0)
    literals = ["0", "1"]
    if checker.typed_call is not None:
        literals += _set_up_typed_call(checker, text, pipeline, level, timeout, result)
    started = time.perf_counter()
    original = checker.run(text, opt_level=level)
    # A candidate may loop for ever (a bound replaced by a constant): it gets 20 times the
    # input's time, at least 5 s, at most `timeout`.
    if timeout:
        checker.timeout = min(timeout, max(5.0, 20 * (time.perf_counter() - started)))
    if not original.failing:
        raise ValueError(f"reduce: the check passes on the input module ({describe_check(checker)}): nothing to reduce")
    if checker.hints:  # it fails whatever the module: every candidate would "fail the same way"
        raise ValueError(f"reduce: the check fails before it reads the module ({original.summary}): {checker.hints[0]}")
    again = checker.run(text, opt_level=level)
    if again.key != original.key:
        raise ValueError(
            "reduce: the check is not deterministic: on the input module it failed with "
            f"{original.summary!r}, then {'passed' if not again.failing else repr(again.summary)}"
        )
    reducer = _Reducer(text, checker, level, original.key, time.monotonic() + time_limit)
    if mlir_reduce:
        _mlir_reduce_stage(reducer, result)
    _reduce_rounds(reducer, result, literals)
    result.module, result.failure, result.failure_key = reducer.text, original.summary, original.key
    result.ops_after = edits.count_ops(reducer.text)
    if checker.ended:
        result.notes.append("candidates whose check " + ", ".join(f"{how}: {n}" for how, n in checker.ended.items()))
    if reducer.late():
        result.notes.append(f"stopped at the time limit ({time_limit:g} s): the module may reduce further")
    if write_test:
        from .regression import CannotWrite, write_regression_test

        try:
            result.test = write_regression_test(
                write_test, result, check, pipeline=pipeline, opt_level=level, test_args=test_args
            )
        except CannotWrite as e:
            result.notes.append(f"no regression test written: {e}")
    result.runs, result.seconds = checker.runs, time.perf_counter() - start
    return result


def _reduce_rounds(reducer: _Reducer, result: Reduction, literals: list[str]) -> None:
    checker = reducer.checker
    for round_number in range(1, 6):
        text, before, runs = reducer.text, edits.count_ops(reducer.text), checker.runs
        reducer.erase_round()
        reducer.cleanups()
        reducer.constants(literals)
        result.stages.append(
            _stage(
                f"round {round_number} (erase ops, canonicalize/cse, constants)", before, reducer.text, runs, checker
            )
        )
        if reducer.text == text or reducer.late():
            return


def _mlir_reduce_stage(reducer: _Reducer, result: Reduction) -> None:
    """The wheel's mlir-reduce first: its reduction tree drops whole functions in a few runs (inside
    a function its erasures mostly leave uses without definitions, which cost no run here)."""
    from .mlir_reduce import run_mlir_reduce
    from .tools import ToolMissing

    before, runs = edits.count_ops(reducer.text), reducer.checker.runs
    try:
        reduced = run_mlir_reduce(reducer)
    except ToolMissing as e:
        result.notes.append(f"mlir-reduce skipped: {e}")
        return
    reducer.interesting(edits.verified(reduced) if reduced else None)
    result.stages.append(_stage("mlir-reduce --reduction-tree", before, reducer.text, runs, reducer.checker))


def describe_check(checker: Checker) -> str:
    from .checks import describe

    return describe(checker.command or checker.check)


def _set_up_typed_call(
    checker: Checker, text: str, pipeline, level: int, timeout: float, result: Reduction
) -> list[str]:
    """An Against check's inputs (given or drawn), shrunk; its probes; only its wrong outputs
    compared from now on. Returns the sizes of the inputs, as literals for constants."""
    from ..jit.module import JitModule
    from .reading import signature_of
    from .shrink import random_like, shrink_inputs
    from .typed_call import draw_failing_inputs

    runner = checker.typed_call
    assert runner is not None  # called for an Against check only
    runner.set_signature(signature_of(text, runner.against.function))
    inputs = runner.against.inputs
    if inputs is None:
        ended = run_forked(lambda: draw_failing_inputs(text, None, level, runner.against, pipeline), timeout)
        if ended.how != "ok" or isinstance(ended.value, Outcome):
            raise ValueError(
                f"reduce: Against({runner.against.function!r}) without inputs: check_against found no "
                "failing example (" + (ended.value.summary if ended.how == "ok" else ended.description) + ")"
            )
        inputs = ended.value
    jit = JitModule(text, pipeline=pipeline, opt_level=level)
    getattr(jit, runner.against.function).bind(*inputs)  # compiles here, once; the calls run in children
    ended = run_forked(lambda: runner.failing_labels(jit, inputs), timeout)
    if ended.how != "ok" or isinstance(ended.value, Outcome) or not ended.value:
        why = ended.description if ended.how != "ok" else getattr(ended.value, "summary", "no output differs")
        raise ValueError(f"reduce: @{runner.against.function} does not fail on the inputs given: {why}")
    labels = ended.value
    shrunk, tries = shrink_inputs(runner, jit, list(inputs), labels, timeout)
    result.stages.append(f"inputs: shapes {_shapes(inputs)} -> {_shapes(shrunk)}, {tries} tries")
    probes = [shrunk] + [random_like(shrunk, seed) for seed in (1, 2)]
    kept = [p for p in probes[1:] if _runs_cleanly(runner, jit, p, timeout)]
    runner.set_probes([shrunk] + kept)
    runner.tracked = frozenset(labels)
    result.inputs, result.expected = shrunk, {k: runner.expected[0][k] for k in labels}
    result.notes.append(f"compared: {', '.join(labels)} (the outputs that differ), on {1 + len(kept)} probes")
    sizes = sorted({d for a in shrunk if hasattr(a, "shape") for d in a.shape} - {0, 1})
    return [str(s) for s in sizes]


def _runs_cleanly(runner, jit, args, timeout: float) -> bool:
    ended = run_forked(lambda: runner.failing_labels(jit, args), timeout)
    return ended.how == "ok" and not isinstance(ended.value, Outcome)


def _shapes(args) -> str:
    return "(" + ", ".join(str(tuple(a.shape)) if hasattr(a, "shape") else repr(a) for a in args) + ")"


__all__ = ["reduce", "Reduction"]
