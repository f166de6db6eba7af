"""The soft-float conversions JIT code may call: from libgcc_s, else compiled here.

LLVM lowers a conversion to f16 or bf16 that the host CPU has no instruction for (f64 -> f16 on
x86, f32 -> bf16 without AVX512-BF16 or AVX-NE-CONVERT) to a call of a compiler-rt/libgcc
builtin. The JIT finds those only where something loaded libgcc_s with global symbols (the LLVM
wheel's process does, torch-mlir's does not), so they are looked up there and handed to each
engine by address. libgcc_s before GCC 13 (Debian 12's) has no bf16 builtins, and newer LLVMs
(torch-mlir's) call them: those two are then compiled here by the ExecutionEngine itself, once
per process and only for a module that has bf16 values, and round as compiler-rt does (to
nearest, ties to even; NaN stays a quiet NaN of the same sign).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

from ..bindings import bindings

LIBGCC_BUILTINS = ("__truncdfhf2", "__truncsfhf2", "__truncsfbf2", "__truncdfbf2")

# f32 -> bf16: round the bits to nearest even at bit 16, NaN made quiet. f64 -> bf16 goes
# through f32 rounded to odd (truncated, its last bit set when inexact), which then rounds to
# bf16 as f64 -> bf16 would directly: no double rounding.
_BUILTINS_MLIR = r"""
llvm.func @__memref_runtime_f32_bits_to_bf16(%bits: i32, %nan: i1) -> bf16 {
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %c16 = llvm.mlir.constant(16 : i32) : i32
  %half = llvm.mlir.constant(32767 : i32) : i32
  %quiet_bit = llvm.mlir.constant(64 : i32) : i32
  %high = llvm.lshr %bits, %c16 : i32
  %odd = llvm.and %high, %c1 : i32
  %bias = llvm.add %half, %odd : i32
  %biased = llvm.add %bits, %bias : i32
  %rounded = llvm.lshr %biased, %c16 : i32
  %quiet = llvm.or %high, %quiet_bit : i32
  %result = llvm.select %nan, %quiet, %rounded : i1, i32
  %short = llvm.trunc %result : i32 to i16
  %bf16 = llvm.bitcast %short : i16 to bf16
  llvm.return %bf16 : bf16
}

llvm.func @__truncsfbf2(%x: f32) -> bf16 {
  %bits = llvm.bitcast %x : f32 to i32
  %nan = llvm.fcmp "uno" %x, %x : f32
  %r = llvm.call @__memref_runtime_f32_bits_to_bf16(%bits, %nan) : (i32, i1) -> bf16
  llvm.return %r : bf16
}

llvm.func @__truncdfbf2(%x: f64) -> bf16 {
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %nearest = llvm.fptrunc %x : f64 to f32
  %back = llvm.fpext %nearest : f32 to f64
  %inexact = llvm.fcmp "one" %back, %x : f64
  %abs_back = llvm.intr.fabs(%back) : (f64) -> f64
  %abs_x = llvm.intr.fabs(%x) : (f64) -> f64
  %rounded_up = llvm.fcmp "ogt" %abs_back, %abs_x : f64
  %bits = llvm.bitcast %nearest : f32 to i32
  %below = llvm.sub %bits, %c1 : i32
  %truncated = llvm.select %rounded_up, %below, %bits : i1, i32
  %odd = llvm.or %truncated, %c1 : i32
  %to_odd = llvm.select %inexact, %odd, %bits : i1, i32
  %nan = llvm.fcmp "uno" %x, %x : f64
  %r = llvm.call @__memref_runtime_f32_bits_to_bf16(%to_odd, %nan) : (i32, i1) -> bf16
  llvm.return %r : bf16
}

llvm.func @__memref_runtime_soft_float_addresses(%table: !llvm.ptr) {
  %sf = llvm.mlir.addressof @__truncsfbf2 : !llvm.ptr
  %df = llvm.mlir.addressof @__truncdfbf2 : !llvm.ptr
  llvm.store %sf, %table : !llvm.ptr, !llvm.ptr
  %second = llvm.getelementptr %table[1] : (!llvm.ptr) -> !llvm.ptr, !llvm.ptr
  llvm.store %df, %second : !llvm.ptr, !llvm.ptr
  llvm.return
}
"""
COMPILED_BUILTINS = ("__truncsfbf2", "__truncdfbf2")  # in the order the table above stores them
_KEPT_ALIVE: list = []  # the engine compiled_builtins made: its builtins' addresses point into it


@functools.cache
def libgcc_builtins() -> tuple:
    """(name, address) of the builtins the process's libgcc_s defines."""
    import ctypes.util

    library = None
    for name in ("libgcc_s.so.1", None):  # the soname first: find_library runs ldconfig
        name = name or ctypes.util.find_library("gcc_s")
        try:
            library = ctypes.CDLL(name) if name else None
            break
        except OSError:
            continue
    found = []
    for symbol in LIBGCC_BUILTINS if library is not None else ():
        try:
            found.append((symbol, ctypes.cast(getattr(library, symbol), ctypes.c_void_p).value))
        except AttributeError:  # an older libgcc
            pass
    return tuple(found)


@functools.cache
def compiled_builtins() -> tuple:
    """(name, address) of the bf16 builtins compiled by the ExecutionEngine; the engine stays
    alive with the process."""
    mlir = bindings()
    with mlir.ir.Context():
        module = mlir.ir.Module.parse(_BUILTINS_MLIR)
        engine = mlir.execution_engine.ExecutionEngine(module, opt_level=0)
    table = (ctypes.c_void_p * len(COMPILED_BUILTINS))()
    # The ExecutionEngine's packed wrapper of an llvm.func: one void* per argument.
    fill = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p))(
        engine.raw_lookup("__memref_runtime_soft_float_addresses")
    )
    table_pointer = ctypes.c_void_p(ctypes.addressof(table))
    fill((ctypes.c_void_p * 1)(ctypes.addressof(table_pointer)))
    _KEPT_ALIVE.append(engine)
    return tuple(zip(COMPILED_BUILTINS, table))


def builtins(uses_bf16: Callable[[], bool] = lambda: True) -> tuple:
    """(name, ctypes.c_void_p address) of the soft-float builtins an engine gets (what
    raw_register_runtime takes): libgcc's, and the bf16 ones compiled here where libgcc_s lacks
    them and `uses_bf16()` says the engine's module has bf16 values (a JIT of ~40 ms, once per
    process; `uses_bf16` is not called where libgcc_s has them)."""
    found = libgcc_builtins()
    have = {name for name, _ in found}
    if not all(name in have for name in COMPILED_BUILTINS) and uses_bf16():
        found += tuple((n, a) for n, a in compiled_builtins() if n not in have)
    return tuple((name, ctypes.c_void_p(address)) for name, address in found)
