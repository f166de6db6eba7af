"""Throw-away copies of this repository's lit suite, with tests of a test's own."""

from __future__ import annotations

import shutil
from pathlib import Path

from .paths import REPO


def make_lit_suite(root: Path, tests: dict[str, str]) -> Path:
    """A throw-away copy of the suite in `root`: this repo's lit.cfg.py, runtime/ and mlir_inputs/
    (linked), lit_tests/lit.local.cfg, and `tests` ({path under lit_tests/: text})."""
    (root / "lit_tests").mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "lit.cfg.py", root / "lit.cfg.py")
    for shared in ("runtime", "mlir_inputs"):
        (root / shared).symlink_to(REPO / shared)
    shutil.copy(REPO / "lit_tests" / "lit.local.cfg", root / "lit_tests" / "lit.local.cfg")
    for name, text in tests.items():
        (root / "lit_tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "lit_tests" / name).write_text(text)
    return root
