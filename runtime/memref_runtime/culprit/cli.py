"""The command lines: memref-bisect and memref-reduce, in mlir-reduce's conventions (`INPUT.mlir`,
`--test=SCRIPT`, repeatable `--test-arg=ARG`, the candidate file appended as the script's last
argument, a non-zero exit status meaning "still failing", `-o OUT`)."""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from ..settings import parse_opt_level, seconds_or_none
from .checks import DEFAULT_TIMEOUT


def _named_callable(text: str, what: str):
    """`module:attribute` -> the object (the module imported by name, from sys.path)."""
    module, _, name = text.partition(":")
    if not module or not name:
        raise argparse.ArgumentTypeError(f"{what}: expected MODULE:NAME, got {text!r}")
    try:
        value = importlib.import_module(module)
        for part in name.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as e:
        raise argparse.ArgumentTypeError(f"{what} {text!r}: {e}") from e
    if not callable(value):
        raise argparse.ArgumentTypeError(f"{what} {text!r}: not callable")
    return value


def _python_pass(text: str) -> tuple[str, object]:
    name, _, target = text.partition("=")
    if not name or not target:
        raise argparse.ArgumentTypeError(f"--python-pass: expected NAME=MODULE:FUNCTION, got {text!r}")
    return name, _named_callable(target, "--python-pass")


def _opt_level(text: str) -> int:
    try:
        return parse_opt_level(text, "--opt-level")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _seconds(text: str) -> float:
    value = seconds_or_none(text)
    if value is None:
        raise argparse.ArgumentTypeError(f"expected seconds >= 0 (0: no limit), got {text!r}")
    return value


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="INPUT.mlir", help="the module")
    parser.add_argument(
        "--test",
        metavar="SCRIPT",
        help="the interestingness test: run with its --test-arg "
        "arguments and the candidate file last; a non-zero exit status means still failing",
    )
    parser.add_argument("--test-arg", action="append", default=[], metavar="ARG", help="an argument of SCRIPT")
    parser.add_argument("-o", dest="output", metavar="OUT", help="where to write the result")
    parser.add_argument(
        "--opt-level",
        type=_opt_level,
        default=None,
        metavar="N",
        help="the JIT's opt level for the candidates (default: the suite's, 2)",
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"time limit of one check run (default {DEFAULT_TIMEOUT:g}; 0: none)",
    )


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def bisect_main(argv: list[str] | None = None) -> int:
    """memref-bisect: prints `culprit: <pass>` (exit 0) or `no culprit: <why>` (exit 1)."""
    parser = argparse.ArgumentParser(
        prog="memref-bisect",
        description="Find the pass of a pipeline, or else the LLVM optimization, after which the test says "
        "the module fails. The candidate handed to SCRIPT is the module lowered to the LLVM dialect "
        "(the first passes of the pipeline, then the default lowering); the environment says its "
        "JIT opt level (MEMREF_RUNTIME_OPT_LEVEL, which JitModule follows).",
        epilog="Exit status: 0 a culprit was found, 1 none was, 2 a usage error.",
    )
    _common(parser)
    parser.add_argument("--pass-pipeline", required=True, metavar="PIPELINE", help="builtin.module(...)")
    parser.add_argument(
        "--python-pass",
        action="append",
        type=_python_pass,
        default=[],
        metavar="NAME=MODULE:FUNCTION",
        help="a Python pass (run(op, pass_)) that the pipeline names NAME",
    )
    parser.add_argument("--no-llvm", action="store_true", help="do not bisect LLVM's optimizations")
    args = parser.parse_args(argv)
    if not args.test:
        parser.error("--test=SCRIPT is required")
    if not os.path.isfile(args.input):
        parser.error(f"INPUT.mlir: no such file: {args.input}")
    from .bisect import bisect_pipeline
    from .pipeline import PipelineError

    try:
        result = bisect_pipeline(
            args.input,
            args.pass_pipeline,
            args.test,
            test_args=args.test_arg,
            opt_level=args.opt_level,
            python_passes=dict(args.python_pass),
            llvm=not args.no_llvm,
            timeout=args.timeout,
        )
    except (PipelineError, ValueError, FileNotFoundError) as e:
        parser.error(str(e))
    report = result.report()
    if args.output and result.before is not None:
        _write(args.output, result.before)
        report = report.replace(" OUT", " " + args.output) + f"\n  wrote the culprit's input to {args.output}"
    print(report, flush=True)
    return 0 if result.found else 1


def _against(args, parser):
    """The Against check of --function/--reference/--inputs, or None."""
    if not (args.function or args.reference):
        return None
    if not (args.function and args.reference):
        parser.error("--function and --reference go together")
    from .typed_call import Against

    inputs = None
    if args.inputs:
        import numpy as np

        with np.load(args.inputs) as data:
            inputs = [data[name] for name in data.files]
    return Against(args.function, args.reference, inputs, rtol=args.rtol, atol=args.atol)


def _lit_param(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"-D: expected NAME=VALUE, got {text!r}")
    return name, value if eq else ""


def _test_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "from a failing lit test (INPUT is the test, and neither --test nor --function is given)"
    )
    group.add_argument(
        "--module",
        type=int,
        metavar="N",
        help="the test's N-th JitModule (default: the one whose function was first called last; the report lists them)",
    )
    group.add_argument(
        "-D",
        dest="params",
        action="append",
        type=_lit_param,
        default=[],
        metavar="NAME=VALUE",
        help="a lit parameter, as lit -D takes it",
    )
    group.add_argument("--no-bisect", action="store_true", help="only reduce")
    group.add_argument("--no-llvm", action="store_true", help="do not bisect LLVM's optimizations")


def _from_test(args, parser) -> int:
    """memref-reduce TEST: bisect and reduce with the test as the check."""
    from .from_test import culprit_of_test

    try:
        found = culprit_of_test(
            args.input,
            module=args.module,
            params=dict(args.params),
            bisect=not args.no_bisect,
            llvm=not args.no_llvm,
            write_test=args.write_test,
            timeout=args.timeout,
            time_limit=args.time_limit,
        )
    except ValueError as e:
        print(f"memref-reduce: {e}", file=sys.stderr)
        return 1
    if args.output and found.reduction is not None:
        _write(args.output, found.reduction.module)
    print(found.report() + (f"\n  wrote the reduced module to {args.output}" if args.output else ""), flush=True)
    return 0


def _is_lit_test(path: str) -> bool:
    from .lit_run import LitTest

    try:
        LitTest(path)
    except (ValueError, ImportError):
        return False
    return True


def reduce_main(argv: list[str] | None = None) -> int:
    """memref-reduce: writes the reduced module (-o) and, if asked, a regression test."""
    parser = argparse.ArgumentParser(
        prog="memref-reduce",
        description="Shrink a module while the test keeps saying it fails the same way (the same exit status). "
        "The candidate handed to SCRIPT is a module like the input, not lowered. Instead of a "
        "script, --function and --reference compare a typed call with a Python reference, on "
        "--inputs or on the inputs check_against draws. INPUT may also be a failing test of a lit "
        "suite (lit_tests/foo.py, lit_tests/foo.mlir): then its module, pipeline and opt level are "
        "found from the test, which is the check: its pipeline is bisected, its module reduced, and "
        "the regression test written (default: beside the test, <name>_reduced.<ext>).",
        epilog="Exit status: 0 reduced, 1 the input does not fail, 2 a usage error.",
    )
    _common(parser)
    _test_options(parser)
    parser.add_argument(
        "--pass-pipeline",
        metavar="PIPELINE",
        help="how a Python check lowers the candidates (default: the runtime's default lowering)",
    )
    parser.add_argument("--function", metavar="NAME", help="the function a typed call calls")
    parser.add_argument(
        "--reference",
        type=lambda t: _named_callable(t, "--reference"),
        metavar="MODULE:FUNCTION",
        help="its reference, as check_against takes one",
    )
    parser.add_argument("--inputs", metavar="FILE.npz", help="the failing inputs, in order (numpy.savez)")
    parser.add_argument("--rtol", type=float, help="the comparison's relative tolerance")
    parser.add_argument("--atol", type=float, help="the comparison's absolute tolerance")
    parser.add_argument(
        "--write-test",
        metavar="FILE.py",
        help="write the regression test there: a lit test, or a pytest test when the name starts with test_",
    )
    parser.add_argument(
        "--time-limit",
        type=_seconds,
        default=300.0,
        metavar="SECONDS",
        help="stop reducing after this long (default 300)",
    )
    parser.add_argument("--mlir-reduce", action="store_true", help="run the wheel's mlir-reduce first")
    args = parser.parse_args(argv)
    check = _against(args, parser) or args.test
    if not check and os.path.isfile(args.input) and _is_lit_test(args.input):
        return _from_test(args, parser)
    if not check:
        parser.error("give --test=SCRIPT, or --function and --reference (or a failing test of a lit suite as INPUT)")
    if not os.path.isfile(args.input):
        parser.error(f"INPUT.mlir: no such file: {args.input}")
    from .reduction import reduce

    try:
        result = reduce(
            args.input,
            check,
            pipeline=args.pass_pipeline,
            opt_level=args.opt_level,
            test_args=args.test_arg if args.test else (),
            timeout=args.timeout,
            time_limit=args.time_limit,
            mlir_reduce=args.mlir_reduce,
            write_test=args.write_test,
        )
    except ValueError as e:
        print(f"memref-reduce: {e}", file=sys.stderr)
        return 1
    if args.output:
        _write(args.output, result.module)
    print(result.report() + (f"\n  wrote the reduced module to {args.output}" if args.output else ""))
    if not args.output:
        print(result.module)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(bisect_main())
