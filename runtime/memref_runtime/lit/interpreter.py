"""What the interpreter that runs the tests can import, learnt by a probe run under it.

The probe runs under the test interpreter (not lit's), so that every feature describes the
environment the tests really run in. Its answer is kept (probe_cache) while the interpreter,
the folders it imports MLIR and LLVM from (and their parents, where packages are installed) and
memref_runtime's sources are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass, fields
from pathlib import Path

from .. import probe_cache

PROBE_MODULE = "memref_runtime.lit.interpreter_probe"
PROBE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "interpreter_probe.py")


@dataclass(frozen=True)
class Probe:
    """What the test interpreter can import (interpreter_probe.py's answer)."""

    machine: str
    scripts_dir: str
    bindings_dirs: list[str]  # the MLIR bindings package's folders ([]: it cannot import them)
    llvm_dirs: list[str]  # the `llvm` package's (the LLVM tools wheel)
    has_ml_dtypes: bool
    has_filecheck: bool
    has_torch: bool
    has_jax: bool
    memref_runtime: str  # the folder of the memref_runtime package it imports
    mlir_major: int | None
    default_pipeline: str
    jit: bool = False  # an ExecutionEngine could be created
    python_version: tuple = ()  # (major, minor)

    @classmethod
    def from_answer(cls, answer: dict) -> Probe:
        found = {f.name: answer[f.name] for f in fields(cls) if f.name in answer}
        found["python_version"] = tuple(found.get("python_version", ()))  # a list in JSON
        return cls(**found)


class ProbeError(Exception):
    """The interpreter could not be probed, or cannot import memref_runtime; the message says why."""


def _run_probe(python: str, bindings: str, pythonpath: list) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    try:
        out = subprocess.run(
            [python, "-m", PROBE_MODULE, bindings], capture_output=True, text=True, timeout=120, env=env
        )
    except (OSError, subprocess.SubprocessError) as e:
        raise ProbeError(f"cannot run the test interpreter {python!r}: {e}") from None
    found = {"jit": False}
    try:
        for line in out.stdout.splitlines():
            found.update(json.loads(line))
    except ValueError:
        pass
    if "bindings_dirs" not in found and "No module named 'memref_runtime'" in out.stderr:
        raise ProbeError(
            f"the test interpreter {python} cannot import memref_runtime: "
            f"install memref-runtime into it ({python} -m pip install memref-runtime), or run lit "
            "with the interpreter that has it"
        )
    if "bindings_dirs" not in found:
        raise ProbeError(
            f"cannot probe the test interpreter {python!r}: " + (out.stderr.strip() or f"exit status {out.returncode}")
        )
    return found


def _sources(package_dir: str) -> list[str]:
    return sorted(
        os.path.join(folder, name)
        for folder, _, names in os.walk(package_dir)
        for name in names
        if name.endswith(".py")
    )


def probe(python: str, bindings: str, pythonpath: list) -> Probe:
    """What `python` imports, with `pythonpath` ahead of its own path. Raises ProbeError."""
    key = {
        "python": python,
        "probe": hashlib.sha256(Path(PROBE_SOURCE).read_bytes()).hexdigest(),
        "bindings": bindings,
        "pythonpath": pythonpath,
        "environment": {v: os.environ.get(v) for v in ("PATH", "LD_LIBRARY_PATH", "PYTHONHOME", "PYTHONPATH")},
    }

    def depends_on(found: dict) -> list:
        folders = found["bindings_dirs"] + found["llvm_dirs"]
        return (
            [python, os.path.realpath(python), found["scripts_dir"]]
            + folders
            + [os.path.dirname(f) for f in folders]
            + _sources(found["memref_runtime"])
        )

    return Probe.from_answer(
        probe_cache.cached("python", key, lambda: _run_probe(python, bindings, pythonpath), depends_on)
    )
