"""Timing, the machine's description, table rendering and the figures files of the side-by-side
benchmarks."""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import os
import platform
import statistics
import sys
import time
import timeit
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What --write-figures writes: one Markdown file per script, which the docs pages include
# (pymdownx.snippets), so that every figure is typed by this code only.
FIGURES = ROOT / "docs" / "figures"


@dataclass(frozen=True)
class Settings:
    """How long and how often each timed loop runs."""

    repeat_ns: int  # wall time one repeat of one loop aims at
    repeats: int
    gc_enabled: bool = True


class Loop:
    """A statement timed like timeit does it: `names` are locals of the timing function.

    timeit switches the garbage collector off while it times; real code runs with it on,
    and upstream's per-call classes are cyclic garbage only the collector frees, so by
    default the collector stays on (the documented `gc.enable()` setup).
    """

    def __init__(self, stmt: str, names: dict, gc_enabled: bool = True):
        setup = [f"{name} = _names_[{name!r}]" for name in names]
        if gc_enabled:
            setup.append("import gc; gc.enable()")
        self.stmt = stmt
        self._timer = timeit.Timer(
            stmt, "\n".join(setup) or "pass", timer=time.perf_counter_ns, globals={"_names_": names}
        )

    def run(self, number: int) -> int:
        """Nanoseconds for `number` executions of the statement."""
        return self._timer.timeit(number)


def calibrate(loop: Loop, target_ns: int) -> int:
    """How many executions make one repeat take about `target_ns` (also warms the loop up)."""
    number = 1
    while True:
        elapsed = loop.run(number)
        if elapsed >= target_ns // 5 or number >= 1 << 30:
            return max(1, round(number * target_ns / max(elapsed, 1)))
        number *= 10 if elapsed < target_ns // 100 else 2


def measure(loops: dict[str, Loop], settings: Settings) -> dict[str, list[float]]:
    """Per-execution nanoseconds of each loop, one sample per repeat, the loops interleaved."""
    numbers = {key: calibrate(loop, settings.repeat_ns) for key, loop in loops.items()}
    samples: dict[str, list[float]] = {key: [] for key in loops}
    for _ in range(settings.repeats):
        for key, loop in loops.items():  # A B A B ...: machine noise hits every loop alike
            samples[key].append(loop.run(numbers[key]) / numbers[key])
    return samples


@dataclass
class Timing:
    """Median and best of per-call times, in nanoseconds."""

    median: float
    best: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Timing:
        return cls(statistics.median(samples), min(samples))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith(("model name", "Model", "Hardware")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def distribution_versions(package: str) -> str:
    """'dist version' of every installed distribution that provides the import `package`."""
    dists = importlib.metadata.packages_distributions().get(package, [])
    return ", ".join(f"{d} {importlib.metadata.version(d)}" for d in sorted(set(dists))) or "unknown"


def machine(extra: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """What the numbers were measured on, as (label, value) lines."""
    import numpy

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    lines = [
        ("machine", platform.platform()),
        ("CPU", f"{cpu_model()}, {os.cpu_count()} cores ({usable} usable)"),
        ("python", f"{platform.python_implementation()} {platform.python_version()}"),
        ("numpy", numpy.__version__),
        ("MLIR bindings", distribution_versions("mlir")),
    ]
    try:
        import psutil

        lines.append(("memory", f"{psutil.virtual_memory().total / 2**30:.1f} GiB"))
    except ImportError:
        pass
    return lines + list(extra)


def write_machine(markdown: bool, extra: Sequence[tuple[str, str]] = ()) -> None:
    """Writes what the numbers were measured on (a list in Markdown, its own section), then a blank line."""
    with section("machine", markdown):
        for label, value in machine(extra):
            write(f"- {label}: {value}" if markdown else f"{label:>14}: {value}")
    write()


def render(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    markdown: bool,
    right: Callable[[int], bool] = lambda column: column > 0,
) -> str:
    """A table as Markdown or as aligned plain text; `right(i)` right-aligns column i."""
    if markdown:  # `memref<?xf32>` would read as an HTML tag
        rows = [[c.replace("<", "\\<") for c in r] for r in rows]
        rule = ["---:" if right(i) else "---" for i in range(len(headers))]
        return "\n".join("| " + " | ".join(cells) + " |" for cells in [headers, rule, *rows])
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells):
        return "  ".join(c.rjust(w) if right(i) else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def microseconds(ns: float) -> str:
    """A per-call time in µs with three significant digits."""
    us = ns / 1000
    return f"{us:.3g}" if us < 1000 else f"{us:,.0f}"


def times(x: float) -> str:
    return f"{x:.3g}x" if x < 100 else f"{x:,.0f}x"


# The lines write() printed since write_figures() started recording, or None.
_recorded: list[str] | None = None


def write(text: str = "") -> None:
    """Prints a line of the results (and records it for --write-figures)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    if _recorded is not None:
        _recorded.append(text)


@contextmanager
def section(name: str, markdown: bool) -> Iterator[None]:
    """What is written inside is a named section of the Markdown output: a docs page includes
    it alone (pymdownx.snippets: `--8<-- "docs/figures/<script>.md:<name>"`)."""
    if markdown:
        write(f"<!-- --8<-- [start:{name}] -->")
    yield
    if markdown:
        write(f"<!-- --8<-- [end:{name}] -->")


def add_figures_option(parser: argparse.ArgumentParser) -> None:
    """--write-figures: the script's --markdown output also goes to docs/figures/<script>.md."""
    parser.add_argument(
        "--write-figures",
        action="store_true",
        help="also write the tables, in Markdown, into docs/figures/<script>.md, which the docs "
        "include (implies --markdown; written only when the run succeeds)",
    )


def figures_header(
    command: str, quick: bool, when: datetime.datetime, quick_means: str = "short loops, fewer repeats"
) -> str:
    """The first line of a figures file: which command wrote it, and when."""
    kind = f"a quick run (`--quick`: {quick_means})" if quick else "a full run"
    return (
        f"*Written by `{command}` on {when:%Y-%m-%d %H:%M} UTC, {kind}. A generated file: "
        "run the command again instead of editing it.*"
    )


def write_figures(
    args: argparse.Namespace,
    script: str,
    argv: Sequence[str] | None,
    run: Callable[[], int],
    quick_means: str = "short loops, fewer repeats",
) -> int:
    """Runs `run` (which prints with write()); with --write-figures, in Markdown, and writes what it
    printed to docs/figures/<script>.md when it returned 0 (its header says what --quick means
    there). Returns its exit status."""
    global _recorded
    if not args.write_figures:
        return run()
    args.markdown = True
    command = " ".join(["python", f"benchmarks/{script}.py", *(sys.argv[1:] if argv is None else argv)])
    _recorded = []
    try:
        status = run()
    finally:
        lines, _recorded = _recorded, None
    target = FIGURES / f"{script}.md"
    if status != 0:  # the last good figures stay; a failed run's would replace them with errors
        print(f"{script}: the run failed (exit status {status}): {target} not written", file=sys.stderr)
        return status
    when = datetime.datetime.now(datetime.timezone.utc)
    header = figures_header(command, getattr(args, "quick", False), when, quick_means)
    FIGURES.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join([header, "", *lines]).rstrip("\n") + "\n", encoding="utf-8")
    shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    print(f"{script}: wrote {shown}", file=sys.stderr)
    return status
