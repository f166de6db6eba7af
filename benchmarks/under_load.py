#!/usr/bin/env python3
"""The harness's verdicts under load: speed claims and the lit suite, with busy processes beside
them, and idle, side by side in one run. It prints how often each verdict was the right one.

    python benchmarks/under_load.py                 # 10 claim runs and 5 lit runs, loaded and idle (~6 min)
    python benchmarks/under_load.py --quick         # 2 and 1: checks that it runs
    python benchmarks/under_load.py --quick --only loaded --lit-filter perf_
                                                    # the loaded side, the suite's perf tests (CI's load route)
    python benchmarks/under_load.py --busy 3        # three busy processes instead of two
    python benchmarks/under_load.py --markdown      # the table in Markdown
    python benchmarks/under_load.py --write-figures # and into docs/figures/under_load.md (docs include it)

1. check_faster on @chain of mlir_inputs/bench_kernels.mlir: a true claim (4N steps against N,
   claimed 3x) must pass, and a false one (N against N, claimed 2x) must fail, saying "measured
   false" (or "inconclusive"; either is a failure, the script counts which).
2. The lit suite, performance tests included (`lit -s lit_tests`): every run must pass.
   `--lit-filter REGEX` runs the tests whose path matches it (lit's `--filter`): `perf_`, the
   performance tests alone, is the part whose verdicts load could change.

"Loaded" runs `--busy` processes that spin on the CPU (by default 2, on a 2-core machine a load
average of 3 to 4 with the work itself); "idle" runs without them. The load average is printed
as the kernel saw it. Nothing here asserts: the exit status is 0 when every verdict was right.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
try:
    import memref_runtime  # noqa: F401
except ImportError:  # not pip-installed: use the source tree
    sys.path.insert(0, str(ROOT / "runtime"))

import numpy as np
from harness import add_figures_option, render, write, write_figures, write_machine

from memref_runtime import JitModule
from memref_runtime.testing import InconclusiveClaim, check_faster

KERNELS = ROOT / "mlir_inputs" / "bench_kernels.mlir"
SPIN = "while True: pass"


@contextmanager
def busy(processes: int):
    """`processes` interpreters spinning on the CPU while the block runs."""
    spinning = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(processes)]
    try:
        time.sleep(1.0 if processes else 0)  # let the load average see them
        yield
    finally:
        for p in spinning:
            p.kill()
            p.wait()


def claim_verdicts(runs: int) -> dict:
    """How each claim ended in `runs` runs: passed, measured false, inconclusive."""
    jit = JitModule(KERNELS, opt_level=2, runtime_verification=False)
    state = np.zeros(1)
    options = dict(repeats=5, min_time=0.01, warmup=0.005)

    def chain(n):
        return lambda: jit.chain.benchmark(n, state, **options)

    counts = {"true 3x": {}, "false 2x": {}}
    seconds = {"true 3x": [], "false 2x": []}
    for _ in range(runs):
        for key, fast, slow, at_least in (("true 3x", 1000, 4000, 3), ("false 2x", 1000, 1000, 2)):
            started = time.perf_counter()
            try:
                with open(os.devnull, "w") as quiet, redirect_stderr(quiet):
                    check_faster(key, chain(fast), chain(slow), at_least=at_least)
                verdict = "passed"
            except InconclusiveClaim:
                verdict = "inconclusive"
            except AssertionError:
                verdict = "measured false"
            counts[key][verdict] = counts[key].get(verdict, 0) + 1
            seconds[key].append(time.perf_counter() - started)
    return {key: (counts[key], max(seconds[key])) for key in counts}


@contextmanager
def redirect_stderr(stream):
    saved, sys.stderr = sys.stderr, stream
    try:
        yield
    finally:
        sys.stderr = saved


def lit_runs(runs: int, only: str | None = None) -> list:
    """(passed, failed, seconds) of each of `runs` runs of the lit suite (of its tests whose path
    matches `only`, lit's --filter)."""
    lit = shutil.which("lit", path=os.path.dirname(sys.executable)) or shutil.which("lit")
    if lit is None:
        raise SystemExit("under_load.py: lit is not installed (pip install -e '.[test]')")
    got = []
    for _ in range(runs):
        started = time.perf_counter()
        command = [lit, "-s", str(ROOT / "lit_tests")] + (["--filter", only] if only else [])
        out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        passed = re.search(r"Passed\s*:\s*(\d+)", out.stdout)
        failed = re.search(r"Failed\s*:\s*(\d+)", out.stdout)
        n_passed, n_failed = int(passed[1]) if passed else 0, int(failed[1]) if failed else 0
        if out.returncode != 0 or n_passed == 0:  # a run that passed nothing (a filter that matched none) is wrong too
            n_failed = max(n_failed, 1)
            print(out.stdout[-3000:] + out.stderr[-2000:], file=sys.stderr)
        got.append((n_passed, n_failed, time.perf_counter() - started))
    return got


def describe(counts: dict, want: str) -> str:
    right = counts.get(want, 0)
    total = sum(counts.values())
    other = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()) if k != want)
    return f"{right} of {total} {want}" + (f" ({other})" if other else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 claim runs and 1 lit run per condition")
    parser.add_argument("--only", choices=("loaded", "idle"), help="one condition (default both, side by side)")
    parser.add_argument("--busy", type=int, default=2, help="busy processes in the loaded condition (default 2)")
    parser.add_argument("--claims", type=int, help="runs of each claim per condition (default 10)")
    parser.add_argument("--lit", type=int, help="runs of the lit suite per condition (default 5)")
    parser.add_argument("--lit-filter", metavar="REGEX", help="only the lit tests whose path matches (lit's --filter)")
    parser.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    add_figures_option(parser)
    args = parser.parse_args(argv)
    return write_figures(args, "under_load", argv, lambda: report(args))


def report(args: argparse.Namespace) -> int:
    """Runs both conditions and prints the table; 1 when a verdict was wrong."""
    claims = args.claims or (2 if args.quick else 10)
    lits = args.lit if args.lit is not None else (1 if args.quick else 5)
    write_machine(args.markdown)
    suite = f"the lit tests matching {args.lit_filter!r}" if args.lit_filter else "the lit suite"
    write(f"Loaded: {args.busy} busy processes; {claims} runs of each claim, {lits} of {suite}, per condition.")
    write()
    rows = []
    right = True
    conditions = [c for c in (("loaded", args.busy), ("idle", 0)) if args.only in (None, c[0])]
    for condition, processes in conditions:
        with busy(processes):
            verdicts = claim_verdicts(claims)
            runs = lit_runs(lits, args.lit_filter)
            load = os.getloadavg()[0]
        (true_counts, true_s), (false_counts, false_s) = verdicts["true 3x"], verdicts["false 2x"]
        lit_passed = sum(1 for _, failed, _ in runs if failed == 0)
        tests = max((p for p, *_ in runs), default=0)
        slowest = max((s for *_, s in runs), default=0)
        lit_text = f"{lit_passed} of {len(runs)}" + (f" ({tests} tests, {slowest:.0f} s max)" if runs else "")
        rows.append(
            [
                condition,
                f"{load:.1f}",
                describe(true_counts, "passed") + f" ({true_s:.1f} s max)",
                describe(false_counts, "measured false") + f" ({false_s:.1f} s max)",
                lit_text,
            ]
        )
        right &= true_counts.get("passed", 0) == claims and not false_counts.get("passed") and lit_passed == len(runs)
    write(
        render(
            ["condition", "load", "true 3x claim", "false 2x claim", "lit suite runs passed"],
            rows,
            args.markdown,
            right=lambda i: i == 1,
        )
    )
    write()
    write("every verdict right" if right else "SOME VERDICTS WRONG")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())
