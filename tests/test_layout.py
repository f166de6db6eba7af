"""The package's layout rules: what importing the lit side costs, nothing loaded by path, small
modules, and the public names that outlive the move into subpackages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.harness

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "runtime" / "memref_runtime"
MAX_LINES = 520  # "under ~500": a module past it holds two concerns


def imported_after(code: str) -> set:
    """The modules a fresh interpreter has after `code` (the checkout's runtime first on the path)."""
    script = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(REPO / "runtime"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize("code", [
    "import memref_runtime.lit",
    "import memref_runtime.lit.configuration",  # what configure() loads in lit's interpreter
    "import memref_runtime.lit.process_report, memref_runtime.lit.test_format",
    "import memref_runtime.update_checks",
    "import memref_runtime, memref_runtime.settings, memref_runtime.aliases",
    "import memref_runtime.pytest_plugin",  # every pytest session where memref-runtime is installed
    "import memref_runtime.culprit.cli",  # memref-bisect --help, memref-reduce --help
])
def test_the_lit_side_imports_neither_numpy_nor_mlir(code):
    heavy = {m for m in imported_after(code) if m.split(".")[0] in ("numpy", "mlir", "torch_mlir", "ml_dtypes",
                                                                      "hypothesis")}
    assert heavy == set()


def test_the_runtime_loads_on_first_use():
    assert "numpy" in imported_after("import memref_runtime; memref_runtime.get_ranked_memref_descriptor")
    assert "memref_runtime.jit.module" in imported_after("from memref_runtime import JitModule")


def test_nothing_is_loaded_by_path_but_the_next_sitecustomize():
    users = sorted(str(p.relative_to(REPO)) for p in [*PACKAGE.rglob("*.py"), REPO / "lit.cfg.py"]
                   if "spec_from_file_location" in p.read_text())
    assert users == ["runtime/memref_runtime/lit/_site/sitecustomize.py"]


def test_no_module_holds_two_concerns():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_the_public_names_still_work():
    import memref_runtime
    import memref_runtime.differential
    import memref_runtime.np_to_memref
    import memref_runtime.testing
    from memref_runtime.jit import JitModule
    from memref_runtime.testing import check_against

    assert memref_runtime.JitModule is JitModule
    assert memref_runtime.differential.check_against is check_against
    assert memref_runtime.testing.check_close.__module__ == "memref_runtime.testing.numerics"
    upstream = set(memref_runtime.np_to_memref.__all__) - {"np", "ctypes", "ml_dtypes", "np_to_memref"}
    assert upstream == set(memref_runtime.UPSTREAM_NAMES) and upstream <= set(memref_runtime.__all__)
    for name in memref_runtime.__all__:
        assert getattr(memref_runtime, name) is not None


def test_the_console_script_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'memref-update-checks = "memref_runtime.update_checks.cli:main"' in text
    assert 'memref-bisect = "memref_runtime.culprit.cli:bisect_main"' in text
    assert 'memref-reduce = "memref_runtime.culprit.cli:reduce_main"' in text


def test_our_own_lit_config_is_a_short_user_of_the_plugin():
    text = (REPO / "lit.cfg.py").read_text()
    assert len(text.splitlines()) < 60 and "memref_runtime.lit.configure(config, lit_config" in text
