"""Make `import mlir.runtime` (and `mlir.runtime.np_to_memref`) give memref_runtime's facade.

Upstream tests then run unchanged on memref_runtime: `from mlir.runtime import *` hands out
`memref_runtime.np_to_memref`. lit's `-D runtime=memref_runtime` turns this on for the suite.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

ALIASED = ("mlir.runtime", "mlir.runtime.np_to_memref")


class _AliasLoader(importlib.abc.Loader):
    def create_module(self, spec):
        facade = importlib.import_module("memref_runtime.np_to_memref")
        if spec.name == "mlir.runtime.np_to_memref":
            return facade
        return None  # a fresh package module, filled like upstream's __init__ below

    def exec_module(self, module):
        if module.__name__ == "mlir.runtime":
            facade = importlib.import_module("memref_runtime.np_to_memref")
            module.__path__ = []  # a package, so that mlir.runtime.np_to_memref imports
            module.__dict__.update({name: getattr(facade, name) for name in facade.__all__})
            module.np_to_memref = facade


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in ALIASED:
            return importlib.util.spec_from_loader(fullname, _AliasLoader(), is_package=fullname == "mlir.runtime")
        return None


def install() -> None:
    """Route the upstream runtime's module names to memref_runtime from now on."""
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
    for name in ALIASED:
        sys.modules.pop(name, None)
