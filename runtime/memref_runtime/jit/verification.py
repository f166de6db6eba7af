"""MLIR's runtime verification, and failed `cf.assert`s that say why instead of vanishing.

`generate-runtime-verification` adds a `cf.assert` before every op whose preconditions it can
check at run time: a memref.load/store index out of bounds, linalg operands whose dynamic
sizes disagree, a subview or cast outside its source, ... Lowered, a failed `cf.assert` calls
`puts(message)` then `abort()`: under a pipe (always, under lit) C's stdout buffer dies with the
process and the message is lost. Here:

- `with_runtime_verification(pipeline)` adds the pass after the pipeline's last bufferization
  pass (before linalg becomes loops and memrefs become LLVM structs);
- `route_assert_failures(module)`, on a lowered module, makes each failed `cf.assert` call
  `@__memref_runtime_assert_failed(message)` instead of `puts`. Inside a call made through
  `__memref_runtime_guarded_call` (JitModule's calls) that function `longjmp`s back to the
  guard, which returns the message: the call raises RuntimeVerificationError, and nothing
  after the failed check ran. Anywhere else (an ExecutionEngine of the caller's own) it flushes
  C's stdio, writes the message to stderr with `write(2, ...)` (unbuffered) and returns to the
  `abort()` that follows, so the process ends with the message and lit's crash report.

The guard keeps the current jump buffer in a POSIX thread-specific slot, so calls from several
threads never share one, and nested calls (a kernel calling a Python callback calling a kernel)
each return to their own guard. A Python callback runs with the slot cleared, so a check that
fails in code it calls some other way aborts rather than jumping across Python frames.

What the jump skips: only frames of the JIT-compiled code. Memory the kernel allocated before
the failed check (memref.alloc) is not freed; results are not read.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

from ..bindings import bindings
from .pipeline_text import module_pipeline, pass_name, top_level_passes

PASS = "generate-runtime-verification"
FAILED = "__memref_runtime_assert_failed"
GUARD = "__memref_runtime_guarded_call"
GUARD_ADDRESS = "__memref_runtime_guard_address"
_JMP_BUF_WORDS = 64  # 512 bytes: glibc's jmp_buf is 200 (x86-64) or 312 (aarch64) bytes


class RuntimeVerificationError(RuntimeError):
    """A check in the kernel failed (a `cf.assert`: runtime verification's checks are ones), so
    the call stopped there; `.message` is MLIR's (the op, what was violated, its location)."""

    def __init__(self, function: str, message: str):
        super().__init__(f"{function}() stopped at a failed check; nothing after it ran:\n{message}")
        self.function, self.message = function, message


# --- the pipeline ---------------------------------------------------------------------------


def _is_bufferization(step: str) -> bool:
    name = pass_name(step)
    return "bufferiz" in name or name.startswith("buffer-")


def with_runtime_verification(pipeline: str) -> str:
    """`pipeline` (a `builtin.module(...)` pipeline) with the runtime-verification pass added after
    its last bufferization pass, or first when it has none; unchanged if it has the pass."""
    steps = top_level_passes(pipeline)
    if steps is None:
        raise ValueError(f"runtime_verification: expected a pipeline of the form builtin.module(...), got {pipeline!r}")
    if any(pass_name(s) == PASS for s in steps):
        return pipeline
    at = max((i + 1 for i, s in enumerate(steps) if _is_bufferization(s)), default=0)
    return module_pipeline(steps[:at] + [PASS] + steps[at:])


# --- the lowered module ---------------------------------------------------------------------

# Declarations it needs, and the two functions; see the module docstring. The jump buffer
# frame is [message pointer, padding, jmp_buf].
_SUPPORT = f"""
llvm.mlir.global internal @__memref_runtime_key(-1 : i64) {{addr_space = 0 : i32}} : i64
llvm.mlir.global internal constant @__memref_runtime_newline("\\0A") {{addr_space = 0 : i32}} : !llvm.array<1 x i8>
llvm.func @pthread_getspecific(i64) -> !llvm.ptr
llvm.func @pthread_setspecific(i64, !llvm.ptr) -> i32
llvm.func @_setjmp(!llvm.ptr) -> i32 attributes {{passthrough = ["returns_twice"]}}
llvm.func @longjmp(!llvm.ptr, i32) attributes {{passthrough = ["noreturn"]}}
llvm.func @strlen(!llvm.ptr) -> i64
llvm.func @write(i32, !llvm.ptr, i64) -> i64
llvm.func @fflush(!llvm.ptr) -> i32
llvm.func @{FAILED}(%message: !llvm.ptr) {{
  %key_slot = llvm.mlir.addressof @__memref_runtime_key : !llvm.ptr
  %key = llvm.load %key_slot : !llvm.ptr -> i64
  %zero = llvm.mlir.constant(0 : i64) : i64
  %has_key = llvm.icmp "sge" %key, %zero : i64
  llvm.cond_br %has_key, ^lookup, ^write
^lookup:
  %frame = llvm.call @pthread_getspecific(%key) : (i64) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %guarded = llvm.icmp "ne" %frame, %null : !llvm.ptr
  llvm.cond_br %guarded, ^jump, ^write
^jump:
  llvm.store volatile %message, %frame : !llvm.ptr, !llvm.ptr
  %buffer = llvm.getelementptr %frame[2] : (!llvm.ptr) -> !llvm.ptr, i64
  %one = llvm.mlir.constant(1 : i32) : i32
  llvm.call @longjmp(%buffer, %one) : (!llvm.ptr, i32) -> ()
  llvm.unreachable
^write:
  %all = llvm.mlir.zero : !llvm.ptr
  %flushed = llvm.call @fflush(%all) : (!llvm.ptr) -> i32
  %length = llvm.call @strlen(%message) : (!llvm.ptr) -> i64
  %stderr = llvm.mlir.constant(2 : i32) : i32
  %written = llvm.call @write(%stderr, %message, %length) : (i32, !llvm.ptr, i64) -> i64
  %newline = llvm.mlir.addressof @__memref_runtime_newline : !llvm.ptr
  %one_byte = llvm.mlir.constant(1 : i64) : i64
  %ended = llvm.call @write(%stderr, %newline, %one_byte) : (i32, !llvm.ptr, i64) -> i64
  llvm.return
}}
llvm.func @{GUARD}(%function: !llvm.ptr, %packed: !llvm.ptr, %key: i64) -> !llvm.ptr
    attributes {{passthrough = ["noinline"]}} {{
  %key_slot = llvm.mlir.addressof @__memref_runtime_key : !llvm.ptr
  llvm.store %key, %key_slot : i64, !llvm.ptr
  %one = llvm.mlir.constant(1 : i64) : i64
  %frame = llvm.alloca %one x !llvm.array<{_JMP_BUF_WORDS + 2} x i64> {{alignment = 16 : i64}} : (i64) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  llvm.store volatile %null, %frame : !llvm.ptr, !llvm.ptr
  %outer = llvm.call @pthread_getspecific(%key) : (i64) -> !llvm.ptr
  %set = llvm.call @pthread_setspecific(%key, %frame) : (i64, !llvm.ptr) -> i32
  %buffer = llvm.getelementptr %frame[2] : (!llvm.ptr) -> !llvm.ptr, i64
  %jumped = llvm.call @_setjmp(%buffer) : (!llvm.ptr) -> i32
  %zero = llvm.mlir.constant(0 : i32) : i32
  %first = llvm.icmp "eq" %jumped, %zero : i32
  llvm.cond_br %first, ^call, ^done
^call:
  llvm.call %function(%packed) : !llvm.ptr, (!llvm.ptr) -> ()
  llvm.br ^done
^done:
  %restored = llvm.call @pthread_setspecific(%key, %outer) : (i64, !llvm.ptr) -> i32
  %message = llvm.load volatile %frame : !llvm.ptr -> !llvm.ptr
  llvm.return %message : !llvm.ptr
}}
llvm.func @{GUARD_ADDRESS}() -> !llvm.ptr {{
  %address = llvm.mlir.addressof @{GUARD} : !llvm.ptr
  llvm.return %address : !llvm.ptr
}}
"""


def _callee(op) -> str | None:
    attrs = op.attributes
    return str(attrs["callee"])[1:] if "callee" in attrs else None


def _assert_failure_calls(module) -> list:
    """The `llvm.call @puts` of each lowered cf.assert: a puts directly followed by abort."""
    found = []
    for function in module.body.operations:
        if function.operation.name != "llvm.func" or not function.operation.regions:
            continue
        for block in function.operation.regions[0].blocks:
            previous = None
            for op in block.operations:
                op = op.operation
                if (
                    op.name == "llvm.call"
                    and previous is not None
                    and _callee(op) == "abort"
                    and _callee(previous) == "puts"
                ):
                    found.append(previous)
                previous = op if op.name == "llvm.call" else None
    return found


def _symbols(module) -> dict:
    ir = bindings().ir
    return {
        ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
        for op in module.body.operations
        if "sym_name" in op.operation.attributes
    }


def routes_asserts(module: Any) -> bool:
    """Whether `module` went through `route_assert_failures` with asserts to route (has the guard)."""
    return GUARD in _symbols(module)


def route_assert_failures(module: Any) -> int:
    """Makes each failed cf.assert of lowered `module` call @__memref_runtime_assert_failed
    (module docstring), adding that function and the guard; returns how many were routed."""
    symbols = _symbols(module)
    if "puts" not in symbols or "abort" not in symbols:
        return 0  # no lowered cf.assert: nothing to do, nothing added
    calls = _assert_failure_calls(module)
    if not calls:
        return 0
    ir = bindings().ir
    if GUARD not in symbols:  # else routed before (lowered twice): the support is there
        support = ir.Module.parse(_SUPPORT, context=module.context)
        for op in list(support.body.operations):
            op = op.operation
            name = ir.StringAttr(op.attributes["sym_name"]).value
            existing = symbols.get(name)
            if existing is None:
                module.body.append(op)
            elif not (
                existing.name == op.name == "llvm.func"
                and not existing.regions[0].blocks
                and str(existing.attributes["function_type"]) == str(op.attributes["function_type"])
            ):
                raise ValueError(
                    f"the module defines @{name}, a name that reporting failed cf.asserts "
                    f"needs for its own declaration or function: {existing}"
                )
    for call in calls:
        call.attributes["callee"] = ir.FlatSymbolRefAttr.get(FAILED, context=module.context)
    return len(calls)


# --- calls through the guard ----------------------------------------------------------------


@functools.cache
def _libc():
    libc = ctypes.CDLL(None)
    libc.pthread_getspecific.argtypes = [ctypes.c_ulong]
    libc.pthread_getspecific.restype = ctypes.c_void_p
    libc.pthread_setspecific.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
    libc.pthread_setspecific.restype = ctypes.c_int
    return libc


@functools.cache
def _thread_key() -> int:
    """One pthread key for the whole process: the slot of the current guard's jump buffer."""
    key = ctypes.c_ulong(0)  # pthread_key_t: unsigned int (glibc) or unsigned long (macOS)
    if _libc().pthread_key_create(ctypes.byref(key), None) != 0:
        raise OSError("pthread_key_create failed: no thread-specific slot for runtime verification")
    return key.value


_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_GUARD = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


class Guard:
    """Calls into one ExecutionEngine through its guard: a failed check raises instead of aborting."""

    def __init__(self, engine: Any) -> None:
        slot = ctypes.c_void_p()
        _PACKED(engine.raw_lookup(GUARD_ADDRESS))(ctypes.addressof((ctypes.c_void_p * 1)(ctypes.addressof(slot))))
        self._guard = _GUARD(slot.value)  # type: ignore[arg-type]  # the guard's address, filled in above
        self._key = _thread_key()

    def caller(self, address: int, name: str) -> Callable[[Any], None]:
        """`native(frame)`: calls the packed wrapper at `address` on `frame` through the guard."""
        guard, key, addressof = self._guard, self._key, ctypes.addressof

        def native(frame):
            message = guard(address, addressof(frame), key)
            if message:
                raise RuntimeVerificationError(name, ctypes.string_at(message).decode(errors="replace"))

        return native

    @staticmethod
    def outside(fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn`, run with the thread's guard slot cleared (a Python callback: see the module docstring)."""
        key, libc = _thread_key(), _libc()

        def unguarded(*args):
            saved = libc.pthread_getspecific(key)
            libc.pthread_setspecific(key, None)
            try:
                return fn(*args)
            finally:
                libc.pthread_setspecific(key, saved)

        return unguarded
