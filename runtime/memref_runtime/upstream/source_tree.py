"""Where upstream's paths point when no llvm-project checkout is named: `%mlir_src_dir`,
`%mlir_src_root` and the host compilers (`%host_cc`, `%host_cxx`).

Upstream's SparseTensor tests read `%mlir_src_dir/test/Integration/data/...`: in an LLVM build
`%mlir_src_dir` is `<llvm-project>/mlir`. A suite that copied upstream's tests holds the same
files: `source_root()` finds the folder that holds the copy of upstream's `test/` (the one with
`Integration/data`), or, when the suite's folder is itself that copy under another name, maps
`%mlir_src_dir/test/` onto it. `host_compilers()` gives the compilers an LLVM build records, from
`-D host_cc=`/`host_cxx=`, else the system's `cc`/`c++`.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

# The folder a copy of upstream's mlir/test/ is recognised by (SparseTensor's input files).
TEST_DATA = os.path.join("Integration", "data")
# Below a suite's folder, where a copy of upstream's test/ folder may sit.
CHILD_LAYOUTS = ("test", os.path.join("mlir", "test"))
# The system compilers, the first found on PATH, as CMake would take them.
SYSTEM_COMPILERS = {"host_cc": ("cc", "gcc", "clang"), "host_cxx": ("c++", "g++", "clang++")}


@dataclass(frozen=True)
class SourceRoot:
    """`%mlir_src_dir`'s value; whether `<root>/test` is a copy of upstream's test/ (then it is
    what an llvm-project's mlir/ is to the tests); where the suite's folder is that copy under
    another name, the folder that `%mlir_src_dir/test/` stands for."""

    root: str
    holds_copy: bool = False
    test_copy: str | None = None
    how: str = ""


def _is_test_copy(folder: str) -> bool:
    return os.path.isdir(os.path.join(folder, TEST_DATA))


def source_root(suite_root: str) -> SourceRoot:
    """What `%mlir_src_dir` means in a suite whose folder is `suite_root` (module docstring)."""
    suite_root = os.path.abspath(suite_root)
    for layout in CHILD_LAYOUTS:
        copy = os.path.join(suite_root, layout)
        if _is_test_copy(copy):
            return SourceRoot(os.path.dirname(copy), True, how=f"the folder holding {copy}, a copy of upstream's test/")
    folder = suite_root
    while True:
        if os.path.basename(folder) == "test" and _is_test_copy(folder):
            parent = os.path.dirname(folder)
            return SourceRoot(parent, True, how=f"the folder holding {folder}, a copy of upstream's test/")
        if os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    if _is_test_copy(suite_root):
        return SourceRoot(
            suite_root,
            test_copy=suite_root,
            how=f"the suite's folder, a copy of upstream's test/ ({TEST_DATA} is in it)",
        )
    return SourceRoot(suite_root, how="the suite's own folder (no copy of upstream's test/ with Integration/data)")


def host_compilers(params) -> dict:
    """`host_cc`/`host_cxx` -> the compiler (`-D`, else the system's), or None where there is none."""
    found = {}
    for name, candidates in SYSTEM_COMPILERS.items():
        given = params.get(name)
        found[name] = given or next((path for path in map(shutil.which, candidates) if path), None)
    return found
