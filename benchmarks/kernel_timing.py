#!/usr/bin/env python3
"""JitFunction.benchmark's own figures, side by side in one run: what it measures and what a
Python-level timing loop measures instead, a kernel of known cost, and the margins of the
speed claims in lit_tests/perf_*.py.

    python benchmarks/kernel_timing.py                   # the full run (~10 s)
    python benchmarks/kernel_timing.py --quick           # short: checks that it runs, asserts nothing about time
    python benchmarks/kernel_timing.py --markdown        # the tables in Markdown
    python benchmarks/kernel_timing.py --write-figures   # and into docs/figures/kernel_timing.md (docs include it)

1. An empty kernel: benchmark()'s per-call median against a Python-level call of the same
   JitFunction (`jit.empty()`) and of a bound call (`jit.empty.bind()()`), timed as timeit
   does, in interleaved rounds. Target: benchmark's median <= 1/5 of the Python call's.
2. @chain of bench_kernels.mlir runs N dependent steps: N against 4N through compare(),
   whose ratio should be 4 with 4 inside its interval.
3. The claims of the lit performance tests, measured with compare() as the tests time them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
try:
    import memref_runtime
except ImportError:  # not pip-installed: use the source tree
    sys.path.insert(0, str(ROOT / "runtime"))
    import memref_runtime  # noqa: F401

from harness import (
    Loop,
    Settings,
    Timing,
    add_figures_option,
    measure,
    render,
    section,
    times,
    write,
    write_figures,
    write_machine,
)

from memref_runtime import JitModule
from memref_runtime.jit.benchmark_result import format_seconds
from memref_runtime.testing import compare

KERNELS = ROOT / "mlir_inputs" / "bench_kernels.mlir"


def no_python_in_the_loop(rounds: int, settings: Settings, markdown: bool) -> str:
    jit = JitModule(KERNELS)
    bound = jit.empty.bind()
    loops = {"call": Loop("f()", {"f": jit.empty}), "bound": Loop("b()", {"b": bound})}
    python = {key: [] for key in loops}
    native = []
    for _ in range(rounds):  # Python loops and the native loop interleaved, round by round
        for key, samples in measure(loops, settings).items():
            python[key] += [s / 1e9 for s in samples]
        native.append(jit.empty.benchmark(repeats=settings.repeats, min_time=settings.repeat_ns * 1e-9 * 5))
    bench = Timing.of([r.median for r in native])
    rows = []
    for key, label in (("call", "jit.empty()"), ("bound", "jit.empty.bind()() (packed once)")):
        py = Timing.of(python[key])
        ratio = bench.median / py.median
        rows.append(
            [
                f"empty kernel: benchmark() vs {label}",
                format_seconds(py.median),
                format_seconds(py.best),
                format_seconds(bench.median),
                format_seconds(bench.best),
                f"1/{py.median / bench.median:,.0f}",
                "<= 1/5" if key == "call" else "",
                ("yes" if ratio <= 0.2 else "no") if key == "call" else "",
            ]
        )
    overhead = format_seconds(native[-1].overhead)
    table = render(
        [
            "figure (per call)",
            "Python median",
            "Python best",
            "benchmark median",
            "benchmark best",
            "benchmark / Python",
            "target",
            "met?",
        ],
        rows,
        markdown,
    )
    return table + f"\n\nloop overhead (the empty kernel through the native loop, included above): {overhead} per call"


def known_ratio(rounds: int, sizes, options: dict, markdown: bool) -> str:
    jit = JitModule(KERNELS)
    state = np.zeros(1)
    rows = []
    for n in sizes:
        c = compare(
            lambda n=n: jit.chain.benchmark(n, state, **options),
            lambda n=n: jit.chain.benchmark(4 * n, state, **options),
            rounds=rounds,
        )
        # Below ~1000 steps the call's fixed cost (~2 ns: the call, the state's load and store)
        # shows: (4 t + f) / (t + f) < 4. Those rows have no target.
        target = n >= 1000
        rows.append(
            [
                f"@chain {4 * n} steps / {n} steps",
                format_seconds(c.median_a),
                format_seconds(c.median_b),
                times(c.ratio),
                f"{times(c.low)} to {times(c.high)}",
                "4x in the interval" if target else "",
                ("yes" if c.low <= 4 <= c.high else "no") if target else "",
            ]
        )
    return render(["figure", "N steps", "4N steps", "ratio", "95% interval", "target", "met?"], rows, markdown)


def claims(rounds: int, options: dict, markdown: bool) -> str:
    n = 128
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    o0, o3 = (JitModule(KERNELS, opt_level=level, runtime_verification=False) for level in (0, 3))
    x = rng.random(4096, dtype=np.float32)
    y = np.zeros_like(x)
    alpha = np.float32(0.5)
    rows = []
    cases = [
        (
            "perf_opt_level_matmul: -O3 vs -O0, matmul 128x128",
            2,
            lambda: o3.matmul.benchmark(a, b, c, **options),
            lambda: o0.matmul.benchmark(a, b, c, **options),
        )
    ]
    for level, claim in ((0, 2), (3, 0.5)):  # as lit_tests/perf_vector_axpy.py claims
        jit = JitModule(KERNELS, opt_level=level, runtime_verification=False)
        cases.append(
            (
                f"perf_vector_axpy: vector<8xf32> vs scalar at -O{level}",
                claim,
                lambda jit=jit: jit.axpy_vector.benchmark(alpha, x, y, **options),
                lambda jit=jit: jit.axpy.benchmark(alpha, x, y, **options),
            )
        )
    for label, claim, fast, slow in cases:
        r = compare(fast, slow, rounds=rounds)
        rows.append(
            [label, times(r.ratio), f"{times(r.low)} to {times(r.high)}", f">= {claim:g}x", f"{r.low / claim:.2f}x"]
        )
    return render(["claim", "measured", "95% interval", "claimed", "interval low / claim"], rows, markdown)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short loops (CI): checks that it runs")
    parser.add_argument("--markdown", action="store_true")
    add_figures_option(parser)
    args = parser.parse_args(argv)
    return write_figures(args, "kernel_timing", argv, lambda: report(args))


def report(args: argparse.Namespace) -> int:
    """Measures the three tables and prints them, each a section of the Markdown output."""
    settings = Settings(repeat_ns=2_000_000, repeats=5) if args.quick else Settings(repeat_ns=20_000_000, repeats=11)
    rounds = 2 if args.quick else 7
    options = dict(repeats=5, min_time=0.01, warmup=0.005)
    write_machine(args.markdown)
    tables = (
        ("loop", lambda: no_python_in_the_loop(rounds, settings, args.markdown)),
        (
            "chain",
            lambda: known_ratio(rounds, (100, 1000, 10000) if not args.quick else (1000,), options, args.markdown),
        ),
        ("claims", lambda: claims(rounds, options, args.markdown)),
    )
    for name, table in tables:
        with section(name, args.markdown):
            write(table())
        write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
