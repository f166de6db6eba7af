"""Where a suite's tests are and where lit writes: name, suffixes, test folders, excludes, exec root.

The exec root, where lit writes each test's `Output/` (`%t`, the failure report), follows LLVM:
the site config's (`config.test_exec_root`, a CMake build folder), else `Output/` in the suite's
source folder (the checkout), where that folder is writable: every file a test writes, and its
working directory, are then under that one folder (lit never looks for tests in an `Output/`),
and nothing lands among the tests. Otherwise (an installed, read-only
suite) it is a private folder of this user: `<temp>/memref-runtime-<uid>/`, made with mode 0700
and used only when this user owns it, it is no symlink and nobody else can write into it; lit
stops otherwise, naming what is wrong. `-D exec_root=DIR` wins over all.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from typing import NoReturn

# Upstream MLIR's (mlir/test/lit.cfg.py): a folder copied from upstream collects what it collects
# there (memref_abi.c with %host_cc, ...).
DEFAULT_SUFFIXES = (".py", ".mlir", ".c", ".ll", ".td", ".toy", ".tc", ".yaml", ".test", ".pdll", ".spvasm")
# Never tests: lit's and CMake's files, the harness's own folders, and what upstream's lit.cfg.py
# excludes (`Inputs/` folders hold the inputs of the tests next to them).
ALWAYS_EXCLUDED = (
    "lit.cfg.py",
    "lit.site.cfg.py",
    "lit.site.cfg.py.in",
    "lit.local.cfg",
    "CMakeLists.txt",
    "Output",
    "__pycache__",
    "README.md",
    "README.txt",
    "LICENSE.txt",
    "Inputs",
    "get_darwin_real_python.py",
)


def excludes(source_root: str, test_dirs: Iterable[str] | None, inputs: str | None, more: Iterable[str]) -> list[str]:
    """lit's `config.excludes`: with `test_dirs`, every other entry of `source_root` (build
    folders, venvs and sources are never walked); the inputs folder; `more`."""
    names = set(ALWAYS_EXCLUDED) | set(more)
    if test_dirs is not None:
        top = {os.path.normpath(d).split(os.sep)[0] for d in test_dirs}
        names |= set(os.listdir(source_root)) - top
    if inputs and os.path.dirname(os.path.abspath(inputs)).startswith(os.path.abspath(source_root)):
        names.add(os.path.basename(os.path.normpath(inputs)))
    return sorted(names)


def private_folder(fatal: Callable[[str], NoReturn]) -> str:
    """`<temp>/memref-runtime-<uid>`: made 0700 if missing, and checked to be this user's alone."""
    folder = os.path.join(tempfile.gettempdir(), f"memref-runtime-{os.getuid()}")
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as e:
        fatal(f"cannot make the private exec root {folder}: {e}; pass -D exec_root=DIR")
    st = os.lstat(folder)
    problem = (
        "is a symlink"
        if stat.S_ISLNK(st.st_mode)
        else "is not a folder"
        if not stat.S_ISDIR(st.st_mode)
        else f"belongs to uid {st.st_uid}, not to this user ({os.getuid()})"
        if st.st_uid != os.getuid()
        else f"has mode {stat.S_IMODE(st.st_mode):o}: others may write into it"
        if stat.S_IMODE(st.st_mode) & 0o022
        else None
    )
    if problem:
        fatal(
            f"the private exec root {folder} {problem}, so another user could plant files where tests write "
            "%t; remove it, or pass -D exec_root=DIR"
        )
    return folder


def exec_root(given: str | None, site: str | None, source_root: str, fatal: Callable[[str], NoReturn]) -> str:
    """Where lit writes Output/ folders (see the module docstring)."""
    if given:
        return os.path.abspath(given)
    if site:
        return site
    if os.access(source_root, os.W_OK):
        return os.path.join(source_root, "Output")
    digest = hashlib.sha256(os.path.realpath(source_root).encode()).hexdigest()[:12]
    return os.path.join(private_folder(fatal), f"{os.path.basename(source_root)}-{digest}")
