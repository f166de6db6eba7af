"""memref-bench --plot: time (or GFLOP/s, GB/s) against size, one line per opt level.

matplotlib is an optional extra (`pip install 'memref-runtime[plot]'`); `require()` says so
before anything is measured.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXTRA_HINT = "pip install 'memref-runtime[plot]' (or pip install matplotlib)"


def require() -> Any:
    """matplotlib.pyplot with a file-only backend, or ImportError naming the extra."""
    try:
        import matplotlib
    except ImportError as e:
        raise ImportError(
            f"--plot needs matplotlib, which is not installed ({e}); install the `plot` extra: {EXTRA_HINT}"
        ) from e
    matplotlib.use("Agg")  # no display needed, and none is opened
    import matplotlib.pyplot as plt

    return plt


def _metric(rows: list) -> tuple[str, Callable[[Any], float], Callable[[Any], tuple[float, float]]]:
    """(axis label, value of a row, (low, high) of a row) of what the plot shows."""
    first = rows[0]["result"]
    if first.gflops is not None:
        return (
            "GFLOP/s (median call; bars: its interval)",
            lambda r: r.gflops,
            lambda r: (r.flops / r.ci[1] / 1e9, r.flops / r.ci[0] / 1e9),
        )
    if first.gbps is not None:
        return (
            "GB/s (median call; bars: its interval)",
            lambda r: r.gbps,
            lambda r: (r.bytes / r.ci[1] / 1e9, r.bytes / r.ci[0] / 1e9),
        )
    return "time per call, s (median; bars: its interval)", lambda r: r.median, lambda r: r.ci


def write_plot(path: str, title: str, rows: list) -> None:
    """Writes the plot of `rows` (dicts with size, opt_level, result) to `path` (.png, .svg, .pdf)."""
    plt = require()
    label, value, interval = _metric(rows)
    levels = sorted({r["opt_level"] for r in rows})
    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=120)
    sized = rows[0]["size"] is not None
    for position, level in enumerate(levels):
        mine = [r for r in rows if r["opt_level"] == level]
        ys = [value(r["result"]) for r in mine]
        spans = [interval(r["result"]) for r in mine]
        errors = [[y - lo for y, (lo, _) in zip(ys, spans)], [hi - y for y, (_, hi) in zip(ys, spans)]]
        if sized:
            xs = [r["size"] for r in mine]
            axes.errorbar(xs, ys, yerr=errors, marker="o", capsize=3, label=f"-O{level}")
        else:
            axes.bar([position], ys, yerr=errors, capsize=4, label=f"-O{level}")
    if sized:
        axes.set_xscale("log", base=2)
        sizes = sorted({r["size"] for r in rows})
        axes.set_xticks(sizes, [str(s) for s in sizes])
        axes.set_xlabel("size N (every dynamic dimension)")
    else:
        axes.set_xticks(range(len(levels)), [f"-O{level}" for level in levels])
        axes.set_xlabel("opt level")
    if label.startswith("time"):
        axes.set_yscale("log")
    else:
        axes.set_ylim(bottom=0)
    axes.set_ylabel(label)
    axes.set_title(title)
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(title="opt level")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
