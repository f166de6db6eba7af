"""The module a failing lit test JIT-compiles, its pipeline and opt level, found from the test.

- A `.py` test: the JitModules it made, as its processes recorded them during a run
  (jit/recording.py): by default the one whose function was first called last, which in a test
  whose cases stop at the first failure is the failing case's; `index` picks another of those
  listed. Candidates reach it through MEMREF_RUNTIME_CANDIDATE.
- A `.mlir` test: the file itself, in the first command of the failing RUN line that runs an
  `*-opt` tool on it (`mlir-opt %s ...`): its pipeline is that command's `--pass-pipeline`, or its
  pass flags in order (which flags are passes, and where mlir-opt nests them, the tool says:
  `--dump-pass-pipeline`); its opt level mlir-runner's `-O<n>` on the same line (0 without: no
  LLVM optimization then).
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import dataclass, field

from ..jit.recording import RECORDS
from ..process import failure_report


@dataclass
class FoundModule:
    """The module of a test, and what a candidate replaces."""

    source: str  # the module's text
    pipeline: str
    opt_level: int
    sha: str | None = None  # a .py test's JitModule (recording.py)
    function: str | None = None  # the function of it that was first called last
    origin: dict = field(default_factory=dict)  # "text": what the test gave (a literal of it), or "file": a path
    site: tuple | None = None  # .py: (file, line) of the test's code that made the JitModule
    step_line: int = 0  # .mlir: the RUN line, the command and the pass arguments a candidate replaces
    command: int = 0
    pass_args: tuple = ()
    runner: tuple | None = None  # .mlir: (command index, -O argument index or None) of mlir-runner
    notes: list[str] = field(default_factory=list)


def _records(folder: str) -> list[dict]:
    """The recording events of the Python process that failed (else of any), in order; in a
    folder without processes' records (a forked rerun of a pytest test), of the one that recorded."""
    processes = failure_report.processes(folder)
    paths = [
        os.path.join(folder, f"{p.get('pid')}{RECORDS}")
        for p in sorted(processes, key=lambda p: not failure_report.failed(p))
    ]
    paths += sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(RECORDS))
    for path in paths:
        if os.path.exists(path):
            with open(path) as f:
                return [ast.literal_eval(line) for line in f if line.strip()]
    return []


def from_python_test(folder: str, index: int | None) -> FoundModule:
    """The JitModule a `.py` test's run recorded in `folder` (ValueError when there is none)."""
    events = _records(folder)
    modules = {e["sha"]: e for e in events if e["event"] == "module"}
    if not modules:
        raise ValueError(
            "the test made no JitModule that memref-reduce could see (a test that builds its own "
            "ExecutionEngine cannot be given another module: use memref-reduce INPUT.mlir --test=...)"
        )
    order = list(modules)
    calls = [e for e in events if e["event"] == "call"]
    listing = [f"{i}: {_described(modules[sha])}" for i, sha in enumerate(order)]
    if index is not None:
        if not 0 <= index < len(order):
            raise ValueError(f"--module={index}: the test made {len(order)} JitModules:\n  " + "\n  ".join(listing))
        sha, how = order[index], f"--module={index}"
    elif calls:
        sha, how = calls[-1]["sha"], f"the one whose @{calls[-1]['function']} was first called last"
    else:
        sha, how = order[-1], "the last one made (no function was called)"
    made = modules[sha]
    with open(made["path"]) as f:
        source = f.read()
    origin = dict(made.get("origin") or {})
    if "text" in origin:  # the folder goes: the text the test gave is kept here
        with open(origin["text"]) as f:
            origin["text"] = f.read()
    module = FoundModule(
        source,
        made["pipeline"],
        made["opt_level"],
        sha=sha,
        origin=origin,
        site=made.get("site"),
        function=next((c["function"] for c in reversed(calls) if c["sha"] == sha), None),
    )
    if len(order) > 1:
        module.notes.append(
            f"the test made {len(order)} JitModules; this is {how} (--module=N picks another: "
            + "; ".join(listing)
            + ")"
        )
    if made.get("runtime_verification"):
        module.notes.append("the JitModule had runtime verification on: the candidates of the bisection do not")
    return module


def _described(made: dict) -> str:
    """Where the test made a recorded JitModule, and what it holds."""
    with open(made["path"]) as f:
        functions = re.findall(r"func\.func (?:\w+ )?@([\w$.]+)", f.read())
    site = made.get("site")
    return (
        (f"made at {os.path.basename(site[0])}:{site[1]}, " if site else "")
        + ("its own pipeline, " if made.get("given_pipeline") else "")
        + "functions "
        + ", ".join(f"@{n}" for n in functions[:4])
        + (", ..." if len(functions) > 4 else "")
    )


# --- .mlir tests ------------------------------------------------------------------------------

_PIPELINE_FLAGS = ("--pass-pipeline", "-pass-pipeline")


def _dumped(tool: str, args: list[str]) -> str | None:
    """mlir-opt's own textual pipeline for `args` (on an empty module), whitespace at line ends removed."""
    try:
        done = subprocess.run(
            [tool, *args, "--dump-pass-pipeline", "-o", os.devnull],
            input="module {}\n",
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    lines = done.stderr.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith("builtin.module(")), None)
    return None if start is None else "".join(line.strip() for line in lines[start:])


def spelled_flag(tool: str, arg: str) -> str | None:
    """The pipeline step that pass flag `arg` (`-name` or `--name=options`) is, nested where
    mlir-opt nests it (`func.func(name{options})`); None when `arg` is no pass."""
    name, eq, options = arg.lstrip("-").partition("=")
    dumped = _dumped(tool, [arg])
    match = re.match(r"builtin\.module\(((?:[\w.]+\()*)" + re.escape(name) + r"\b", dumped or "")
    if not match:
        return None
    anchors = match.group(1)
    return f"{anchors}{name}{'{' + options + '}' if eq else ''}{')' * anchors.count('(')}"


def _pipeline_of(args: list[str]) -> tuple[str, tuple]:
    """(the pipeline, indexes of its arguments) of an `*-opt` command line."""
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if flag in _PIPELINE_FLAGS:
            if eq:
                return value, (i,)
            if i + 1 < len(args):
                return args[i + 1], (i, i + 1)
    steps, indexes = [], []
    for i, arg in enumerate(args[1:], 1):
        spelled = spelled_flag(args[0], arg) if arg.startswith("-") and len(arg) > 1 else None
        if spelled is not None:
            steps.append(spelled)
            indexes.append(i)
    return f"builtin.module({','.join(steps)})", tuple(indexes)


def _runner_level(commands: list) -> tuple[int, tuple | None]:
    """(the opt level of mlir-runner on the line, (its command, the index of its -O argument))."""
    for c, command in enumerate(commands):
        args = [str(a) for a in command.args]
        if "runner" in os.path.basename(args[0]):
            for i, arg in enumerate(args):
                if re.fullmatch(r"-O[0-3]", arg):
                    return int(arg[2]), (c, i)
            return 0, (c, None)
    return 0, None


def from_mlir_test(lit, failing_line: int) -> FoundModule:
    """The module and pipeline of a `.mlir` test whose RUN line `failing_line` failed."""
    import lit.ShUtil as sh

    steps = [s for s in lit.steps if s.line == failing_line] or lit.steps
    for step in steps:
        if not isinstance(step.command, sh.Pipeline):
            continue
        for c, command in enumerate(step.command.commands):
            args = [str(a) for a in command.args]
            if not os.path.basename(args[0]).endswith("-opt"):
                continue
            if not any(os.path.realpath(a) == lit.source for a in args[1:] if not a.startswith("-")):
                continue
            pipeline, indexes = _pipeline_of(args)
            level, runner = _runner_level(step.command.commands)
            with open(lit.source) as f:
                source = f.read()
            return FoundModule(
                source,
                pipeline,
                level,
                origin={"file": lit.source},
                step_line=step.line,
                command=c,
                pass_args=indexes,
                runner=runner,
            )
    raise ValueError(
        f"RUN line {failing_line} runs no `*-opt` tool on the test file (`mlir-opt %s ...`): "
        "memref-reduce finds the module of a .mlir test there"
    )
