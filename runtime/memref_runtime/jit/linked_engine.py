"""LinkedEngine: an ExecutionEngine whose symbols are resolved, with what a call into it needs.

JitModule links its engine at its first call, or takes one that the JIT cache (cache.py) kept
for an equal module. From then on the calls (call_plan.py), the benchmark's native loop
(benchmark.py) and the cache use this object, never JitModule's own attributes:

  engine           the ExecutionEngine: it holds the code
  addresses        public function name -> address of its packed C-interface wrapper
                   (`_mlir_ciface_<name>`): what a call jumps to, and what names a JIT frame
  guard            runtime verification's Guard (verification.py) when the module routes its
                   failed asserts: calls then go through it, and a failed check raises
  callbacks        Python callbacks by declaration name, (fn, ctypes function): they stay
                   alive as long as the engine that calls them
  callback_errors  the recorder of the callbacks' exceptions (callbacks.py), which the call
                   in flight raises

An engine with callbacks is never shared (cache.py says why); one without may serve several
JitModules of the same module, which then hold the same LinkedEngine.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .callbacks import CallbackErrors
from .verification import Guard

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # void _mlir_ciface_<name>(void **packed)


@dataclass(frozen=True, eq=False)
class LinkedEngine:
    """A linked ExecutionEngine, the addresses of its functions, its guard and its callbacks."""

    engine: Any  # the bindings' ExecutionEngine
    addresses: Mapping[str, int]
    guard: Guard | None = None
    callbacks: Mapping[str, tuple] = field(default_factory=dict)
    callback_errors: CallbackErrors = field(default_factory=CallbackErrors)

    def native(self, name: str) -> Callable:
        """`native(frame)`: calls the packed wrapper of `name` on `frame`, through the guard if
        there is one (which raises RuntimeVerificationError when the call stopped at a failed check)."""
        address = self.addresses[name]
        return self.guard.caller(address, name) if self.guard else _PACKED(address)

    def callback_hooks(self) -> tuple[Callable, Callable] | tuple[None, None]:
        """(before_native, after_native) to surround a native call with when the engine has
        callbacks: they collect the exceptions raised inside them, and re-raise them; else (None, None)."""
        if not self.callbacks:
            return None, None
        return self.callback_errors.before_native, self.callback_errors.after_native
