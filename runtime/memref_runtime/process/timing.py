"""Where a test process's time goes: parse and lower, JIT, kernels (benchmarks/suite.py).

Off unless the environment variable MEMREF_RUNTIME_TIMING names a folder (`lit -D timing=DIR`
sets it); then `_site/sitecustomize.py` calls `install()`, which wraps, as each module is
imported:

  parse and lower   ir.Module.parse, PassManager.run
  JIT               ExecutionEngine creation, raw_lookup (the ORC JIT compiles at first lookup)
  kernels           ExecutionEngine.invoke and JitModule calls (callbacks they make included)

and at exit writes DIR/<pid>.json: the test (LIT_CURRENT_TESTCASE), argv, environment, the
seconds from start-up (or fork) to exit, and the seconds of each part (nested time counts once, innermost).
When off, nothing of this module is imported and nothing is wrapped.
"""

from __future__ import annotations

import atexit
import functools
import importlib.abc
import importlib.util
import json
import os
import sys
import time

from .. import environment

ENV = environment.TIMING
PARTS = ("parse_lower", "jit", "kernels")


class _Record:
    """This process's record: whether it writes one, when it began, the seconds of each part."""

    def __init__(self) -> None:
        self.start_process()

    def start_process(self) -> None:
        self.active = True
        self.start = time.perf_counter()
        self.started = time.time()
        self.parts = dict.fromkeys(PARTS, 0.0)


_state = _Record()
_stack: list = []  # [part, time spent in nested parts] of the timed calls in progress


def _timed(part: str, fn):
    """`fn`, whose time (less that of nested timed calls) counts towards `part`."""

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        frame: list = [part, 0.0]  # [part, time spent in nested parts]
        _stack.append(frame)
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            elapsed = time.perf_counter() - start
            _stack.pop()
            _state.parts[part] += elapsed - frame[1]
            if _stack:
                _stack[-1][1] += elapsed

    return timed


def _patch_ir(module) -> None:
    for name in ("parse", "parseFile"):
        if module.Module.__dict__.get(name) is not None:
            setattr(module.Module, name, staticmethod(_timed("parse_lower", getattr(module.Module, name))))


def _patch_passmanager(module) -> None:
    module.PassManager.run = _timed("parse_lower", module.PassManager.run)


def _patch_execution_engine(module) -> None:
    engine = module.ExecutionEngine
    base_init = engine.__init__

    def __init__(self, *args, **kwargs):
        base_init(self, *args, **kwargs)

    engine.__init__ = _timed("jit", __init__)
    engine.raw_lookup = _timed("jit", engine.raw_lookup)
    if "invoke" in engine.__dict__:
        engine.invoke = _timed("kernels", engine.invoke)


def _patch_call_plan(module) -> None:
    make_invoker = module.make_invoker

    def timed_make_invoker(*args, **kwargs):
        invoke = make_invoker(*args, **kwargs)
        timed = _timed("kernels", invoke)
        timed.bind = lambda *a: _timed("kernels", invoke.bind(*a))
        return timed

    module.make_invoker = timed_make_invoker


def _patches() -> dict:
    table = {"memref_runtime.jit.call_plan": _patch_call_plan}
    for provider in ("mlir", "torch_mlir"):
        table[f"{provider}.ir"] = _patch_ir
        table[f"{provider}.passmanager"] = _patch_passmanager
        table[f"{provider}.execution_engine"] = _patch_execution_engine
    return table


class _PatchAfterImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Runs the patch of a watched module right after the module itself ran."""

    def __init__(self, patches: dict):
        self.patches = patches

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.patches:
            return None
        sys.meta_path.remove(self)  # find the real spec without finding ourselves
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _PatchingLoader(spec.loader, self.patches[fullname])
        return spec


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader, patch):
        self.loader, self.patch = loader, patch

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.patch(module)


def install() -> None:
    """Wraps the timed calls (now for modules already imported, on import for the others)."""
    patches = _patches()
    for name, patch in list(patches.items()):
        if name in sys.modules:
            patch(sys.modules[name])
            del patches[name]
    sys.meta_path.insert(0, _PatchAfterImport(patches))
    atexit.register(_write)


def start_process() -> None:
    """Starts the record of this process (a child forked from a pre-started interpreter)."""
    _state.start_process()


def stop_process() -> None:
    """This process writes no record (a pre-started interpreter: its children do)."""
    _state.active = False


def _write() -> None:
    folder = os.environ.get(ENV)
    if not _state.active or not folder:
        return
    record = {
        "test": os.environ.get(environment.LIT_CURRENT_TESTCASE),
        "argv": sys.argv,
        "started": _state.started,  # wall clock: which ran first, which ran within another
        "seconds": time.perf_counter() - _state.start,
        "parts": _state.parts,
        "env": dict(os.environ),  # to start the same imports in a bare process (the floor)
    }
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as f:
        json.dump(record, f)
