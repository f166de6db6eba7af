"""The native timing loop of JitFunction.benchmark: no Python between two calls of a kernel.

One small module, JIT-compiled once per process, holds

    @__memref_runtime_bench(fn, packed, number, samples, out, frees, nfrees, clocks, nclocks)

which, `samples` times, reads each of the `nclocks` clocks in `clocks` (`clock_gettime` ids),
calls `fn(packed)` `number` times and reads the clocks again in the opposite order, storing the
nanoseconds that clock `c` counted in sample `s` in `out[s * nclocks + c]`. Read in that order,
the first clock's interval holds the second's, which holds the third's: the innermost clock
(the thread's CPU time) counts the least of the clock reads themselves.

Why several clocks: a wall-clock sample counts the time the scheduler gave other processes
while the kernel waited; the CPU time of the thread (CLOCK_THREAD_CPUTIME_ID) counts only the
time the kernel ran, and the process's (CLOCK_PROCESS_CPUTIME_ID) adds that of the process's
other threads, for kernels that use them (docs/benchmarking.md).

`fn` is a packed wrapper (`void fn(void **args)`: the ExecutionEngine makes one for every
function, and a JitModule's kernels are called through `_mlir__mlir_ciface_<name>`), `packed`
the frame a call plan packed once. The call goes through a function pointer the loop cannot see
through, so LLVM can neither inline nor drop it.

After each call the loop frees what the call allocated for its results, so that timing a
function that returns fresh memrefs does not leak one buffer per call: `frees` holds `nfrees`
pairs (address of a word in the result area, kind), kind FREE_DATA (free the word: a ranked
result's `allocated`), FREE_DESCRIPTOR (free the word: an unranked result's heap copy of its
descriptor) or FREE_BOTH (free the descriptor's `allocated`, then the descriptor).

`@__memref_runtime_bench_empty` is the empty kernel that measures what the loop itself costs.
The module's Context is dropped once the engine exists (the engine does not need it), so no
MLIR Context stays alive for `memref_runtime.testing.run` to complain about.
"""

from __future__ import annotations

import ctypes
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..bindings import bindings

FREE_DATA, FREE_DESCRIPTOR, FREE_BOTH = 0, 1, 2
# The clocks every sample reads, outermost first: name -> clock_gettime id.
CLOCKS = {
    "wall": time.CLOCK_MONOTONIC,
    "process": time.CLOCK_PROCESS_CPUTIME_ID,
    "thread": time.CLOCK_THREAD_CPUTIME_ID,
}
MAX_CLOCKS = 4

_LOOP_MLIR = r"""
llvm.func @clock_gettime(i32, !llvm.ptr) -> i32
llvm.func @free(!llvm.ptr)

llvm.func internal @__memref_runtime_now(%clock: i32, %timespec: !llvm.ptr) -> i64
    attributes {passthrough = ["alwaysinline"]} {
  %status = llvm.call @clock_gettime(%clock, %timespec) : (i32, !llvm.ptr) -> i32
  %seconds = llvm.load %timespec : !llvm.ptr -> i64
  %at_nanoseconds = llvm.getelementptr %timespec[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %nanoseconds = llvm.load %at_nanoseconds : !llvm.ptr -> i64
  %billion = llvm.mlir.constant(1000000000 : i64) : i64
  %scaled = llvm.mul %seconds, %billion : i64
  %now = llvm.add %scaled, %nanoseconds : i64
  llvm.return %now : i64
}

// starts[c] = now(clocks[c]), c = 0 .. n-1.
llvm.func internal @__memref_runtime_start(%clocks: !llvm.ptr, %n: i64, %starts: !llvm.ptr, %timespec: !llvm.ptr)
    attributes {passthrough = ["alwaysinline"]} {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  llvm.br ^loop(%c0 : i64)
^loop(%c: i64):
  %more = llvm.icmp "slt" %c, %n : i64
  llvm.cond_br %more, ^read, ^done
^read:
  %at_clock = llvm.getelementptr %clocks[%c] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %clock = llvm.load %at_clock : !llvm.ptr -> i32
  %now = llvm.call @__memref_runtime_now(%clock, %timespec) : (i32, !llvm.ptr) -> i64
  %at_start = llvm.getelementptr %starts[%c] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %now, %at_start : i64, !llvm.ptr
  %next = llvm.add %c, %c1 : i64
  llvm.br ^loop(%next : i64)
^done:
  llvm.return
}

// row[c] = now(clocks[c]) - starts[c], c = n-1 .. 0 (the reverse order of the start).
llvm.func internal @__memref_runtime_stop(%clocks: !llvm.ptr, %n: i64, %starts: !llvm.ptr, %row: !llvm.ptr,
                                          %timespec: !llvm.ptr) attributes {passthrough = ["alwaysinline"]} {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %last = llvm.sub %n, %c1 : i64
  llvm.br ^loop(%last : i64)
^loop(%c: i64):
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %more = llvm.icmp "sge" %c, %c0 : i64
  llvm.cond_br %more, ^read, ^done
^read:
  %at_clock = llvm.getelementptr %clocks[%c] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %clock = llvm.load %at_clock : !llvm.ptr -> i32
  %now = llvm.call @__memref_runtime_now(%clock, %timespec) : (i32, !llvm.ptr) -> i64
  %at_start = llvm.getelementptr %starts[%c] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %start = llvm.load %at_start : !llvm.ptr -> i64
  %elapsed = llvm.sub %now, %start : i64
  %at_out = llvm.getelementptr %row[%c] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.store %elapsed, %at_out : i64, !llvm.ptr
  %next = llvm.sub %c, %c1 : i64
  llvm.br ^loop(%next : i64)
^done:
  llvm.return
}

llvm.func @__memref_runtime_bench(%fn: !llvm.ptr, %packed: !llvm.ptr, %number: i64, %samples: i64,
                                  %out: !llvm.ptr, %frees: !llvm.ptr, %nfrees: i64,
                                  %clocks: !llvm.ptr, %nclocks: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %c2 = llvm.mlir.constant(2 : i64) : i64
  %cmax = llvm.mlir.constant(MAX_CLOCKS : i64) : i64
  %timespec = llvm.alloca %c1 x !llvm.array<2 x i64> {alignment = 8 : i64} : (i64) -> !llvm.ptr
  %starts = llvm.alloca %cmax x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
  llvm.br ^sample(%c0 : i64)
^sample(%s: i64):
  %more_samples = llvm.icmp "slt" %s, %samples : i64
  llvm.cond_br %more_samples, ^start, ^done
^start:
  llvm.call @__memref_runtime_start(%clocks, %nclocks, %starts, %timespec)
    : (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr) -> ()
  llvm.br ^call(%c0 : i64)
^call(%i: i64):
  %more_calls = llvm.icmp "slt" %i, %number : i64
  llvm.cond_br %more_calls, ^body, ^stop
^body:
  llvm.call %fn(%packed) : !llvm.ptr, (!llvm.ptr) -> ()
  llvm.br ^free(%c0 : i64)
^free(%j: i64):
  %more_frees = llvm.icmp "slt" %j, %nfrees : i64
  llvm.cond_br %more_frees, ^free_one, ^next_call
^free_one:
  %pair = llvm.mul %j, %c2 : i64
  %at_slot = llvm.getelementptr %frees[%pair] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %slot = llvm.load %at_slot : !llvm.ptr -> !llvm.ptr
  %at_kind = llvm.getelementptr %at_slot[1] : (!llvm.ptr) -> !llvm.ptr, i64
  %kind = llvm.load %at_kind : !llvm.ptr -> i64
  %pointer = llvm.load %slot : !llvm.ptr -> !llvm.ptr
  %both = llvm.icmp "eq" %kind, %c2 : i64
  llvm.cond_br %both, ^free_data, ^free_pointer
^free_data:
  %data = llvm.load %pointer : !llvm.ptr -> !llvm.ptr
  llvm.call @free(%data) : (!llvm.ptr) -> ()
  llvm.br ^free_pointer
^free_pointer:
  llvm.call @free(%pointer) : (!llvm.ptr) -> ()
  %j_next = llvm.add %j, %c1 : i64
  llvm.br ^free(%j_next : i64)
^next_call:
  %i_next = llvm.add %i, %c1 : i64
  llvm.br ^call(%i_next : i64)
^stop:
  %row_start = llvm.mul %s, %nclocks : i64
  %row = llvm.getelementptr %out[%row_start] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  llvm.call @__memref_runtime_stop(%clocks, %nclocks, %starts, %row, %timespec)
    : (!llvm.ptr, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %s_next = llvm.add %s, %c1 : i64
  llvm.br ^sample(%s_next : i64)
^done:
  llvm.return
}

llvm.func @__memref_runtime_bench_empty() {
  llvm.return
}
""".replace("MAX_CLOCKS", str(MAX_CLOCKS))

_PACKED = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


@functools.cache
def _engine():
    """The loop's ExecutionEngine, compiled once per process (~20 ms) and kept with it."""
    mlir = bindings()
    with mlir.ir.Context():
        module = mlir.ir.Module.parse(_LOOP_MLIR)
        return mlir.execution_engine.ExecutionEngine(module, opt_level=2)


@functools.cache
def loop_address() -> int:
    """The packed wrapper of @__memref_runtime_bench: `void (void **args)`."""
    return _engine().raw_lookup("__memref_runtime_bench")


@functools.cache
def empty_kernel_address() -> int:
    """The packed wrapper of the empty kernel, which ignores its frame."""
    return _engine().raw_lookup("__memref_runtime_bench_empty")


class _Arguments(ctypes.Structure):
    _fields_ = [
        ("fn", ctypes.c_void_p),
        ("packed", ctypes.c_void_p),
        ("number", ctypes.c_int64),
        ("samples", ctypes.c_int64),
        ("out", ctypes.c_void_p),
        ("frees", ctypes.c_void_p),
        ("nfrees", ctypes.c_int64),
        ("clocks", ctypes.c_void_p),
        ("nclocks", ctypes.c_int64),
    ]


class TimingLoop:
    """The loop set up for one kernel and one packed frame; `run(number, samples)` times it.

    `enter(args_address)` runs the loop's packed wrapper: a plain ctypes call, or a JitModule's
    runtime-verification guard (which raises when a check in the kernel failed)."""

    def __init__(
        self,
        kernel: int,
        packed: int,
        frees: Sequence[tuple[int, int]] = (),
        enter: Callable[[Any], object] | None = None,
        clocks: Sequence[str] = tuple(CLOCKS),
    ) -> None:
        unknown = [c for c in clocks if c not in CLOCKS]
        if unknown or not 0 < len(clocks) <= MAX_CLOCKS:
            raise ValueError(f"TimingLoop: clocks must be 1 to {MAX_CLOCKS} of {sorted(CLOCKS)}, got {clocks!r}")
        self.clocks = tuple(clocks)
        self._clock_ids = (ctypes.c_int32 * len(clocks))(*(CLOCKS[c] for c in clocks))
        self._args = _Arguments(fn=kernel, packed=packed, clocks=ctypes.addressof(self._clock_ids), nclocks=len(clocks))
        self._frees = (ctypes.c_int64 * max(2 * len(frees), 1))(*(w for pair in frees for w in pair))
        self._args.frees, self._args.nfrees = ctypes.addressof(self._frees), len(frees)
        fields = [getattr(_Arguments, field[0]) for field in _Arguments._fields_]
        base = ctypes.addressof(self._args)
        self._packed = (ctypes.c_void_p * len(fields))(*(base + f.offset for f in fields))
        self._enter = enter or _PACKED(loop_address())
        self._out: ctypes.Array[ctypes.c_int64] | None = None

    def run(self, number: int, samples: int) -> dict[str, list[int]]:
        """Clock name -> the nanoseconds it counted in each of `samples` samples of `number` calls."""
        width = len(self.clocks)
        if self._out is None or len(self._out) < samples * width:
            self._out = (ctypes.c_int64 * (samples * width))()
        args = self._args
        args.number, args.samples, args.out = number, samples, ctypes.addressof(self._out)
        self._enter(self._packed)
        values = self._out[: samples * width]
        return {clock: values[c::width] for c, clock in enumerate(self.clocks)}


@functools.cache
def _empty_number() -> int:
    """Calls of the empty kernel per sample such that a sample lasts about 0.2 ms of the
    thread's CPU time (found once)."""
    loop, number = TimingLoop(empty_kernel_address(), 0, clocks=("thread",)), 1024
    while True:
        elapsed = min(loop.run(number, 3)["thread"])
        if elapsed >= 200_000 or number >= 1 << 30:
            return number
        number *= 4 if elapsed < 50_000 else 2


def loop_overhead(samples: int = 5) -> dict[str, float]:
    """What one iteration of the loop costs, in seconds, on each clock: the median per-call time
    of the empty kernel through it (the call through a pointer, the free-list test, the loop)."""
    number = _empty_number()
    times = TimingLoop(empty_kernel_address(), 0).run(number, samples)
    return {clock: sorted(t)[len(t) // 2] / number / 1e9 for clock, t in times.items()}
