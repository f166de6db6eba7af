"""JitFunction.benchmark: time a JIT-compiled function with no Python between its calls.

    r = jit.matmul.benchmark(a, b, c, flops=2 * n**3)
    r.median, r.ci, r.gflops          # seconds per call, its 95% interval, GFLOP/s

The arguments are checked and packed once (the call plan's `bind`); then the native loop of
timing_loop.py calls the kernel's packed C-interface wrapper on that frame, `number` times per
sample. In order:

1. one call from Python (the probe): it fails as a call would (bad arguments, a failed
   runtime check, a callback's exception), and says which results are memory the call
   allocated, which the loop then frees after every call (a view of an input or a global is
   never freed). The first call decides: a function that returns fresh memory on some calls and
   a view of an input on others is not supported;
2. warm-up for `warmup` seconds, which also finds `number` (when not given) so that `repeats`
   samples last about `min_time` together;
3. `repeats` samples, then the loop's own cost per call (the empty kernel, ~1-2 ns), reported
   as `overhead` and not subtracted.

Every sample reads three clocks (timing_loop.py): the wall clock, the process's CPU time and
the CPU time of the thread that calls the kernel. `clock=` says which one the statistics are
of: "cpu" (the default) is the thread's, or the process's where the kernel used other threads
too (the process's CPU time grew more than the thread's); "thread", "process" and "wall" pick
one. A busy machine stretches wall-clock samples by the time the scheduler gave others, but
not CPU time, which is what a speed claim is judged on (docs/benchmarking.md says when wall
time is the right measure). The result keeps every clock's samples (`by_clock`).

Under runtime verification the kernel's checks are timed, and the whole loop runs inside the
JitModule's guard: a failed check raises RuntimeVerificationError (what the kernel allocated
on that call is not freed, as for a call). A module with Python callbacks can be timed, but then
Python runs inside each call by the module's own design; an exception a callback raised during
the loop is raised when the loop ends. A kernel that writes into its arguments keeps doing so,
call after call, on the same arrays.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .benchmark_result import BenchmarkResult
from .timing_loop import (
    FREE_BOTH,
    FREE_DATA,
    FREE_DESCRIPTOR,
    TimingLoop,
    loop_address,
    loop_overhead,
)

DEFAULT_WARMUP = 0.02
CLOCK_CHOICES = ("cpu", "thread", "process", "wall")
# The process's CPU time counts other threads' work too. The kernel is taken to run on several
# threads when the others worked more than this share of both the calling thread's CPU time and
# the wall time: a kernel that mostly waits (a sleep, I/O) has almost no CPU time of its own, and
# a pytest-xdist worker's or a Python thread's bit of work beside it must not count as its own.
OTHER_THREADS = 0.1
DEFAULT_REPEATS = 11
DEFAULT_MIN_TIME = 0.1
_CALIBRATION_SAMPLE = 1e-3  # seconds: long enough for a clock read's ~20 ns to vanish


def _owner(array):
    """What keeps a returned array's memory alive (views.view_memref's `.base.owner`)."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return getattr(base, "owner", None)


def _frees(slots: tuple, frame_address: int, first_result) -> tuple:
    """(address of a word of the result area, kind) of what each call's results allocated;
    `slots`: the plan's memref results."""
    from .results import NativeAllocation

    if not slots:
        return ()
    arrays = [
        v for v in (first_result if isinstance(first_result, tuple) else (first_result,)) if isinstance(v, np.ndarray)
    ]
    frees, seen = [], set()
    for (offset, ranked), array in zip(slots, arrays):
        owner = _owner(array)
        fresh = isinstance(owner, NativeAllocation) and id(owner) not in seen
        if fresh:
            seen.add(id(owner))
        if ranked and fresh:
            frees.append((frame_address + offset, FREE_DATA))
        elif not ranked:  # the heap copy of the descriptor is new on every call
            frees.append((frame_address + offset, FREE_BOTH if fresh else FREE_DESCRIPTOR))
    return tuple(frees)


def _check(name: str, value, kind, low, what: str):
    if isinstance(value, bool) or not isinstance(value, kind) or value < low:
        raise ValueError(f"benchmark(): {name} must be {what}, got {value!r}")
    return value


def _duration(times: dict) -> list[float]:
    """Per sample, the seconds a sample of the kernel lasted: the smaller of the wall clock (a
    kernel on several threads adds their CPU times up) and the process's CPU time (the wall
    clock counts the time the scheduler gave other processes)."""
    return [min(w, p) / 1e9 for w, p in zip(times["wall"], times["process"])]


def _calibrate(loop: TimingLoop, warmup: float, target: float) -> int:
    """Runs samples for at least `warmup` seconds; returns the calls per sample that make a
    sample last about `target` seconds (found by doubling from one call). The per-call time is
    the fastest of three samples at the last count: one the scheduler interrupted would otherwise
    make every sample after it several times too short."""
    number, spent = 1, 0.0
    goal = min(target, _CALIBRATION_SAMPLE)
    while True:
        elapsed = _duration(loop.run(number, 1))[0]
        spent += elapsed
        if elapsed >= goal:
            more = _duration(loop.run(number, 2))
            spent += sum(more)
            per_call = min(elapsed, *more) / number
            if spent >= warmup:
                return max(1, round(target / per_call))
        elif number < 1 << 40:
            number *= max(2, min(16, int(goal / max(elapsed, 1e-9))))


def judged_clock(clock: str, times: dict) -> str:
    """The clock a result's statistics are of: `clock`, or for "cpu" the thread's CPU time, or
    the process's where other threads of the process worked during the samples."""
    if clock != "cpu":
        return clock
    thread, others = sum(times["thread"]), sum(times["process"]) - sum(times["thread"])
    return "process" if others > OTHER_THREADS * max(thread, sum(times["wall"])) else "thread"


def run_benchmark(
    invoker: Any,
    args: tuple,
    *,
    warmup: float = DEFAULT_WARMUP,
    repeats: int = DEFAULT_REPEATS,
    min_time: float | None = None,
    number: int | None = None,
    flops: float | None = None,
    bytes: float | None = None,
    clock: str = "cpu",
) -> BenchmarkResult:
    """`jit.<name>.benchmark(*args, ...)` (`invoker`: call_plan.Invoker, which imports this module, so Any
    here): see the module docstring."""
    if clock not in CLOCK_CHOICES:
        raise ValueError(f"benchmark(): clock must be one of {', '.join(map(repr, CLOCK_CHOICES))}, got {clock!r}")
    _check("warmup", warmup, (int, float), 0, "a number of seconds >= 0")
    _check("repeats", repeats, int, 1, "an int >= 1 (the number of samples)")
    if number is not None and min_time is not None:
        raise ValueError("benchmark(): give number= (calls per sample) or min_time= (which chooses it), not both")
    if number is not None:
        _check("number", number, int, 1, "an int >= 1 (calls per sample) or None (chosen from min_time)")
    min_time = DEFAULT_MIN_TIME if min_time is None else min_time
    if not isinstance(min_time, (int, float)) or isinstance(min_time, bool) or not min_time > 0:
        raise ValueError(f"benchmark(): min_time must be a number of seconds > 0, got {min_time!r}")
    for label, count in (("flops", flops), ("bytes", bytes)):
        if count is not None and (isinstance(count, bool) or not isinstance(count, (int, float)) or count < 0):
            raise ValueError(f"benchmark(): {label} must be a number >= 0 per call, or None, got {count!r}")

    name, linked = invoker.name, invoker.linked
    bound = invoker.bind(*args)  # checks and packs once; the loop reuses this frame
    first = bound()  # the probe: fails as a call would, and shows what the results own
    frame = ctypes.addressof(bound.frame)
    frees = _frees(invoker.plan.memref_results, frame, first)
    del first  # frees the probe's results, if they were fresh memory

    enter = linked.guard.caller(loop_address(), name) if linked.guard else None
    loop = TimingLoop(linked.addresses[name], frame, frees, enter)
    errors = linked.callback_errors if linked.callbacks else None
    saved = errors.before_native() if errors else None
    try:
        if number is None:
            number = _calibrate(loop, warmup, min_time / repeats)
        elif warmup > 0:
            spent = 0.0
            while spent < warmup:
                spent += _duration(loop.run(number, 1))[0]
        times = loop.run(number, repeats)
    finally:
        if errors:
            errors.after_native(saved)  # a callback's exception, raised now
    judged = judged_clock(clock, times)
    by_clock = {c: tuple(t / number / 1e9 for t in values) for c, values in times.items()}
    return BenchmarkResult(
        name=name,
        samples=by_clock[judged],
        number=number,
        overhead=loop_overhead()[judged],
        flops=flops,
        bytes=bytes,
        clock=judged,
        by_clock=by_clock,
    )
