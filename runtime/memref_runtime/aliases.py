"""Module aliases, so that tests written for upstream's module names run on other providers.

- `alias_mlir_runtime()`: `import mlir.runtime` (and `mlir.runtime.np_to_memref`) gives
  `memref_runtime.np_to_memref`, so upstream tests run unchanged on this runtime.
- `alias_mlir_bindings("torch_mlir")`: `import mlir.ir` (any `mlir.*`) gives `torch_mlir.ir`,
  so the same tests run on torch-mlir's bundled bindings.

lit turns these on with `-D mlir_runtime=memref_runtime` and `-D mlir_python=torch_mlir`,
through process/_site/sitecustomize.py; the pytest plugin with `--mlir-runtime` and `--mlir-python`.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types

RUNTIME_NAMES = ("mlir.runtime", "mlir.runtime.np_to_memref")


# What a module object says about its own import; an alias keeps its own.
_IMPORT_ATTRS = frozenset({"__name__", "__spec__", "__loader__", "__path__", "__package__", "__file__", "__cached__"})


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of `source` (or, with `prefix`, anything under it) give `target`'s modules."""

    def __init__(self, source: str, target: str, *, prefix: bool):
        self.source, self.target, self.prefix = source, target, prefix

    def target_of(self, fullname: str) -> str | None:
        if fullname == self.source:
            return self.target
        if self.prefix and fullname.startswith(self.source + "."):
            return self.target + fullname[len(self.source) :]
        return None

    def find_spec(self, fullname, path=None, target=None):
        name = self.target_of(fullname)
        if name is None or importlib.util.find_spec(name) is None:
            return None
        # A package either way, so that `mlir.runtime.np_to_memref` can be imported below it.
        return importlib.util.spec_from_loader(fullname, self, is_package=True)

    def exec_module(self, module):
        # A module of its own that shows the target's names (star imports see them) and
        # forwards anything added later, so the target module itself is never altered.
        # Submodules are left out: they are imported through the alias too.
        name = self.target_of(module.__name__)
        assert name is not None  # find_spec made this module's spec only for an aliased name
        target = importlib.import_module(name)

        def is_submodule(name, value):
            return isinstance(value, types.ModuleType) and value.__name__ == f"{target.__name__}.{name}"

        def forward(name):
            value = getattr(target, name)
            if is_submodule(name, value):
                raise AttributeError(name)
            return value

        module.__dict__.update(
            {k: v for k, v in target.__dict__.items() if k not in _IMPORT_ATTRS and not is_submodule(k, v)}
        )
        module.__getattr__ = forward


def _install(finder: _AliasFinder) -> None:
    sys.meta_path[:] = [
        f
        for f in sys.meta_path
        if not (isinstance(f, _AliasFinder) and (f.source, f.prefix) == (finder.source, finder.prefix))
    ]
    # Exact names go first, so mlir.runtime stays ours when mlir.* is aliased too.
    sys.meta_path.insert(
        0 if not finder.prefix else sum(isinstance(f, _AliasFinder) and not f.prefix for f in sys.meta_path), finder
    )
    for name in [n for n in sys.modules if finder.target_of(n) is not None]:
        del sys.modules[name]
        parent, _, child = name.rpartition(".")
        if parent in sys.modules and child in vars(sys.modules[parent]):
            delattr(sys.modules[parent], child)  # `from mlir import runtime` imports anew


def alias_mlir_runtime(provider: str = "mlir") -> None:
    """From now on `mlir.runtime` and `mlir.runtime.np_to_memref` are memref_runtime's facade; so
    are the provider's own (`torch_mlir.runtime`, which torch-mlir's refbackend imports)."""
    names = RUNTIME_NAMES + tuple(name.replace("mlir", provider, 1) for name in RUNTIME_NAMES if provider != "mlir")
    for name in names:
        _install(_AliasFinder(name, "memref_runtime.np_to_memref", prefix=False))


def alias_mlir_bindings(provider: str) -> None:
    """From now on `mlir` and every `mlir.*` module are `provider`'s (e.g. torch_mlir)."""
    if provider != "mlir":
        _install(_AliasFinder("mlir", provider, prefix=True))
