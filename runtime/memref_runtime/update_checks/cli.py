"""The command line of memref-update-checks (also `python -m memref_runtime.update_checks`)."""

from __future__ import annotations

import argparse
import sys

from ..settings import seconds_or_none
from .running import DEFAULT_TIMEOUT
from .update import ERROR_STATUSES, STATUSES, headline, report, update_files


def _parse_param(text: str) -> tuple[str, str]:
    name, _, value = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name, value


def _parse_timeout(text: str) -> float:
    seconds = seconds_or_none(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0 (0: no limit), got {text!r}")
    return seconds


def _timeout_supported(timeout: float) -> str | None:
    """Why lit cannot kill a process tree here (psutil missing), else None."""
    import lit.util

    supported, why = lit.util.killProcessAndChildrenIsSupported()
    return None if not timeout or supported else why


def main(argv: list[str] | None = None) -> int:
    """Runs memref-update-checks; returns its exit status."""
    parser = argparse.ArgumentParser(
        prog="memref-update-checks",
        description="Generate or refresh the CHECK lines of lit tests from what they print. "
        "A test whose run fails (non-zero exit, a signal, a Python traceback or an "
        "'Exception ignored' report in its output) or runs out of time is left untouched.",
        epilog="Exit status: 0 done (or up to date), 1 --check found a file to update, 2 a file was not "
        "updated because of an error, a failed run or a timeout.",
    )
    parser.add_argument("paths", nargs="+", metavar="FILE", help="lit test files, or folders of them")
    parser.add_argument(
        "--check",
        action="store_true",
        help="change nothing; print what would change and exit 1 if a file's CHECK lines are out of date",
    )
    parser.add_argument(
        "-D",
        "--param",
        action="append",
        type=_parse_param,
        default=[],
        metavar="NAME=VALUE",
        help="a lit parameter, as `lit -D` takes it (e.g. mlir_python=torch_mlir)",
    )
    parser.add_argument(
        "--timeout",
        type=_parse_timeout,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit of each RUN line (default {DEFAULT_TIMEOUT:g}; 0: none); a test that "
        "runs out of time has its process tree killed and is left untouched",
    )
    args = parser.parse_args(argv)
    problem = _timeout_supported(args.timeout)
    if problem:
        parser.error(f"--timeout {args.timeout:g}: {problem} (or pass --timeout 0)")

    results = update_files(args.paths, dict(args.param), check=args.check, timeout=args.timeout)
    for r in results:
        for warning in r.warnings:
            print(f"warning: {r.path}: {warning}", file=sys.stderr)
        if r.status in ERROR_STATUSES:
            print(headline(r), file=sys.stderr)
        elif r.status in ("updated", "out-of-date"):
            print(headline(r))
            sys.stdout.write(report(r))
            if r.status == "out-of-date":
                print(f"out of date: {r.path} (run memref-update-checks {r.path})")
        elif r.status != "unchanged" or not args.check:
            print(headline(r))
        sys.stdout.flush()  # in order with the errors on stderr
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    print("memref-update-checks: " + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    if any(counts[s] for s in ERROR_STATUSES):
        return 2
    return 1 if counts["out-of-date"] else 0
