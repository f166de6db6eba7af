"""LLVM's optimizations as a bisection sees them: the lowered module as LLVM IR, `opt -O<n>` run
with `-opt-bisect-limit=N` (only the first N optimization passes run), and its output loaded back
into the LLVM dialect, for the JIT to compile at -O0 (which optimizes nothing more).

opt is told the host's triple and CPU (`-mcpu=native`), as the JIT compiles for them: without
them it optimizes for a generic target and vectorizes nothing. What this cannot see: the code
generator's own optimizations (llc -O<n>, instruction selection and scheduling), which the JIT at
-O0 does not run.
"""

from __future__ import annotations

import functools
import re
import subprocess
from typing import NamedTuple

from .tools import tool

_BISECT_LINE = re.compile(r"^BISECT: (NOT )?running pass \((\d+)\) (.+?) on (.+)$")


class ToolFailed(RuntimeError):
    """mlir-translate or opt failed on a candidate: the command and what it said."""


def _run(args: list[str], text: str) -> subprocess.CompletedProcess:
    done = subprocess.run(args, input=text, capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolFailed(f"{' '.join(args)} failed (exit status {done.returncode}):\n{done.stderr.strip()[-2000:]}")
    return done


@functools.cache
def host_triple() -> str:
    """The triple opt targets by default (the host's, for the wheels' and distributions' builds)."""
    out = _run([tool("opt"), "--version"], "").stdout
    match = re.search(r"Default target:\s*(\S+)", out)
    return match.group(1) if match else ""


def opt_args(opt_level: int, limit: int) -> list[str]:
    """opt's arguments for `-O<opt_level>` with its first `limit` passes (-1: all), LLVM IR to stdout."""
    triple = host_triple()
    return (
        [f"-O{opt_level}"]
        + ([f"-mtriple={triple}"] if triple else [])
        + ["-mcpu=native", f"-opt-bisect-limit={limit}", "-S"]
    )


def to_llvm_ir(lowered: str) -> str:
    """The LLVM IR of a module in the LLVM dialect."""
    return _run([tool("mlir-translate"), "--mlir-to-llvmir"], lowered).stdout


class Optimized(NamedTuple):
    """opt's output with a limit, and the passes it ran: (number, pass, function) in order."""

    ir: str
    ran: list[tuple[int, str, str]]
    total: int  # passes numbered in this run, run or not


def optimize(llvm_ir: str, opt_level: int, limit: int) -> Optimized:
    """`opt -O<opt_level> -opt-bisect-limit=<limit>` on `llvm_ir`."""
    done = _run([tool("opt")] + opt_args(opt_level, limit), llvm_ir)
    ran, total = [], 0
    for line in done.stderr.splitlines():
        match = _BISECT_LINE.match(line.strip())
        if match:
            total = max(total, int(match.group(2)))
            if not match.group(1):
                ran.append((int(match.group(2)), match.group(3), match.group(4)))
    return Optimized(done.stdout, ran, total)


def to_llvm_dialect(llvm_ir: str) -> str:
    """LLVM IR loaded back into the LLVM dialect (mlir-translate --import-llvm)."""
    return _run([tool("mlir-translate"), "--import-llvm"], llvm_ir).stdout


def pass_number(optimized: Optimized, number: int) -> tuple[str, str] | None:
    """(pass, function) of the pass that ran as number `number`."""
    return next(((name, where) for n, name, where in optimized.ran if n == number), None)
