"""What memref-reduce needs from a test that calls JitModules, and how it hands one a candidate.

- Under the failure report (MEMREF_RUNTIME_REPORT, lit's per-test folder), each JitModule writes
  down what it was made from: the module as it lowers it (`module-<sha>.mlir`), its pipeline,
  opt level and runtime verification, and later the first call of each of its functions, as
  lines of `<folder>/<pid>.jit-modules` (Python literals, in the order they happened). Once
  per module and per function, never per call: the calls themselves stay as fast.
- MEMREF_RUNTIME_CANDIDATE=`<sha>:<source|lowered>:<opt level or ->:<path>` makes the JitModule
  whose module (and given pipeline) has that sha take the file at `path` instead: as its module (`source`, which
  it lowers as it would have lowered its own) or as its module lowered already (`lowered`, a
  candidate of memref-bisect), at that opt level. memref-reduce reruns the test so.

Nothing is imported or written unless one of the two variables is set.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from .. import environment

RECORDS = ".jit-modules"


def sha_of(text: str) -> str:
    """The name of a module in the records: the start of the SHA-1 of its text."""
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _append(record: dict) -> None:
    folder = os.environ.get(environment.REPORT)
    if not folder or not os.path.isdir(folder):
        return
    try:
        with open(os.path.join(folder, f"{os.getpid()}{RECORDS}"), "a") as f:
            f.write(repr(record) + "\n")
    except OSError:  # a report that cannot be written never fails the test
        pass


def _write_once(path: str, text: str) -> None:
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(text)


def _origin(folder: str, given, sha: str) -> dict:
    """Where the test had the module: a file it names (`file`), or text it holds (`text`: a copy)."""
    if isinstance(given, os.PathLike) or (isinstance(given, str) and "\n" not in given and os.path.isfile(given)):
        return {"file": os.path.abspath(os.fspath(given))}
    if isinstance(given, str):
        path = os.path.join(folder, f"given-{sha}.mlir")
        _write_once(path, given)
        return {"text": path}
    return {}  # an ir.Module or bytecode: made by the test itself


def identity(source: str, given_pipeline: str | None) -> str:
    """The sha of a JitModule: its module as it lowers it, and the pipeline it was given (two
    JitModules of one file with two pipelines are two modules to memref-reduce)."""
    return sha_of(f"{given_pipeline or ''}\n{source}")


def _site() -> tuple[str, int] | None:
    """(file, line) of the code outside memref_runtime that made the JitModule."""
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame: Any = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back
    return None if frame is None else (os.path.abspath(frame.f_code.co_filename), frame.f_lineno)


def module_made(
    source: str, given, pipeline: str, given_pipeline: str | None, opt_level: int, runtime_verification: bool
) -> str | None:
    """Records a JitModule of `source` (the module as it is lowered), made from `given` (what the
    test passed) where the test's code made it; returns its sha, or None when there is no report
    to record into."""
    folder = os.environ.get(environment.REPORT)
    if not folder or not os.path.isdir(folder):
        return None
    sha = identity(source, given_pipeline)
    path = os.path.join(folder, f"module-{sha}.mlir")
    try:
        _write_once(path, source)
        origin = _origin(folder, given, sha)
    except OSError:
        return None
    _append(
        {
            "event": "module",
            "sha": sha,
            "path": path,
            "pipeline": pipeline,
            "given_pipeline": given_pipeline,
            "opt_level": opt_level,
            "runtime_verification": runtime_verification,
            "origin": origin,
            "site": _site(),
        }
    )
    return sha


def first_call(sha: str | None, function: str) -> None:
    """Records the first call of `function` of the module `sha` (module_made's)."""
    if sha is not None:
        _append({"event": "call", "sha": sha, "function": function})


class Candidate(NamedTuple):
    """What MEMREF_RUNTIME_CANDIDATE asks of the JitModule of one module."""

    sha: str
    lowered: bool  # the file is the module lowered to the LLVM dialect already
    opt_level: int | None
    text: str


def encode(sha: str, lowered: bool, opt_level: int | None, path: str) -> str:
    """The value of MEMREF_RUNTIME_CANDIDATE."""
    return f"{sha}:{'lowered' if lowered else 'source'}:{'-' if opt_level is None else opt_level}:{path}"


def candidate_for(source: str, given_pipeline: str | None) -> Candidate | None:
    """The candidate to take instead of `source`, if MEMREF_RUNTIME_CANDIDATE names this module."""
    value = os.environ.get(environment.CANDIDATE)
    if not value:
        return None
    sha, kind, level, path = value.split(":", 3)
    if sha != identity(source, given_pipeline):
        return None
    with open(path) as f:
        text = f.read()
    return Candidate(sha, kind == "lowered", None if level == "-" else int(level), text)
