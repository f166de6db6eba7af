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

from .. import probe_cache

# One JSON object per line; the JIT check runs last and alone, since it may abort the process.
PROBE = r"""
import importlib, importlib.util, json, os, platform, sys, sysconfig

bindings = sys.argv[1]
found = {"machine": platform.machine(), "scripts_dir": sysconfig.get_path("scripts")}

def package_dirs(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []

found["bindings_dirs"] = package_dirs(bindings)
found["llvm_dirs"] = package_dirs("llvm")
found["has_ml_dtypes"] = importlib.util.find_spec("ml_dtypes") is not None
found["has_filecheck"] = importlib.util.find_spec("filecheck") is not None
# The array frameworks a test may hand to JIT code (found, not imported: torch takes seconds).
found["has_torch"] = importlib.util.find_spec("torch") is not None
found["has_jax"] = importlib.util.find_spec("jax") is not None and importlib.util.find_spec("jaxlib") is not None
try:
    import memref_runtime
except ImportError as e:
    print(json.dumps({"no_memref_runtime": str(e)}), flush=True)
    sys.exit(0)
found["memref_runtime"] = os.path.dirname(memref_runtime.__file__)

def mlir_major():
    # The runtime's own answer (distribution version, else the provider's opt tool --version).
    from memref_runtime.environment import BINDINGS
    os.environ[BINDINGS] = bindings
    from memref_runtime.bindings import mlir_major_version
    return mlir_major_version()

try:
    found["mlir_major"] = mlir_major()
except Exception:
    found["mlir_major"] = None
from memref_runtime.jit.lowering import DEFAULT_PIPELINE
found["default_pipeline"] = DEFAULT_PIPELINE

def jit_works():
    ir = importlib.import_module(bindings + ".ir")
    ee = importlib.import_module(bindings + ".execution_engine")
    with ir.Context():
        module = ir.Module.parse("llvm.func @probe() { llvm.return }")
        return bool(ee.ExecutionEngine(module).raw_lookup("probe"))

print(json.dumps(found), flush=True)  # before the JIT, which may abort the process
try:
    print(json.dumps({"jit": jit_works()}))
except Exception:
    pass
"""


class ProbeError(Exception):
    """The interpreter could not be probed, or cannot import memref_runtime; the message says why."""


def _run_probe(python: str, bindings: str, pythonpath: list) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(pythonpath))
    try:
        out = subprocess.run([python, "-c", PROBE, bindings], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError) as e:
        raise ProbeError(f"cannot run the test interpreter {python!r}: {e}") from None
    found = {"jit": False}
    try:
        for line in out.stdout.splitlines():
            found.update(json.loads(line))
    except ValueError:
        pass
    if "no_memref_runtime" in found:
        raise ProbeError(f"the test interpreter {python} cannot import memref_runtime ({found['no_memref_runtime']}): "
                         f"install memref-runtime into it ({python} -m pip install memref-runtime), or run lit "
                         "with the interpreter that has it")
    if "bindings_dirs" not in found:
        raise ProbeError(f"cannot probe the test interpreter {python!r}: "
                         + (out.stderr.strip() or f"exit status {out.returncode}"))
    return found


def _sources(package_dir: str) -> list[str]:
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(package_dir)
                  for name in names if name.endswith(".py"))


def probe(python: str, bindings: str, pythonpath: list) -> dict:
    """What `python` imports, with `pythonpath` ahead of its own path: the keys of PROBE's JSON
    (bindings_dirs, llvm_dirs, mlir_major, jit, ...). Raises ProbeError."""
    key = {
        "python": python,
        "probe": hashlib.sha256(PROBE.encode()).hexdigest(),
        "bindings": bindings,
        "pythonpath": pythonpath,
        "environment": {v: os.environ.get(v) for v in ("PATH", "LD_LIBRARY_PATH", "PYTHONHOME", "PYTHONPATH")},
    }

    def depends_on(found: dict) -> list:
        folders = found["bindings_dirs"] + found["llvm_dirs"]
        return ([python, os.path.realpath(python), found["scripts_dir"]] + folders
                + [os.path.dirname(f) for f in folders] + _sources(found["memref_runtime"]))

    return probe_cache.cached("python", key, lambda: _run_probe(python, bindings, pythonpath), depends_on)
