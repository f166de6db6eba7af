"""Run in the test interpreter (`python -m memref_runtime.lit.interpreter_probe BINDINGS`): what it
can import, as JSON lines on stdout, which lit/interpreter.py reads into a Probe.

The last line, alone, says whether the JIT works: creating an ExecutionEngine may abort the
process, and everything else is printed (and flushed) before it.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import platform
import sys
import sysconfig


def package_dirs(name: str) -> list[str]:
    """The folders of package `name`, or [] when it cannot be found."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []


def has(*names: str) -> bool:
    return all(importlib.util.find_spec(name) is not None for name in names)


def mlir_major(bindings: str) -> int | None:
    """The runtime's own answer (distribution version, else the provider's opt tool --version)."""
    from memref_runtime.bindings import mlir_major_version
    from memref_runtime.environment import BINDINGS

    os.environ[BINDINGS] = bindings
    try:
        return mlir_major_version()
    except Exception:  # noqa: BLE001 - a provider that cannot tell: no version features
        return None


def jit_works(bindings: str) -> bool:
    ir = importlib.import_module(bindings + ".ir")
    engines = importlib.import_module(bindings + ".execution_engine")
    with ir.Context():
        module = ir.Module.parse("llvm.func @probe() { llvm.return }")
        return bool(engines.ExecutionEngine(module).raw_lookup("probe"))


def main(bindings: str) -> None:
    import memref_runtime
    from memref_runtime.jit.lowering import DEFAULT_PIPELINE

    found = {
        "machine": platform.machine(),
        "scripts_dir": sysconfig.get_path("scripts"),
        "python_version": list(sys.version_info[:2]),
        "bindings_dirs": package_dirs(bindings),
        "llvm_dirs": package_dirs("llvm"),
        "has_ml_dtypes": has("ml_dtypes"),
        "has_filecheck": has("filecheck"),
        # The array frameworks a test may hand to JIT code (found, not imported: torch takes seconds).
        "has_torch": has("torch"),
        "has_jax": has("jax", "jaxlib"),
        "memref_runtime": os.path.dirname(memref_runtime.__file__),
        "mlir_major": mlir_major(bindings),
        "default_pipeline": DEFAULT_PIPELINE,
    }
    print(json.dumps(found), flush=True)  # before the JIT, which may abort the process
    try:
        print(json.dumps({"jit": jit_works(bindings)}), flush=True)
    except Exception:  # noqa: BLE001 - no JIT: no host-supports-jit
        pass


if __name__ == "__main__":
    main(sys.argv[1])
