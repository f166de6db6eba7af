"""Python and pytest in fresh interpreters: code with the runtime importable, throw-away pytest projects."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from .paths import RUNTIME_DIR


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with the runtime importable."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=_runtime_on_pythonpath(dict(os.environ)),
    )


def make_pytest_project(root: Path, files: dict[str, str]) -> Path:
    """A throw-away pytest project in `root`: a pytest.ini (so `root` is its rootdir) and `files`
    ({path: text})."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def run_pytest(project: Path, *args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """pytest in a fresh interpreter, in `project`, with the memref-runtime plugin as an installed
    memref-runtime turns it on (loaded by name where only PYTHONPATH has the runtime). The suite
    settings the outer run may have set are left out, so that each run starts from the defaults."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST_") and k not in ("MEMREF_RUNTIME_OPT_LEVEL", "MEMREF_RUNTIME_VERIFICATION")
    }
    plugin = []
    if not any(e.name == "memref_runtime" for e in importlib.metadata.entry_points(group="pytest11")):
        plugin = ["-p", "memref_runtime.pytest_plugin"]
        environment = _runtime_on_pythonpath(environment)
    environment.update(env or {})
    # Hypothesis' pytest plugin alone costs each run 0.5 s of imports; these projects do not use it.
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", *plugin, *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )


def _runtime_on_pythonpath(environment: dict[str, str]) -> dict[str, str]:
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(RUNTIME_DIR), environment.get("PYTHONPATH")]))
    return environment
