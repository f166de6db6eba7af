"""Speed claims that hold on a noisy machine: compare() and check_faster().

    check_faster("O3 vs O0 matmul", lambda: fast.matmul.benchmark(a, b, c),
                 lambda: slow.matmul.benchmark(a, b, c), at_least=2)
    # stderr: O3 vs O0 matmul: faster, ok

Each side is a function of no arguments that runs one benchmark (a BenchmarkResult). They run
in interleaved rounds, in the order fast, slow, slow, fast, fast, slow, ... so that neither side
always runs first in a round, and a change of the machine's load during the run reaches both.

The times compared are those of the results' clock: by default the CPU time of the thread that
ran the kernel (JitFunction.benchmark's clock="cpu"), which a busy machine does not stretch as
it stretches wall time. Results on different clocks are compared on the process's CPU time.

The ratio is the median per-call time of `slow` over that of `fast`, each over all its samples
of every round. Its interval is a two-stage bootstrap: draw rounds with replacement (the same
rounds for both sides: round i of each ran side by side), then each drawn round's samples with
replacement, and take the ratio of the medians; the interval is the middle `confidence` of
`resamples` such ratios. Why: a timing distribution is skewed and, on a shared machine,
many-peaked, so no formula holds for the ratio of two medians; resampling only the samples
would treat them as independent, but samples of one round share that round's load, and drawing
rounds as well keeps that variation in the interval. The random generator has a fixed seed, so
one set of samples gives one interval.

A claim holds when the whole interval lies at or above it, and is measured false when the whole
interval lies below it twice: for all rounds, and for a fresh batch of rounds run after that
(the confirmation). A machine can run one kernel slower for a moment (a neighbour's cache
traffic, a page's placement): a batch taken then decides nothing alone, and a confirmation
that disagrees makes sampling go on. While the interval straddles the claim, more rounds run,
until it decides or the time budget (`budget` seconds, or `max_rounds` rounds) runs out: only
then is the claim inconclusive, which check_faster reports apart from a claim measured false
(InconclusiveClaim, a subclass of AssertionError).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..jit.benchmark_result import (
    CLOCK_NAMES,
    CONFIDENCE,
    BenchmarkResult,
    format_seconds,
)

# What compare and check_faster take: a BenchmarkResult, or a function that runs one benchmark.
Benchmarked = BenchmarkResult | Callable[[], BenchmarkResult]

RESAMPLES = 2000
# Seconds of wall time check_faster may spend before it calls a claim inconclusive.
DEFAULT_BUDGET = 30.0


class InconclusiveClaim(AssertionError):
    """check_faster ran out of time before the interval of the ratio decided the claim."""


@dataclass(frozen=True)
class Comparison:
    """How many times faster `a` ran than `b`: `ratio` = median time of b / median time of a."""

    ratio: float
    low: float
    high: float
    confidence: float
    a: tuple  # the BenchmarkResults of each round
    b: tuple
    clock: str = "wall"  # the clock whose times were compared
    seconds: float = 0.0  # wall time the rounds took, when compare() or check_faster() ran them

    @property
    def rounds(self) -> int:
        return len(self.a)

    @property
    def median_a(self) -> float:
        return float(np.median(np.concatenate([r.on(self.clock).samples for r in self.a])))

    @property
    def median_b(self) -> float:
        return float(np.median(np.concatenate([r.on(self.clock).samples for r in self.b])))

    def figures(self) -> str:
        """The ratio, its interval, the rounds and the clock, as a failure message gives them."""
        return (
            f"{self.ratio:.3g}x ({self.confidence:.0%} interval {self.low:.3g}x to {self.high:.3g}x) over "
            f"{self.rounds} interleaved round{'s' * (self.rounds != 1)} in {self.seconds:.1f} s, on "
            f"{CLOCK_NAMES[self.clock]}"
        )

    def __str__(self) -> str:
        return f"{self.figures()}; medians per call {format_seconds(self.median_a)} and {format_seconds(self.median_b)}"


def _resampled_medians(rounds: list, picks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Per resample (rows of `picks`: round indices), the median of each picked round's samples
    drawn with replacement, pooled."""
    lengths = np.array([len(r) for r in rounds])
    width = int(lengths.max())
    padded = np.full((len(rounds), width), np.nan)
    for i, r in enumerate(rounds):
        padded[i, : len(r)] = r
    n = lengths[picks][:, :, None]  # (resamples, rounds, 1)
    positions = (rng.random((*picks.shape, width)) * n).astype(np.intp)
    drawn = padded[picks[:, :, None], np.minimum(positions, width - 1)]
    drawn[np.arange(width)[None, None, :] >= n] = np.nan  # a shorter round draws only its own count
    return np.nanmedian(drawn.reshape(len(picks), -1), axis=1)


def ratio_interval(
    a_rounds: Sequence[Sequence[float]],
    b_rounds: Sequence[Sequence[float]],
    *,
    confidence: float = CONFIDENCE,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float]:
    """(ratio, low, high) of median(b) / median(a) from per-round samples (module docstring)."""
    if len(a_rounds) != len(b_rounds) or not a_rounds:
        raise ValueError(
            f"ratio_interval: expected as many rounds of a as of b, at least one, "
            f"got {len(a_rounds)} and {len(b_rounds)}"
        )
    a_arrays = [np.asarray(r, dtype=float) for r in a_rounds]
    b_arrays = [np.asarray(r, dtype=float) for r in b_rounds]
    ratio = float(np.median(np.concatenate(b_arrays)) / np.median(np.concatenate(a_arrays)))
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(a_arrays), size=(resamples, len(a_arrays)))
    width = max(len(r) for r in a_arrays + b_arrays)
    chunk = max(1, 2_000_000 // (len(a_arrays) * width))  # ~16 MB of draws at a time
    ratios = np.concatenate(
        [
            _resampled_medians(b_arrays, part, rng) / _resampled_medians(a_arrays, part, rng)
            for part in np.array_split(picks, -(-resamples // chunk))
        ]
    )
    tail = (1 - confidence) / 2
    low, high = np.quantile(ratios, [tail, 1 - tail])
    return ratio, float(min(low, ratio)), float(max(high, ratio))


def _result(side: str, value) -> BenchmarkResult:
    if not isinstance(value, BenchmarkResult):
        raise TypeError(
            f"{side} must give a BenchmarkResult (for example `lambda: jit.f.benchmark(x)`), got {type(value).__name__}"
        )
    return value


def _run_rounds(a, b, rounds: int, start: int) -> tuple[list, list]:
    """`rounds` interleaved rounds of a() and b(), the order alternating by round (ABBA)."""
    got_a, got_b = [], []
    for i in range(start, start + rounds):
        if i % 2 == 0:
            got_a.append(_result("a (fast)", a()))
            got_b.append(_result("b (slow)", b()))
        else:
            got_b.append(_result("b (slow)", b()))
            got_a.append(_result("a (fast)", a()))
    return got_a, got_b


def common_clock(results: Iterable[BenchmarkResult]) -> str:
    """The clock all `results` share, else the process's CPU time (which every loop reads)."""
    clocks = {r.clock for r in results}
    return clocks.pop() if len(clocks) == 1 else "process"


def _comparison(got_a, got_b, confidence: float, seconds: float = 0.0) -> Comparison:
    clock = common_clock(got_a + got_b)
    ratio, low, high = ratio_interval(
        [r.on(clock).samples for r in got_a], [r.on(clock).samples for r in got_b], confidence=confidence
    )
    return Comparison(ratio, low, high, confidence, tuple(got_a), tuple(got_b), clock, seconds)


def _batch_below(got_fast: list, got_slow: list, start: int, confidence: float, at_least: float) -> bool:
    """The rounds from `start` on, alone, put the whole interval below `at_least`."""
    return _comparison(got_fast[start:], got_slow[start:], confidence).high < at_least


def _check_options(rounds, confidence) -> None:
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
        raise ValueError(f"rounds must be an int >= 1, got {rounds!r}")
    if not isinstance(confidence, float) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a float between 0 and 1, got {confidence!r}")


def compare(a: Benchmarked, b: Benchmarked, *, rounds: int = 5, confidence: float = CONFIDENCE) -> Comparison:
    """How many times faster `a` is than `b`, with an interval: `a` and `b` are BenchmarkResults
    (one round each) or functions of no arguments that each run one benchmark (`rounds` rounds)."""
    _check_options(rounds, confidence)
    if isinstance(a, BenchmarkResult) or isinstance(b, BenchmarkResult):
        return _comparison([_result("a", a)], [_result("b", b)], confidence)
    for side, f in (("a", a), ("b", b)):
        if not callable(f):
            raise TypeError(
                f"compare(): {side} must be a BenchmarkResult or a function of no arguments that "
                f"runs one benchmark, got {type(f).__name__}"
            )
    started = time.perf_counter()
    got_a, got_b = _run_rounds(a, b, rounds, 0)
    return _comparison(got_a, got_b, confidence, time.perf_counter() - started)


def _check_claim_options(label, fast, slow, at_least, rounds, max_rounds, budget, confidence) -> None:
    if not isinstance(label, str) or not label:
        raise TypeError(f"check_faster(): label must be a non-empty str, got {label!r}")
    for side, f in (("fast", fast), ("slow", slow)):
        if not callable(f):
            raise TypeError(
                f"check_faster({label!r}): {side} must be a function of no arguments that runs one "
                f"benchmark (for example `lambda: jit.f.benchmark(x)`), got {type(f).__name__}"
            )
    if isinstance(at_least, bool) or not isinstance(at_least, (int, float)) or not at_least > 0:
        raise ValueError(f"check_faster({label!r}): at_least must be a ratio > 0, got {at_least!r}")
    _check_options(rounds, confidence)
    if max_rounds is not None and (
        isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < rounds
    ):
        raise ValueError(
            f"check_faster({label!r}): max_rounds must be an int >= rounds ({rounds}) or None, got {max_rounds!r}"
        )
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget > 0:
        raise ValueError(f"check_faster({label!r}): budget must be a number of seconds > 0, got {budget!r}")


def check_faster(
    label: str,
    fast: Benchmarked,
    slow: Benchmarked,
    *,
    at_least: float,
    rounds: int = 5,
    max_rounds: int | None = None,
    budget: float = DEFAULT_BUDGET,
    confidence: float = CONFIDENCE,
) -> Comparison:
    """Asserts that `fast` runs at least `at_least` times faster than `slow` (median over median,
    the whole interval at or above the claim); prints `<label>: faster, ok` to stderr. Raises
    AssertionError with the figures when the whole interval lies below the claim ("measured
    false"), and InconclusiveClaim when it still straddles the claim after `budget` seconds of
    rounds (or `max_rounds` rounds)."""
    from .output import log

    _check_claim_options(label, fast, slow, at_least, rounds, max_rounds, budget, confidence)
    started = time.perf_counter()
    got_fast, got_slow = _run_rounds(fast, slow, rounds, 0)
    batch_start = 0  # the first round of the latest batch
    below_before = False  # the interval lay below the claim before the latest batch ran
    while True:
        spent = time.perf_counter() - started
        result = _comparison(got_fast, got_slow, confidence, spent)
        if result.low >= at_least:
            log(f"{label}: faster, ok")
            return result
        below = result.high < at_least
        confirmed = below and below_before and _batch_below(got_fast, got_slow, batch_start, confidence, at_least)
        out_of_rounds = max_rounds is not None and len(got_fast) >= max_rounds
        if confirmed or out_of_rounds or spent >= budget:
            break
        below_before = below
        batch_start = len(got_fast)
        batch = rounds if max_rounds is None else min(rounds, max_rounds - len(got_fast))
        more_fast, more_slow = _run_rounds(fast, slow, batch, len(got_fast))
        got_fast += more_fast
        got_slow += more_slow
    claim = f"{label}: expected fast to be at least {at_least:g}x faster than slow"
    medians = f"medians per call: fast {format_seconds(result.median_a)}, slow {format_seconds(result.median_b)}"
    limit = f"max_rounds={max_rounds}" if out_of_rounds else f"the time budget of {budget:g} s"
    if result.high < at_least:
        how = "the latest batch of rounds alone too" if confirmed else f"{limit} left no rounds to confirm it"
        raise AssertionError(f"{claim}; measured false: {result.figures()}; {medians} (below the claim: {how})")
    raise InconclusiveClaim(
        f"{claim}; inconclusive: {result.figures()}, and the interval still straddles the "
        f"claim after {limit}; {medians}. Claim a wider margin, or give check_faster a "
        f"larger budget= on a busy machine"
    )
