"""An LLVM build tree's layout, for the routes that take MLIR from one, made of links to the wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

MLIR_TOOLS = ("mlir-opt", "mlir-runner", "mlir-translate")
MLIR_CORE = Path("tools", "mlir", "python_packages", "mlir_core")  # where a build keeps `mlir`


def installed_mlir() -> Path | None:
    """The folder of the `mlir` package from the LLVM wheels, if its tools and runner-utils
    libraries are there."""
    spec = importlib.util.find_spec("mlir")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location)
        if all((path / "bin" / tool).is_file() for tool in MLIR_TOOLS) and all(
            (path / "lib" / f"lib{lib}.so").is_file() for lib in ("mlir_runner_utils", "mlir_c_runner_utils")
        ):
            return path
    return None


def make_build_tree(tree: Path, mlir: Path) -> Path:
    """bin/, lib/ and tools/mlir/python_packages/mlir_core/mlir in `tree`, linked to the `mlir`
    package folder `mlir` (its tools, and the runner utils with the libraries they load)."""
    for folder in (tree / MLIR_CORE, tree / "bin", tree / "lib"):
        folder.mkdir(parents=True)
    (tree / MLIR_CORE / "mlir").symlink_to(mlir, target_is_directory=True)
    for tool in MLIR_TOOLS:
        (tree / "bin" / tool).symlink_to(mlir / "bin" / tool)
    for lib in (mlir / "lib").iterdir():
        (tree / "lib" / lib.name).symlink_to(lib)
    return tree
