"""Module aliases: `mlir.runtime` as memref_runtime's facade, `mlir.*` as another provider's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.paths import RUNTIME_DIR
from support.subprocesses import run_python

from memref_runtime.bindings import bindings

pytest.importorskip("mlir.runtime")

SITE_DIR = RUNTIME_DIR / "memref_runtime" / "process" / "_site"


def test_alias_after_upstream_was_imported():
    result = run_python("""
import importlib
import mlir.runtime  # upstream, imported first
import memref_runtime.np_to_memref as facade
from memref_runtime.aliases import alias_mlir_runtime
alias_mlir_runtime()
from mlir import runtime
assert runtime.get_ranked_memref_descriptor is facade.get_ranked_memref_descriptor, runtime
import mlir.runtime.np_to_memref as submodule
assert submodule.ranked_memref_to_numpy is facade.ranked_memref_to_numpy
names = {}
exec("from mlir.runtime import *", names)
assert {"np", "ctypes", "F8E4M3", "get_unranked_memref_descriptor"} <= set(names)
# The facade module itself is untouched: its own spec, and reload works.
assert facade.__spec__.name == "memref_runtime.np_to_memref" and not hasattr(facade, "__path__")
assert importlib.reload(facade).__name__ == "memref_runtime.np_to_memref"
print("ok")
""")
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def site_python(code: str, extra_path: list[str], **env) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter with the lit set-up: _site first on PYTHONPATH."""
    path = os.pathsep.join([str(SITE_DIR), str(RUNTIME_DIR), *extra_path])
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": path, **env},
    )


@pytest.mark.parametrize(
    "runtime, module",
    [("upstream", "{provider}.runtime.np_to_memref"), ("memref_runtime", "memref_runtime.conversion")],
)
def test_sitecustomize_picks_the_runtime_and_runs_the_one_it_shadows(tmp_path, runtime, module):
    module = module.format(provider=bindings().name)
    (tmp_path / "sitecustomize.py").write_text("import sys; print('other sitecustomize', file=sys.stderr)\n")
    result = site_python(
        "from mlir.runtime import *; print(get_ranked_memref_descriptor.__module__)",
        [str(tmp_path)],
        MEMREF_RUNTIME_MLIR_RUNTIME=runtime,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == module
    assert "other sitecustomize" in result.stderr
