"""JIT reuse: a JitModule built again from the same module reuses the compiled ExecutionEngine.

Within one process, two JitModules share one engine when all of these hold:

- the same lowered module (its text, so the source, the pipeline and the runtime-verification
  passes are all in it), the same opt level, the same shared libraries, the same bindings;
- neither registered a callback: a linked engine calls the trampolines of the module that
  linked it, which report exceptions to that module, so an engine with callbacks is never
  shared, and a module that may still register callbacks (it declares functions) takes a
  shared engine only at its first call, when it can register no more;
- the module has no mutable global (`llvm.mlir.global` that is not `constant`): kernels of two
  modules would otherwise write each other's state.

The engine stays alive as long as any JitModule holds it (arrays that view a global hold their
JitModule), and the cache keeps the `MEMREF_RUNTIME_JIT_CACHE_SIZE` (default 32; 0 turns reuse
off) most recently used linked engines (linked_engine.py: the engine, its functions' addresses
and its guard; the JitModules that take one share it). The cache holds no Context (an engine does
not keep its module's Context alive), so `Context._get_live_count()` is not affected.
`stats()` counts hits and misses by reason; with `MEMREF_RUNTIME_JIT_CACHE_STATS=DIR` each
process writes them to DIR/<pid>.json at exit (benchmarks/suite.py reads them).
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import threading
from collections.abc import Iterable
from typing import Any

from .. import environment
from .linked_engine import LinkedEngine

SIZE_ENV = environment.JIT_CACHE_SIZE
STATS_ENV = environment.JIT_CACHE_STATS
DEFAULT_SIZE = 32
_MUTABLE_GLOBAL = re.compile(r"^\s*llvm\.mlir\.global\b(?![^@\n]*\bconstant\b)", re.MULTILINE)

_lock = threading.Lock()
_engines: collections.OrderedDict = collections.OrderedDict()  # key -> LinkedEngine
_stats: collections.Counter = collections.Counter()


def size() -> int:
    """How many linked engines the cache keeps (env MEMREF_RUNTIME_JIT_CACHE_SIZE, default 32)."""
    text = os.environ.get(SIZE_ENV, "")
    try:
        value = int(text) if text.strip() else DEFAULT_SIZE
    except ValueError:
        raise ValueError(f"{SIZE_ENV}: expected a number of engines (0 turns reuse off), got {text!r}") from None
    if value < 0:
        raise ValueError(f"{SIZE_ENV}: expected a number of engines (0 turns reuse off), got {text!r}")
    return value


def key_of(text: str, *, opt_level: int, shared_libs: Iterable[object] | None, **options: Any) -> tuple | None:
    """The cache key of a lowered module (`text`, as printed) with the engine options it is built
    with, or None when it may not be shared (mutable globals, reuse turned off)."""
    if size() == 0:
        _count("off")
        return None
    if _MUTABLE_GLOBAL.search(text):
        _count("miss: mutable globals")
        return None
    from ..bindings import bindings

    digest = hashlib.sha256(text.encode()).hexdigest()
    return (
        bindings().name,
        digest,
        opt_level,
        tuple(str(p) for p in shared_libs or ()),
        tuple(sorted(options.items())),
    )


def take_at_creation(key: tuple | None, may_register_callbacks: bool) -> LinkedEngine | None:
    """The linked engine a new JitModule of cache key `key` takes instead of creating one; None
    when there is none, or the module may still register callbacks (it declares a function)."""
    if key is None or may_register_callbacks:
        return None
    found = _get(key)
    if found is not None:
        _count("hit")
    return found


def take_at_first_call(key: tuple | None, has_callbacks: bool) -> LinkedEngine | None:
    """At a JitModule's first call: the linked engine of an equal module, if it may take one
    (none with callbacks registered), instead of linking its own; None otherwise."""
    if key is None:
        return None
    if has_callbacks:
        _count("miss: callbacks registered")
        return None
    found = _get(key)
    _count("miss: first build" if found is None else "hit")
    return found


def offer(key: tuple | None, linked: LinkedEngine) -> None:
    """After a JitModule's first call: keeps its linked engine for the next JitModule of the same
    module (the most recently used last), unless it has callbacks."""
    if key is None or linked.callbacks:
        return
    limit = size()
    with _lock:
        _engines[key] = linked
        _engines.move_to_end(key)
        while len(_engines) > limit:
            _engines.popitem(last=False)


def _get(key):
    with _lock:
        found = _engines.get(key)
        if found is not None:
            _engines.move_to_end(key)
        return found


def _count(what: str) -> None:
    with _lock:
        _stats[what] += 1


def stats() -> dict:
    """Hits and misses so far in this process, by reason."""
    with _lock:
        return dict(_stats)


def clear() -> None:
    """Drops every cached engine (those in use by a JitModule live on) and the counts."""
    with _lock:
        _engines.clear()
        _stats.clear()


def _write_stats() -> None:
    import json

    folder = os.environ.get(STATS_ENV)
    if folder and _stats:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{os.getpid()}.json"), "w") as f:
            json.dump(stats(), f)


if os.environ.get(STATS_ENV):
    import atexit

    atexit.register(_write_stats)
