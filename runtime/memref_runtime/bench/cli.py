"""memref-bench: time one function of an MLIR file at several sizes and opt levels.

    memref-bench mlir_inputs/bench_kernels.mlir -f matmul --sizes 64,128,256 --opt-levels 0,3 \
        --flops '2*n**3' --plot matmul.png

Each opt level compiles the file once (a JitModule); at each size the function gets random
inputs drawn from its signature (inputs.py) and JitFunction.benchmark times it. The table goes
to stdout; `--json` prints the same rows as JSON instead, `--plot FILE` also draws them.
"""

from __future__ import annotations

import argparse
import ast
import json
import operator
import os
import platform
import sys
from collections.abc import Callable
from typing import Any

from ..settings import seconds_or_none
from .inputs import InputError, make_inputs, takes_size

QUICK = {"warmup": 0.005, "repeats": 5, "min_time": 0.02}
_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.USub: operator.neg,
}


def _positive_ints(text: str, what: str, low: int) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    if not values or any(v < low for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated {what} (integers >= {low}), got {text!r}")
    return values


def _opt_levels(text: str) -> list[int]:
    levels = _positive_ints(text, "opt levels", 0)
    if any(level > 3 for level in levels):
        raise argparse.ArgumentTypeError(f"expected opt levels from 0 to 3, got {text!r}")
    return levels


def _seconds(text: str) -> float:
    value = seconds_or_none(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {text!r}")
    return value


def _expression(text: str):
    """A per-call count in terms of the size `n` (`2*n**3`), as a function of n."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        tree = None

    def evaluate(node, n):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id == "n":
            return n
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](evaluate(node.left, n), evaluate(node.right, n))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _OPERATORS:
            return _OPERATORS[type(node.op)](evaluate(node.operand, n))
        raise ValueError(node)

    try:
        evaluate(tree, 2)
    except (ValueError, TypeError, ZeroDivisionError, RecursionError):
        raise argparse.ArgumentTypeError(
            f"expected an arithmetic expression in n (+ - * / // ** and numbers), got {text!r}"
        ) from None
    return lambda n: evaluate(tree, n)


def _fixed_arg(text: str) -> tuple[int, object]:
    index, _, value = text.partition("=")
    try:
        i = int(index)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected INDEX=VALUE (a scalar argument's position), got {text!r}") from None
    lowered = value.strip().lower()
    if lowered in ("true", "false"):
        return i, lowered == "true"
    for parse in (int, float, complex):
        try:
            return i, parse(value)
        except ValueError:
            pass
    raise argparse.ArgumentTypeError(f"--arg {text}: expected a number or true/false after '='")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="memref-bench",
        description="Times a function of an MLIR file at each size and opt level, on random inputs drawn from "
        "its signature (every dynamic size and integer scalar is the size N), in a native loop.",
    )
    p.add_argument("file", help="the MLIR file")
    p.add_argument("-f", "--function", required=True, help="the public function to time")
    p.add_argument(
        "--sizes",
        type=lambda t: _positive_ints(t, "sizes", 0),
        help="comma-separated sizes N (needed when the signature has a dynamic size or an integer scalar)",
    )
    p.add_argument(
        "--opt-levels",
        type=_opt_levels,
        default=None,
        help="comma-separated opt levels (default: the suite's, MEMREF_RUNTIME_OPT_LEVEL, else 2)",
    )
    p.add_argument("--pipeline", help="the pass pipeline (default: JitModule's)")
    p.add_argument("--flops", type=_expression, help="floating-point operations per call, in n: adds GFLOP/s")
    p.add_argument("--bytes", type=_expression, help="bytes moved per call, in n: adds GB/s")
    p.add_argument(
        "--arg",
        type=_fixed_arg,
        action="append",
        default=[],
        metavar="INDEX=VALUE",
        help="fixes scalar argument INDEX (repeatable)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument("--repeats", type=lambda t: _positive_ints(t, "a count", 1)[0], help="samples per row (default 11)")
    p.add_argument("--min-time", type=_seconds, help="seconds of measurement per row (default 0.1)")
    p.add_argument("--warmup", type=_seconds, help="seconds of warm-up per row (default 0.02)")
    p.add_argument(
        "--clock",
        choices=("cpu", "thread", "process", "wall"),
        default="cpu",
        help="what the times count (default cpu: the thread's CPU time, or the process's where the kernel "
        "uses threads; wall: elapsed time, which a busy machine stretches)",
    )
    p.add_argument("--quick", action="store_true", help="short runs (5 samples, 0.02 s per row): a smoke test")
    p.add_argument("--json", action="store_true", help="print the rows as JSON instead of the table")
    p.add_argument("--plot", metavar="FILE", help="also draw time (or GFLOP/s, GB/s) against size to FILE (.png, .svg)")
    return p


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options = dict(QUICK) if args.quick else {}
    for name in ("repeats", "min_time", "warmup"):
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    return options


def measure(args: argparse.Namespace) -> tuple[list, str]:
    """Rows (dicts: size, opt_level, result) for every opt level and size, and the pipeline used."""
    from ..jit import JitFunction, JitModule
    from ..settings import resolve_opt_level

    rows: list[dict[str, Any]] = []
    pipeline = ""  # the first level's, since there is one at least
    for level in args.opt_levels or [resolve_opt_level(None)]:
        jit = JitModule(args.file, pipeline=args.pipeline, opt_level=level)
        pipeline = jit.pipeline
        if args.function not in jit.functions:
            raise InputError(
                f"{args.file} has no public function @{args.function}; it has: {', '.join(jit.functions) or '(none)'}"
            )
        sig = jit.signatures[args.function]
        function = JitFunction(jit, sig)  # not getattr: a function may be called like an attribute (`engine`)
        sized = takes_size(sig)
        if args.sizes is None and sized:
            raise InputError(f"@{args.function}({', '.join(s.mlir for s in sig.inputs)}) takes sizes: give --sizes")
        for size in args.sizes if sized else [None]:
            inputs = make_inputs(sig, size, seed=args.seed, fixed=dict(args.arg))
            counts: dict[str, Any] = {
                name: (None if getattr(args, name) is None or size is None else getattr(args, name)(size))
                for name in ("flops", "bytes")
            }
            result = function.benchmark(*inputs, **_options(args), **counts, clock=args.clock)
            rows.append({"size": size, "opt_level": level, "result": result})
    return rows, pipeline


def table(rows: list, title: str) -> str:
    """The rows as an aligned text table, with the speed-up against the first opt level (if several)."""
    from ..jit.benchmark_result import CLOCK_NAMES
    from ..jit.benchmark_result import format_seconds as f

    baseline: dict[int | None, float] = {}  # size -> the first level's median
    for row in rows:
        baseline.setdefault(row["size"], row["result"].median)
    first = rows[0]["result"]
    head = ["size", "opt", "median", f"{first.ci_level:.0%} interval", "min", "samples x calls"]
    extra = [("GFLOP/s", "gflops")] * (first.gflops is not None) + [("GB/s", "gbps")] * (first.gbps is not None)
    compared = len({row["opt_level"] for row in rows}) > 1  # the speed-up column needs two levels
    head += [h for h, _ in extra] + [f"vs -O{rows[0]['opt_level']}"] * compared
    body = []
    for row in rows:
        r = row["result"]
        low, high = r.ci
        line = [
            "-" if row["size"] is None else str(row["size"]),
            f"-O{row['opt_level']}",
            f(r.median),
            f"{f(low)} to {f(high)}",
            f(r.min),
            f"{r.repeats} x {r.number}",
        ]
        line += [f"{getattr(r, attr):.3g}" for _, attr in extra]
        line += [f"{baseline[row['size']] / r.median:.2f}x"] * compared
        body.append(line)
    widths = [max(len(c[i]) for c in [head, *body]) for i in range(len(head))]
    text = [title, "  ".join(h.ljust(w) for h, w in zip(head, widths))]
    text += [
        "  ".join(c.rjust(w) if i != 3 else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))) for line in body
    ]
    overhead, clocks = rows[0]["result"].overhead, sorted({CLOCK_NAMES[row["result"].clock] for row in rows})
    text.append(
        f"per call, in a native loop, of {' or '.join(clocks)}; the loop itself costs {f(overhead)} per call (included)"
    )
    return "\n".join(text)


def as_json(rows: list, args: argparse.Namespace, pipeline: str) -> str:
    from ..bindings import bindings

    return json.dumps(
        {
            "file": os.path.abspath(args.file),
            "function": args.function,
            "pipeline": pipeline,
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor() or platform.machine(),
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
                "bindings": bindings().name,
            },
            "rows": [{"size": r["size"], "opt_level": r["opt_level"], **r["result"].to_dict()} for r in rows],
        },
        indent=2,
    )


def main(argv: list[str] | None = None) -> int:
    """Runs memref-bench; returns its exit status (2: bad input, 1: the function failed)."""
    p = parser()
    args = p.parse_args(argv)
    if not os.path.isfile(args.file):
        p.error(f"{args.file}: no such file")
    if args.plot:
        from .plot import require

        try:
            require()
        except ImportError as e:
            p.error(str(e))
    try:
        rows, pipeline = measure(args)
    except InputError as e:
        p.error(str(e))
    except Exception as e:  # noqa: BLE001 - a parse, lowering, link or call error: say it, exit 1
        print(f"memref-bench: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    title = f"@{args.function} in {args.file}"
    print(as_json(rows, args, pipeline) if args.json else table(rows, title))
    if args.plot:
        from .plot import write_plot

        write_plot(args.plot, title, rows)
        print(f"memref-bench: wrote {args.plot}", file=sys.stderr)
    return 0
