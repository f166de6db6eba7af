"""Callbacks: Python functions that JIT code calls through a private `func.func` declaration.

The ctypes signature comes from the declaration. With `llvm.emit_c_interface` the JIT code
calls `_mlir_ciface_<name>` with a pointer to each memref's descriptor (and results that
are memrefs, complex or several come back through a first out-parameter); without it, it
calls `<name>` with every descriptor field as its own argument. Either way a memref
arrives as a NumPy view of the caller's memory, valid for the duration of the callback;
a view of a global is read-only, as a call's global result is.
"""

from __future__ import annotations

import ctypes
import struct
import threading
from collections.abc import Callable
from typing import Any

from ..conversion import read_ranked_descriptor
from ..descriptors import descriptor_packer
from ..element_types import element_type_for_mlir
from .arguments import scalar_check
from .results import results_layout, through_out_param, view_ranked
from .signatures import FunctionSignature, MemRefSpec, ScalarSpec, UnsupportedSpec

_UNRANKED = struct.Struct("=qQ")  # {rank, pointer to the ranked descriptor}


def add_note(error: BaseException, note: str) -> None:
    """`error.add_note(note)`: on Python 3.10, which lacks it, the note goes to `__notes__` unprinted."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:
        error.__notes__ = [*getattr(error, "__notes__", ()), note]  # type: ignore[attr-defined]  # 3.11's name


def _memref_decoder(spec: MemRefSpec, c_interface: bool, where: str):
    """(ctypes argument types, decode(raw arguments) -> ndarray) of one memref parameter."""
    dtype = element_type_for_mlir(spec.element).dtype
    if spec.shape is None:
        if c_interface:

            def decode(raw):
                rank, descriptor = _UNRANKED.unpack(ctypes.string_at(raw[0], _UNRANKED.size))
                return view_ranked(read_ranked_descriptor(rank, descriptor, where), dtype, None)

            return [ctypes.c_void_p], decode
        return (
            [ctypes.c_int64, ctypes.c_void_p],
            lambda raw: view_ranked(read_ranked_descriptor(raw[0], raw[1], where), dtype, None),
        )

    rank = len(spec.shape)
    packer = descriptor_packer(rank)
    if c_interface:
        return [ctypes.c_void_p], lambda raw: view_ranked(
            packer.unpack(ctypes.string_at(raw[0], packer.size)), dtype, None
        )
    return (
        [ctypes.c_void_p, ctypes.c_void_p] + [ctypes.c_int64] * (1 + 2 * rank),
        lambda raw: view_ranked(raw, dtype, None),
    )


def _scalar_decoder(spec: ScalarSpec, where: str):
    if spec.scalar.ctype is None:
        raise TypeError(
            f"{where} has type {spec.mlir}, which a callback cannot take by value "
            "(LLVM and C pass it differently); pass it in a memref instead"
        )
    if spec.scalar.kind == "bool":
        return [ctypes.c_uint8], lambda raw: bool(raw[0] & 1)  # only the low bit of an i1 is defined
    return [spec.scalar.ctype], lambda raw: raw[0]


def _result_encoder(sig: FunctionSignature, where: str):
    """(restype, out-parameter?, encode(returned value, out address) -> native return value)."""
    results = sig.results
    for i, spec in enumerate(results):
        if isinstance(spec, (MemRefSpec, UnsupportedSpec)):
            raise TypeError(
                f"{where}: result {i} has type {spec.mlir}; a callback can return only "
                "scalars (who would own a returned memref?)"
            )
    checks = [scalar_check(s, f"{where}: result {i}") for i, s in enumerate(results)]
    if not results:
        return None, False, lambda value, out: None
    if not through_out_param(results):
        spec, check = results[0], checks[0]
        if spec.scalar.ctype is None:
            raise TypeError(f"{where}: result 0 has type {spec.mlir}, which a callback cannot return by value")
        return spec.scalar.ctype, False, lambda value, out: check(value, 0)[0]
    if not sig.c_interface:
        raise TypeError(
            f"{where}: several or complex results come back as an LLVM struct by value, "
            "which ctypes cannot return; add llvm.emit_c_interface to the declaration"
        )
    fmt, size = results_layout(results)
    pack_into = struct.Struct(fmt).pack_into

    def encode(value, out):
        values = value if len(results) > 1 else (value,)
        if not isinstance(values, (tuple, list)) or len(values) != len(results):
            raise TypeError(
                f"{where}: expected {len(results)} results ({', '.join(s.mlir for s in results)}), got {value!r}"
            )
        fields = [f for check, v in zip(checks, values) for f in check(v, 0)]
        pack_into((ctypes.c_char * size).from_address(out), 0, *fields)

    return None, True, encode


def make_trampoline(
    sig: FunctionSignature, fn: Callable[..., Any], on_error: Callable[[BaseException], None]
) -> tuple[Any, str]:
    """(a ctypes function pointer for declaration `sig` calling `fn`, its symbol); exceptions go to `on_error`."""
    where = f"callback @{sig.name}"
    restype, out_param, encode = _result_encoder(sig, where)
    argtypes, decoders, at = [ctypes.c_void_p] if out_param else [], [], int(out_param)
    for i, spec in enumerate(sig.inputs):
        if isinstance(spec, UnsupportedSpec):
            raise TypeError(f"{where}: argument {i} has type {spec.mlir}, which a callback cannot take: {spec.reason}")
        types, decode = (
            _memref_decoder(spec, sig.c_interface, f"{where}: argument {i}")
            if isinstance(spec, MemRefSpec)
            else _scalar_decoder(spec, f"{where}: argument {i}")
        )
        decoders.append((at, at + len(types), decode))
        argtypes += types
        at += len(types)
    default = None if restype is None else restype().value  # what native code gets after an error

    def trampoline(*raw):
        try:
            result = fn(*(decode(raw[a:b]) for a, b, decode in decoders))
            return encode(result, raw[0] if out_param else None)
        except BaseException as e:  # noqa: BLE001 - ctypes would print and drop it
            add_note(e, f"raised in {where} ({sig})")
            on_error(e)
            return default

    cfunc = ctypes.CFUNCTYPE(restype, *argtypes)(trampoline)
    symbol = ("_mlir_ciface_" if sig.c_interface else "") + sig.name
    return cfunc, symbol


class CallbackErrors:
    """Exceptions raised inside callbacks, held until the native call in flight returns.

    Per thread: the call that made the native code run raises what its callbacks raised.
    An error from a thread the native code started itself goes to the next call to return.
    """

    def __init__(self) -> None:
        self._state = threading.local()
        self._stray: list = []

    def record(self, error: BaseException) -> None:
        state = self._state
        if getattr(state, "depth", 0):
            if getattr(state, "error", None) is None:  # the first error is the cause of the rest
                state.error = error
        else:
            self._stray.append(error)

    def before_native(self) -> BaseException | None:
        state = self._state
        state.depth = getattr(state, "depth", 0) + 1
        return state.__dict__.pop("error", None)  # an outer call's pending error, kept aside

    def after_native(self, saved: BaseException | None) -> None:
        state = self._state
        state.depth -= 1
        error = state.__dict__.pop("error", None)
        if saved is not None:
            state.error = saved
        if error is None and self._stray and not state.depth:
            error = self._stray.pop(0)
        if error is not None:
            raise error
