"""bisect_pipeline: the first pass of a pipeline, or the first LLVM optimization, after which the
check fails.

The pipeline level cuts the pipeline short: candidate k is the module after the first k steps
(pipeline.py), finished by the default lowering. Candidate 0 is the module lowered without any
step of the pipeline, candidate n with all of them. When candidate k-1 passes and candidate k
fails, step k is the culprit: its output, lowered by the default pipeline, fails; its input does
not. A binary search finds such a k in about log2(n) check runs.

Why cut short, not leave passes out: a lowering pass cannot be left out (what it would have
lowered stays, and a later pass expects it gone), but the default lowering can take over where
any prefix stopped. A cut the default lowering cannot finish (a conversion it lacks) is not a
candidate; the search takes the nearest one it can finish, and when none between a passing and
a failing cut is left, it leaves each step of that stretch out of the failing cut in turn (the
one step whose absence makes the check pass is the culprit).

When the check fails with no step of the pipeline at all, the pipeline is not to blame; if it
passes at -O0 and fails at the opt level asked, LLVM's optimizations are bisected instead
(llvm_level.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..settings import resolve_opt_level
from . import llvm_level
from .checks import DEFAULT_TIMEOUT, Checker
from .isolation import run_forked
from .outcome import Outcome, first_line
from .pipeline import Cut, Step, cut, prepared, split_pipeline
from .reading import read_module
from .tools import ToolMissing


@dataclass
class BisectResult:
    """What bisect_pipeline found, and how."""

    line: str  # "culprit: <pass>", "culprit: llvm <pass> on <function>" or "no culprit: <why>"
    culprit: str | None = None  # the pass as spelled in the pipeline, or LLVM's pass name
    level: str | None = None  # "pipeline" or "llvm"
    function: str | None = None  # the LLVM function the LLVM pass ran on
    position: int | None = None  # 1-based step of the pipeline, or opt's pass number
    runs: int = 0  # check runs
    seconds: float = 0.0  # wall time of the whole bisection
    trail: list[str] = field(default_factory=list)  # one line per check run, in order
    notes: list[str] = field(default_factory=list)
    before: str | None = None  # the culprit's input: MLIR (pipeline level) or LLVM IR (llvm level)
    reproduce: str | None = None  # the command that runs the culprit on `before` (with -o OUT for OUT)

    @property
    def found(self) -> bool:
        return self.culprit is not None

    def report(self) -> str:
        """The culprit line, then how it was decided."""
        lines = [self.line] + [f"  {n}" for n in self.notes]
        lines.append(f"  decided by {self.runs} check runs in {self.seconds:.1f} s:")
        lines += [f"    {t}" for t in self.trail]
        if self.reproduce:
            lines.append(f"  reproduce: {self.reproduce}")
        return "\n".join(lines)


def _cut_job(source: str, steps: list[Step]):
    try:
        return cut(source, steps)
    except Exception as e:  # noqa: BLE001 - a cut that cannot be lowered is not a candidate
        return f"{type(e).__name__}: {first_line(str(e))}"


def _steps_text(k: int, n: int) -> str:
    return "no step" if k == 0 else "every step" if k == n else f"steps 1-{k}"


class _Bisection:
    def __init__(self, source: str, steps: list[Step], checker: Checker, opt_level: int, timeout: float):
        self.source, self.steps, self.checker = source, steps, checker
        self.opt_level, self.timeout = opt_level, timeout
        self.cuts: dict[tuple, Cut | str] = {}
        self.outcomes: dict[tuple, Outcome] = {}  # the last outcome of each cut at the opt level asked
        self.trail: list[str] = []

    def cut(self, kept: tuple) -> Cut | str:
        """The cut keeping the steps numbered in `kept` (0-based), or why there is none."""
        if kept not in self.cuts:
            ended = run_forked(lambda: _cut_job(self.source, [self.steps[i] for i in kept]), self.timeout)
            self.cuts[kept] = ended.value if ended.how == "ok" else f"the passes {ended.description}"
        return self.cuts[kept]

    def check(self, kept: tuple, label: str, opt_level: int | None = None) -> Outcome | None:
        """The check on a cut (None when the default lowering cannot finish it)."""
        made = self.cut(kept)
        level = self.opt_level if opt_level is None else opt_level
        if isinstance(made, str):
            self.trail.append(f"{label}: not a candidate, the default lowering cannot finish it ({made})")
            return None
        outcome = self.checker.run(self.source, lowered=made.lowered, opt_level=level)
        if level == self.opt_level:
            self.outcomes[kept] = outcome
        self.trail.append(
            f"{label}, -O{level}: {'FAILS' if outcome.failing else 'passes'}"
            + (f" ({outcome.summary})" if outcome.failing else "")
        )
        return outcome

    def prefix(self, k: int, note: str = "") -> Outcome | None:
        return self.check(tuple(range(k)), f"{_steps_text(k, len(self.steps))} + default lowering{note}")

    def nearest(self, lo: int, hi: int) -> tuple[int, Outcome] | None:
        """The decided cut nearest the middle of (lo, hi), or None when none there can be finished."""
        mid = (lo + hi) // 2
        for k in sorted(range(lo + 1, hi), key=lambda k: (abs(k - mid), k)):
            outcome = self.prefix(k)
            if outcome is not None:
                return k, outcome
        return None

    def search(self, lo: int, hi: int) -> tuple[int, int]:
        """Narrows (lo passes, hi fails) to adjacent steps, or to a stretch it cannot split."""
        while hi - lo > 1:
            found = self.nearest(lo, hi)
            if found is None:
                break
            k, outcome = found
            lo, hi = (lo, k) if outcome.failing else (k, hi)
        return lo, hi

    def leave_out(self, lo: int, hi: int) -> list[int]:
        """The steps of lo+1..hi whose absence from the failing cut makes the check pass."""
        needed = []
        for j in range(lo, hi):
            kept = tuple(i for i in range(hi) if i != j)
            outcome = self.check(kept, f"steps 1-{hi} without step {j + 1} ({self.steps[j]}) + default lowering")
            if outcome is not None and not outcome.failing:
                needed.append(j)
        return needed


def _found(b: _Bisection, index: int, how: str, full: Outcome, at: Outcome | None) -> BisectResult:
    step = b.steps[index]
    inside = f", inside {'('.join(step.anchors)}(...)" if step.anchors else ""
    notes = [f"step {index + 1} of {len(b.steps)}{inside}; {how}"]
    if at is not None and at.key != full.key:
        notes.append(f"with it the check fails otherwise than with the whole pipeline: {at.summary}")
    before = b.cut(tuple(range(index)))
    reproduce = None
    if step.python is None:
        from .tools import tool

        reproduce = f"{tool('mlir-opt')} OUT --pass-pipeline='builtin.module({step.runnable})'"
    return BisectResult(
        f"culprit: {step.spelled}",
        step.spelled,
        "pipeline",
        position=index + 1,
        notes=notes,
        before=before.before if isinstance(before, Cut) else None,
        reproduce=reproduce,
    )


def _pipeline_level(b: _Bisection, full: Outcome) -> BisectResult:
    n = len(b.steps)
    lo, hi = b.search(0, n)
    if hi - lo == 1:
        return _found(
            b,
            lo,
            f"{_steps_text(lo, n)} + default lowering pass, {_steps_text(hi, n)} fail",
            full,
            b.outcomes.get(tuple(range(hi))),
        )
    needed = b.leave_out(lo, hi)
    if len(needed) == 1:
        return _found(
            b,
            needed[0],
            f"the default lowering cannot finish the cuts between steps {lo} and {hi}; "
            f"steps 1-{hi} fail, and pass without this step alone",
            full,
            None,
        )
    return BisectResult(
        f"no culprit: the failure comes with steps {lo + 1}-{hi} "
        f"({', '.join(str(s) for s in b.steps[lo:hi])}), which cannot be told apart: the default lowering "
        "cannot finish the pipeline between them (a lowering step cannot be left out)"
        + (f", and leaving out any one of them {'passes' if needed else 'still fails'}" if hi - lo > 1 else "")
    )


def _llvm_level(b: _Bisection, lowered: str) -> BisectResult:
    level = b.opt_level
    try:
        llvm_ir = llvm_level.to_llvm_ir(lowered)
        whole = llvm_level.optimize(llvm_ir, level, -1)
    except (llvm_level.ToolFailed, ToolMissing, OSError) as e:
        return BisectResult(f"no culprit: cannot run LLVM's optimizations outside the JIT: {first_line(str(e))}")
    runs: dict[int, Outcome | str] = {}

    def at(limit: int) -> Outcome | str:
        if limit not in runs:
            try:
                optimized = llvm_level.optimize(llvm_ir, level, limit)
                imported = llvm_level.to_llvm_dialect(optimized.ir)
            except llvm_level.ToolFailed as e:
                b.trail.append(f"opt -O{level} -opt-bisect-limit={limit}: not a candidate ({first_line(str(e))})")
                runs[limit] = str(e)
                return runs[limit]
            outcome = b.checker.run(b.source, lowered=imported, opt_level=0)
            b.trail.append(
                f"opt -O{level} -opt-bisect-limit={limit}, then the JIT at -O0: "
                + (f"FAILS ({outcome.summary})" if outcome.failing else "passes")
            )
            runs[limit] = outcome
        return runs[limit]

    total = whole.total
    full = at(total)
    if isinstance(full, str) or not full.failing:
        why = (
            "opt's output cannot be loaded back"
            if isinstance(full, str)
            else f"all of opt -O{level}'s passes, then the JIT at -O0, pass: the failure comes from the code "
            f"generator at -O{level}, which this does not bisect"
        )
        return BisectResult(f"no culprit: {why}")
    none = at(0)
    if isinstance(none, str) or none.failing:
        return BisectResult(
            f"no culprit: it fails with none of opt -O{level}'s optional passes "
            "(-opt-bisect-limit=0; what remains cannot be skipped)"
        )
    lo, hi = 0, total
    while hi - lo > 1:
        mid = (lo + hi) // 2
        outcome = at(mid)
        if isinstance(outcome, str):
            return BisectResult(f"no culprit: opt's output at -opt-bisect-limit={mid} cannot be loaded back")
        lo, hi = (lo, mid) if outcome.failing else (mid, hi)
    name, function = llvm_level.pass_number(llvm_level.optimize(llvm_ir, level, hi), hi) or ("?", "?")
    from .tools import tool

    notes = [f"opt pass {hi} of {total} at -O{level}; -opt-bisect-limit={lo} passes, {hi} fails"]
    if function.startswith("_mlir_ciface_"):
        notes.append(
            f"{function} is the C-interface wrapper of @{function[len('_mlir_ciface_') :]} that a "
            "typed call enters (inlined into it above -O0)"
        )
    return BisectResult(
        f"culprit: llvm {name} on {function}",
        name,
        "llvm",
        function=function,
        position=hi,
        notes=notes,
        before=llvm_ir,
        reproduce=f"{tool('opt')} {' '.join(llvm_level.opt_args(level, hi))} OUT",
    )


def _without_pipeline(b: _Bisection, full_cut: Cut) -> BisectResult:
    """The check fails with no step of the pipeline: LLVM's optimizations, if -O0 passes."""
    if b.opt_level == 0:
        return BisectResult(
            "no culprit: it fails with no step of the pipeline (the default lowering alone) at -O0: "
            "the module itself, or the default lowering; shrink it with memref-reduce"
        )
    o0 = b.checker.run(b.source, lowered=full_cut.lowered, opt_level=0)
    b.trail.append(f"every step + default lowering, -O0: {'FAILS' if o0.failing else 'passes'}")
    if o0.failing:
        return BisectResult(
            "no culprit: it fails with no step of the pipeline (the default lowering alone), and at "
            "-O0 too: the module itself, or the default lowering; shrink it with memref-reduce"
        )
    return _llvm_level(b, full_cut.lowered)


def _decide(b: _Bisection, llvm: bool) -> BisectResult:
    n = len(b.steps)
    full = b.prefix(n)
    if full is None:
        return BisectResult(f"no culprit: the pipeline cannot lower the module: {b.cut(tuple(range(n)))}")
    if not full.failing:
        return BisectResult(f"no culprit: the check passes with the whole pipeline at -O{b.opt_level}")
    # The same candidate once more: a check that fails otherwise, or passes, decides nothing.
    again = b.prefix(n, note=", again (is the check deterministic?)")
    if again is None or again.key != full.key:
        return BisectResult(
            "no culprit: the check is not deterministic: the same candidate failed, then "
            + ("passed" if again is not None and not again.failing else "failed otherwise")
        )
    none = b.prefix(0)
    if none is None:
        return BisectResult(f"no culprit: the default lowering cannot lower the module alone: {b.cut(())}")
    if not none.failing:
        return _pipeline_level(b, full)
    if not llvm:
        return BisectResult("no culprit: it fails with no step of the pipeline (the default lowering alone)")
    everything = b.cut(tuple(range(n)))
    if not isinstance(everything, Cut):  # the whole pipeline runs, or `prefix` above would have said so
        return BisectResult(f"no culprit: the whole pipeline does not lower the module: {everything}")
    return _without_pipeline(b, everything)


def bisect_pipeline(
    module,
    pipeline: str,
    check,
    *,
    opt_level: int | None = None,
    python_passes: dict | None = None,
    test_args=(),
    llvm: bool = True,
    timeout: float = DEFAULT_TIMEOUT,
) -> BisectResult:
    """Finds the step of `pipeline` (`builtin.module(...)`), or else LLVM's optimization pass,
    after which `check` fails on `module` (MLIR text or a path).

    `check`: a command (the lowered candidate file appended, a non-zero exit status meaning
    "still failing"; `test_args` go before it), a callable taking a JitModule of the candidate
    (failing by raising or returning False), or Against(...). Candidates are JIT-compiled at
    `opt_level` (default: the suite's); LLVM's optimizations are bisected (`llvm`) when the check
    fails without any step of the pipeline but passes at -O0. `python_passes` maps names used in
    the pipeline to Python passes. Each run may take `timeout` seconds."""
    start = time.perf_counter()
    source = prepared(read_module(module))
    steps = split_pipeline(pipeline, python_passes)
    checker = Checker(check, test_args=test_args, timeout=timeout)
    b = _Bisection(source, steps, checker, resolve_opt_level(opt_level), timeout)
    if checker.typed_call is not None:
        _set_up_typed_call(b)
    result = _decide(b, llvm)
    result.runs, result.seconds, result.trail = checker.runs, time.perf_counter() - start, b.trail
    result.notes += checker.hints
    return result


def _set_up_typed_call(b: _Bisection) -> None:
    """The signature and the probe of an Against check: its inputs, or the example check_against
    finds with the whole pipeline."""
    from .reading import signature_of
    from .typed_call import draw_failing_inputs

    runner = b.checker.typed_call
    assert runner is not None  # called for an Against check only
    runner.set_signature(signature_of(b.source, runner.against.function))
    inputs = runner.against.inputs
    whole = b.cut(tuple(range(len(b.steps))))
    if inputs is None and isinstance(whole, Cut):
        ended = run_forked(lambda: draw_failing_inputs(b.source, whole.lowered, b.opt_level, runner.against), b.timeout)
        if ended.how != "ok" or isinstance(ended.value, Outcome):
            why = ended.value.summary if ended.how == "ok" else ended.description
            raise ValueError(
                f"Against({runner.against.function!r}) without inputs: check_against found no failing "
                f"example to bisect with ({why})"
            )
        inputs = ended.value
    runner.set_probes([list(inputs or ())])
