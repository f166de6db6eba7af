"""Performance tests run one at a time: a lit parallelism group of their own.

A test whose REQUIRES lines name `perf-tests` joins PERF_GROUP, which lit runs with one test at
a time (the other tests still run beside it, up to -j). Their claims are judged on CPU time,
which other processes do not stretch; two speed claims at once would still share caches and
memory bandwidth, and each would time the other's noise.
"""

from __future__ import annotations

import re
from typing import Any

PERF_GROUP = "memref-runtime-perf-tests"
PERF_FEATURE = "perf-tests"
_REQUIRES_PERF = re.compile(rb"^.*\bREQUIRES:.*\b" + PERF_FEATURE.encode() + rb"\b", re.M)


class PerfTestsAlone:
    """`config.parallelism_group`: PERF_GROUP for a performance test, else the group the
    configuration had before (a name, a callable, or None). A class, not a closure: lit pickles
    the configuration into its workers."""

    def __init__(self, previous: object = None) -> None:
        self.previous = previous

    def __call__(self, test: Any) -> object:
        try:
            with open(test.getSourcePath(), "rb") as f:
                if _REQUIRES_PERF.search(f.read()):
                    return PERF_GROUP
        except OSError:
            pass  # lit reports a missing file itself
        return self.previous(test) if callable(self.previous) else self.previous


def install(config: Any, lit_config: Any) -> None:
    """Puts the suite's performance tests in PERF_GROUP, one at a time."""
    lit_config.parallelism_groups.setdefault(PERF_GROUP, 1)
    if not isinstance(config.parallelism_group, PerfTestsAlone):
        config.parallelism_group = PerfTestsAlone(config.parallelism_group)
