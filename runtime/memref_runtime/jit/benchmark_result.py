"""What JitFunction.benchmark returns: per-call times in seconds, and their statistics.

A sample is the time of `number` back-to-back calls divided by `number`. The statistics are
those of the samples: min, median, mean, standard deviation, the quartiles, and a
distribution-free confidence interval of the median (the order statistics that the binomial
distribution puts around it, as in Hodges-Lehmann's sign-test interval), which assumes no
shape of the timing distribution: timings are skewed and on a shared machine many-peaked.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction

CONFIDENCE = 0.95
# What each clock of a result counts, as its __str__ says it.
CLOCK_NAMES = {"thread": "thread CPU time", "process": "process CPU time", "wall": "wall time"}


def median_interval(sorted_values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float, float]:
    """(low, high, coverage): the narrowest order-statistic interval [x_(k), x_(n+1-k)] whose
    coverage of the true median is at least `confidence`; with too few values for that, the
    whole range and its smaller coverage (1 - 2 / 2**n)."""
    n = len(sorted_values)
    if n == 0:
        raise ValueError("median_interval: no values")
    if not 0 < confidence < 1:
        raise ValueError(f"median_interval: confidence must lie between 0 and 1, got {confidence!r}")
    # Exact, in integers: [x_(k), x_(n+1-k)] covers the median with probability
    # 1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2); keep the largest k where that is >= confidence.
    allowed = (1 - Fraction(confidence).limit_denominator(10**9)) * 2**n
    term, tail, k = 1, 0, 1  # term = C(n, j); tail = 2^n P(B <= j)
    for j in range((n + 1) // 2):
        tail += term
        if 2 * tail > allowed:
            break
        k = j + 1
        term = term * (n - j) // (j + 1)
    coverage = float(1 - Fraction(2 * sum(math.comb(n, j) for j in range(k)), 2**n))
    return sorted_values[k - 1], sorted_values[n - k], coverage


def quantile(sorted_values: Sequence[float], q: float) -> float:
    """The `q` quantile, interpolated between order statistics (NumPy's default, 'linear')."""
    at = q * (len(sorted_values) - 1)
    low = math.floor(at)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (at - low)


def format_seconds(seconds: float) -> str:
    """A time with 3 significant digits in the unit that suits it: `1.23 ms`, `850 ns`."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


@dataclass(frozen=True)
class BenchmarkResult:
    """Per-call times of one benchmark, in seconds (`samples`, in the order they were taken, on
    `clock`; `by_clock` holds every clock the loop read, the same samples timed by each)."""

    name: str
    samples: tuple
    number: int  # calls per sample
    overhead: float  # per call: the empty kernel through the same loop (included in the samples)
    flops: float | None = None  # per call, as the caller said
    bytes: float | None = None
    clock: str = "wall"  # "thread", "process" (CPU time) or "wall": what `samples` counted
    by_clock: dict = field(default_factory=dict, compare=False)
    _sorted: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if not self.samples:
            raise ValueError("BenchmarkResult: no samples")
        if self.clock not in CLOCK_NAMES:
            raise ValueError(f"BenchmarkResult: clock must be one of {sorted(CLOCK_NAMES)}, got {self.clock!r}")
        object.__setattr__(self, "_sorted", tuple(sorted(self.samples)))

    def on(self, clock: str) -> BenchmarkResult:
        """The same result with the statistics of another clock's samples (from `by_clock`)."""
        if clock == self.clock:
            return self
        if clock not in self.by_clock:
            raise ValueError(
                f"BenchmarkResult.on(): clock must be one of the clocks this result read "
                f"({', '.join(sorted(self.by_clock)) or self.clock}), got {clock!r}"
            )
        return replace(self, samples=self.by_clock[clock], clock=clock)

    @property
    def repeats(self) -> int:
        """The number of samples."""
        return len(self.samples)

    @property
    def min(self) -> float:
        return self._sorted[0]

    @property
    def max(self) -> float:
        return self._sorted[-1]

    @property
    def median(self) -> float:
        return statistics.median(self._sorted)

    @property
    def mean(self) -> float:
        return statistics.fmean(self._sorted)

    @property
    def stdev(self) -> float:
        """The samples' standard deviation (0 for one sample)."""
        return statistics.stdev(self._sorted) if len(self._sorted) > 1 else 0.0

    @property
    def q1(self) -> float:
        return quantile(self._sorted, 0.25)

    @property
    def q3(self) -> float:
        return quantile(self._sorted, 0.75)

    @property
    def iqr(self) -> float:
        """The interquartile range, q3 - q1: the spread that outliers do not move."""
        return self.q3 - self.q1

    @property
    def ci(self) -> tuple[float, float]:
        """A confidence interval of the median (`ci_level` says its coverage, at least 95% from 6 samples)."""
        low, high, _ = median_interval(self._sorted)
        return low, high

    @property
    def ci_level(self) -> float:
        return median_interval(self._sorted)[2]

    @property
    def total(self) -> float:
        """Seconds the measured calls took together."""
        return sum(self._sorted) * self.number

    @property
    def gflops(self) -> float | None:
        """`flops` per median call, in GFLOP/s (None without flops=)."""
        return None if self.flops is None else self.flops / self.median / 1e9

    @property
    def gbps(self) -> float | None:
        """`bytes` per median call, in GB/s (None without bytes=)."""
        return None if self.bytes is None else self.bytes / self.median / 1e9

    def to_dict(self) -> dict:
        """Everything as plain numbers, for JSON."""
        low, high, level = median_interval(self._sorted)
        return {
            "name": self.name,
            "median": self.median,
            "min": self.min,
            "max": self.max,
            "mean": self.mean,
            "stdev": self.stdev,
            "q1": self.q1,
            "q3": self.q3,
            "ci_low": low,
            "ci_high": high,
            "ci_level": level,
            "number": self.number,
            "repeats": self.repeats,
            "overhead": self.overhead,
            "flops": self.flops,
            "bytes": self.bytes,
            "gflops": self.gflops,
            "gbps": self.gbps,
            "clock": self.clock,
            "samples": list(self.samples),
            "samples_by_clock": {c: list(v) for c, v in self.by_clock.items()},
        }

    def __str__(self) -> str:
        low, high, level = median_interval(self._sorted)
        f = format_seconds
        text = (
            f"{self.name}: median {f(self.median)} per call of {CLOCK_NAMES[self.clock]} "
            f"({level:.0%} interval {f(low)} to {f(high)}), "
            f"min {f(self.min)}, mean {f(self.mean)}, stdev {f(self.stdev)}, IQR {f(self.iqr)}; "
            f"{self.repeats} samples of {self.number} call{'s' * (self.number != 1)}; "
            f"loop overhead {f(self.overhead)} per call"
        )
        if self.gflops is not None:
            text += f"; {self.gflops:.3g} GFLOP/s"
        if self.gbps is not None:
            text += f"; {self.gbps:.3g} GB/s"
        return text

    def __repr__(self) -> str:
        return f"<BenchmarkResult {self}>"
