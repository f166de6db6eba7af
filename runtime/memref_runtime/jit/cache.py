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
off) most recently used linked engines. The cache holds engines only, never a Context (an engine
does not keep its module's Context alive), so `Context._get_live_count()` is not affected.
`stats()` counts hits and misses by reason; with `MEMREF_RUNTIME_JIT_CACHE_STATS=DIR` each
process writes them to DIR/<pid>.json at exit (benchmarks/suite.py reads them).
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import threading

from .. import environment

SIZE_ENV = environment.JIT_CACHE_SIZE
STATS_ENV = environment.JIT_CACHE_STATS
DEFAULT_SIZE = 32
_MUTABLE_GLOBAL = re.compile(r"^\s*llvm\.mlir\.global\b(?![^@\n]*\bconstant\b)", re.MULTILINE)

_lock = threading.Lock()
_engines: collections.OrderedDict = collections.OrderedDict()  # key -> (engine, addresses)
_stats: collections.Counter = collections.Counter()


class _Entry:
    """What a JitModule carries for the cache: its key (None: never shared) and a shared engine."""

    __slots__ = ("key", "addresses")

    def __init__(self, key, addresses=None):
        self.key, self.addresses = key, addresses


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


def key_of(text: str, *, opt_level, shared_libs, **options):
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
    return (bindings().name, digest, opt_level, tuple(str(p) for p in shared_libs or ()),
            tuple(sorted(options.items())))


def reuse_at_creation(jit, key):
    """The linked engine to take instead of creating one, when `jit` can register no callback
    (it declares no function); None otherwise. Records `jit._jit_cache`."""
    jit._jit_cache = _Entry(key)
    if key is None or any(s.declaration for s in jit._signatures.values()):
        return None
    found = _get(key)
    if found is None:
        return None
    engine, jit._jit_cache.addresses = found
    _count("hit")
    return engine


def adopt(jit) -> bool:
    """At `jit`'s first call: takes a linked engine of the same module, if it may; True if it did
    (its functions' addresses are then known, and the engine is not initialized again)."""
    entry = getattr(jit, "_jit_cache", None)
    if entry is None or entry.key is None:
        return False
    if entry.addresses is not None:  # taken at creation
        jit._addresses.update(entry.addresses)
        return True
    if jit._callbacks:
        _count("miss: callbacks registered")
        return False
    found = _get(entry.key)
    if found is None:
        _count("miss: first build")
        return False
    jit.engine, entry.addresses = found
    jit._addresses.update(entry.addresses)
    _count("hit")
    return True


def offer(jit) -> None:
    """After `jit` linked its own engine: keeps it for the next JitModule of the same module,
    unless callbacks were registered."""
    entry = getattr(jit, "_jit_cache", None)
    if entry is None or entry.key is None or jit._callbacks:
        return
    limit = size()
    with _lock:
        _engines[entry.key] = (jit.engine, dict(jit._addresses))
        _engines.move_to_end(entry.key)
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
