"""Runs a planned mlir-opt command: the real mlir-opt for public passes, Python for the test passes.

The first run reads the input as the command would (file or stdin, -split-input-file), unless a
Python pass comes first and the input is a plain file: then the bindings parse it (the same
parser, the same locations; what does not parse goes to mlir-opt after all, for its errors). Between
runs the IR travels as bytecode, which keeps every location, so that a diagnostic of a later
run points into the original file as it would have; every run gets the command's own printing
options (passes that print ops into messages see them as in one run), and the last one prints
the output with them. (A single run, with no Python pass, is the real mlir-opt itself:
the command line module execs it.) Diagnostics are forwarded as each run ends, before the
output, as a single mlir-opt prints them.

Exit status: as mlir-opt's. Without -split-input-file the first failing run ends the command with
its status (a crash ends it with the same signal); with it, the failed chunks are left out of
the later runs, their output is empty, and the status is 1; an -o file is kept only on success.
mlir-opt reports each expected-* line of the input even without -verify-diagnostics: what the
run that read the input reports so comes after every run's diagnostics, where one mlir-opt puts
it; under -verify-diagnostics the diagnostics of all runs are verified together.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

from . import diagnostics
from .command_line import Invocation
from .plan import PythonRun, RealRun

# Between runs the IR travels as bytecode (every location, nothing the printing flags change:
# they reach the passes as they would in one run); the first run's chunks are separated by this.
CHUNK_MARKER = b"//memref-runtime-chunk-5f0c2b9e"


class Runner:
    """One planned command: `run()` gives its exit status."""

    def __init__(self, mlir_opt: str, inv: Invocation, runs: list):
        self.mlir_opt, self.inv, self.runs = mlir_opt, inv, runs
        self.status = 0  # of the first run that failed
        self.collector = diagnostics.Collector(inv.verify)
        self.python: Any = None  # python_runs.PythonSide, made on first use (it imports MLIR)
        self.output = b""  # what the last run printed, written last

    def real_arguments(self, run: RealRun, first: bool, final: bool) -> list:
        inv = self.inv
        args = [self.mlir_opt, *inv.common]
        if inv.verify:
            args.append("--mlir-print-op-on-diagnostic=false")  # as under -verify-diagnostics
        if first:
            args += inv.inputs
            if inv.split_marker:
                args += [f"--split-input-file={inv.split_marker}", f"--output-split-marker={CHUNK_MARKER.decode()}"]
        args += run.pass_arguments() + inv.printing
        if not final:
            args.append("--emit-bytecode")
        elif inv.output is not None and not inv.split_marker:
            args += ["-o", inv.output]
        return args

    def call(self, args: list, data: bytes | None, first: bool) -> tuple[int, bytes]:
        """Runs the real mlir-opt once; its diagnostics to the collector, a crash ends the command."""
        done = subprocess.run(args, input=data, capture_output=True, check=False)
        self.collector.take(done.stderr.decode(errors="replace"), reads_input=first)
        if done.returncode < 0:
            sys.stdout.buffer.write(done.stdout)
            end_by_signal(-done.returncode)
        if done.returncode != 0:
            self.status = self.status or done.returncode
        return done.returncode, done.stdout

    def run_real(self, run: RealRun, chunks: list | None, final: bool) -> list | None:
        """The chunks after `run` (None: the command ends). The first run reads the input, later
        ones each chunk on its own (mlir-opt cannot split bytecode)."""
        if chunks is None:
            status, out = self.call(self.real_arguments(run, True, final), None, True)
            if status and not self.inv.split_marker:
                return None
            return [c or None for c in out.split(CHUNK_MARKER + b"\n")] if self.inv.split_marker else [out]
        results = []
        for chunk in chunks:
            status, out = (1, b"") if chunk is None else self.call(self.real_arguments(run, False, final), chunk, False)
            if status and not self.inv.split_marker:
                return None
            results.append(None if status else out)
        if final and not self.inv.split_marker:
            self.output = results[0] or b""
        return results

    def python_side(self) -> Any:
        if self.python is None:
            from .python_runs import PythonSide

            self.python = PythonSide(self.inv.allow_unregistered, self.collector)
        return self.python

    def parsed_input(self) -> list | None:
        """The input as one parsed chunk, where a Python pass comes first and nothing asks the real
        mlir-opt's reading for more than parsing (a run less); else None."""
        inv, runs = self.inv, self.runs
        if not (
            len(runs) > 1
            and isinstance(runs[1], PythonRun)
            and not runs[0].pass_arguments()
            and len(inv.inputs) == 1
            and inv.inputs[0] != "-"
            and not inv.split_marker
            and not inv.verify
            and all(word.lstrip("-") == "allow-unregistered-dialect" for word in inv.common)
        ):
            return None
        try:
            with open(inv.inputs[0], "rb") as f:
                if b"expected-" in f.read():
                    return None  # mlir-opt reports those lines: its run reads the input
        except OSError:
            return None
        module = self.python_side().parse_file(inv.inputs[0])
        return None if module is None else [module]

    def run_python(self, run: PythonRun, chunks: list) -> list | None:
        self.python_side()
        results = [None if c is None else self.python.run(run, c) for c in chunks]
        if any(r is None and c is not None for r, c in zip(results, chunks)):
            self.status = self.status or 1
            if not self.inv.split_marker:
                return None
        return results

    def run(self) -> int:
        chunks = self.parsed_input()
        for index, run in enumerate(self.runs):
            if index == 0 and chunks is not None:
                continue  # read by the bindings' parser already
            final = index == len(self.runs) - 1
            if isinstance(run, RealRun):
                chunks = self.run_real(run, chunks, final)
            else:
                assert chunks is not None  # the plan starts with a run of the real mlir-opt
                chunks = self.run_python(run, chunks)
            if chunks is None:
                break
        status = self.status
        if self.inv.verify:
            status = 0 if self.collector.verify(self.inv.inputs) else 1
        else:
            self.collector.report_unproduced()
        if self.inv.split_marker and chunks is not None and not (status and self.writes_file):
            self.output = (self.inv.output_marker + "\n").encode().join(c or b"" for c in chunks)
            if self.writes_file:
                with open(str(self.inv.output), "wb") as f:
                    f.write(self.output)
                self.output = b""
        sys.stdout.buffer.write(self.output)
        sys.stdout.flush()
        if status and self.writes_file and os.path.exists(str(self.inv.output)):
            os.remove(str(self.inv.output))  # as mlir-opt, which keeps its output file only on success
        return status

    @property
    def writes_file(self) -> bool:
        return self.inv.output not in (None, "-")


def end_by_signal(number: int) -> None:
    """Ends this process as the real mlir-opt ended: by the same signal."""
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(number, signal.SIG_DFL)
    os.kill(os.getpid(), number)
    sys.exit(128 + number)


def direct_arguments(mlir_opt: str, inv: Invocation, run: RealRun) -> list:
    """The command as one run of the real mlir-opt (no Python pass in it)."""
    args = [mlir_opt, *inv.common, *inv.inputs]
    if inv.split_marker:
        args += [f"--split-input-file={inv.split_marker}", f"--output-split-marker={inv.output_marker}"]
    if inv.verify:
        args.append("--verify-diagnostics" if inv.verify == "all" else f"--verify-diagnostics={inv.verify}")
    args += run.pass_arguments() + inv.printing
    return args + (["-o", inv.output] if inv.output is not None else [])
