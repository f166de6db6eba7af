"""Call plans: Python values in, the C-interface wrapper's packed frame, Python values out.

A plan is built once per function. A call allocates one zeroed ctypes frame (fresh per call,
so concurrent calls never share memory) laid out as

    [packed void* array][pointer slots][argument values and descriptors][result area]

and fills everything but the result area with a single `struct.pack_into`. The packed
wrapper `_mlir__mlir_ciface_<f>` reads argument i from the address in packed[i]; for a
memref that address holds a pointer to the descriptor. Under the C interface, memref,
complex and multiple results come back through a first out-parameter (a struct the caller
allocates); a single other scalar comes back through a trailing packed slot.
"""

from __future__ import annotations

import ctypes
import struct
from typing import NamedTuple

from .arguments import WORD, memref_param, scalar_param, unsupported
from .results import (
    Ownership,
    memref_decoder,
    result_offsets,
    result_piece,
    results_layout,
    scalar_decoder,
)
from .signatures import FunctionSignature, MemRefSpec, UnsupportedSpec

_addressof = ctypes.addressof


def add_note(error: BaseException, note: str) -> None:
    """`error.add_note(note)`: on Python 3.10, which lacks it, the note goes to `__notes__` unprinted."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:
        error.__notes__ = [*getattr(error, "__notes__", ()), note]


class CallPlan(NamedTuple):
    """Everything a call of one function needs, computed once."""

    nargs: int
    frame_type: type
    consts: tuple  # frame offsets whose absolute addresses fill the packed array and pointer slots
    fast: tuple
    check: tuple
    pack_into: object
    finish: object  # (frame, args) -> the Python result
    # Per memref result: (frame offset of the word a caller frees, ranked?): a ranked result's
    # `allocated`, an unranked one's pointer to its heap copy of the descriptor (benchmark.py).
    memref_results: tuple = ()


def _out_param(results) -> bool:
    return len(results) > 1 or (len(results) == 1 and (
        isinstance(results[0], MemRefSpec) or results[0].scalar.kind == "complex"))


def build_plan(sig: FunctionSignature, engine_owner) -> CallPlan:
    """The plan for calling `sig` (a public function with a body) through its C interface."""
    name = sig.name
    for i, spec in enumerate(sig.inputs):
        if isinstance(spec, UnsupportedSpec):
            unsupported(spec, f"{name}(): argument {i}")
    for i, spec in enumerate(sig.results):
        if isinstance(spec, UnsupportedSpec):
            unsupported(spec, f"{name}(): result {i}")
    out_param = _out_param(sig.results)
    scalar_result = len(sig.results) == 1 and not out_param
    n_packed = out_param + len(sig.inputs) + scalar_result
    n_slots = out_param + sum(isinstance(s, MemRefSpec) for s in sig.inputs)
    cursor = (n_packed + n_slots) * WORD  # arguments start after the packed array and slots

    params, packed, slots = [], [], []
    slot = n_packed * WORD
    if out_param:
        packed.append(slot)
        slot += WORD
    for i, spec in enumerate(sig.inputs):
        where = f"{name}(): argument {i}"
        param = (memref_param(spec, where, cursor) if isinstance(spec, MemRefSpec)
                 else scalar_param(spec, where))
        if param.needs_slot:  # packed -> slot -> descriptor
            packed.append(slot)
            slots.append(cursor)
            slot += WORD
        else:  # packed -> the value itself
            packed.append(cursor)
        params.append(param)
        cursor += param.size

    result_offset = cursor
    if out_param:
        fmt, result_size = results_layout(sig.results)
        slots.insert(0, result_offset)  # the out slot comes first among the slots
    else:
        fmt = "=" + (sig.results[0].scalar.fmt if scalar_result else "")
        result_size = 2 * WORD
        if scalar_result:
            packed.append(result_offset)
    unpack_from = struct.Struct(fmt).unpack_from

    decoders, start = [], 0
    for i, spec in enumerate(sig.results):
        width = len(result_piece(spec)[0])  # one format letter per value
        decode = (memref_decoder(spec, f"{name}(): result {i}") if isinstance(spec, MemRefSpec)
                  else scalar_decoder(spec))
        decoders.append((start, start + width, decode))
        start += width
    memref_positions = tuple(i for i, s in enumerate(sig.inputs) if isinstance(s, MemRefSpec))
    memref_results = tuple(
        (result_offset + at + (0 if spec.shape is not None else WORD), spec.shape is not None)
        for spec, at in zip(sig.results, result_offsets(sig.results) if out_param else ())
        if isinstance(spec, MemRefSpec))
    returns_memrefs = any(isinstance(s, MemRefSpec) for s in sig.results)

    if not sig.results:
        def finish(frame, args):
            return None
    elif scalar_result and sig.results[0].scalar.kind != "complex":
        def finish(frame, args):
            return unpack_from(frame, result_offset)[0]
    else:
        def finish(frame, args):
            fields = unpack_from(frame, result_offset)
            ownership = Ownership(args, memref_positions, engine_owner) if returns_memrefs else None
            values = tuple(decode(fields[a:b], ownership) for a, b, decode in decoders)
            return values if len(values) > 1 else values[0]

    frame_words = -(-(result_offset + result_size) // WORD)
    return CallPlan(
        nargs=len(sig.inputs),
        frame_type=ctypes.c_int64 * frame_words,
        consts=tuple(packed + slots),
        fast=tuple(p.fast for p in params),
        check=tuple(p.check for p in params),
        pack_into=struct.Struct("=" + "q" * (len(packed) + len(slots)) + "".join(p.fmt for p in params)).pack_into,
        finish=finish,
        memref_results=memref_results,
    )


def make_invoker(plan: CallPlan, address: int, signature: FunctionSignature,
                 before_native=None, after_native=None, *, native=None, owner=None):
    """A function taking the Python arguments, calling the packed wrapper at `address`.

    `owner` (the JitModule, whose engine holds the code at `address`) is kept alive by the
    function and by every bound call made from it: a call never runs freed code.

    `before_native()` and `after_native(its result)` surround the native call when the
    module has callbacks: they collect exceptions raised inside them and re-raise them.
    `native(frame)`, if given, makes the call instead (runtime verification's guard, which
    raises when the call stopped at a failed check: no results are read then).
    The function's `bind(*args)` packs the arguments once for repeated calls.
    """
    nargs, frame_type, consts, fast, check, pack_into, finish, _ = plan
    native = native or ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
    name = signature.name

    def pack(args):
        if len(args) != nargs:
            raise TypeError(f"{name}() takes {nargs} argument{'s' * (nargs != 1)} "
                            f"({', '.join(s.mlir for s in signature.inputs)}), got {len(args)}")
        frame = frame_type()
        base = _addressof(frame)
        values = [base + o for o in consts]
        for convert, value in zip(fast, args):
            values += convert(value, frame)
        try:
            pack_into(frame, 0, *values)
        except (struct.error, OverflowError):  # a scalar out of range: the exact checks say which
            values = [base + o for o in consts]
            for convert, value in zip(check, args):
                values += convert(value, frame)
            pack_into(frame, 0, *values)
        return frame

    def run(frame, args):
        if before_native is None:
            native(frame)
            return finish(frame, args)
        saved = before_native()
        try:
            native(frame)
        except BaseException as stopped:  # the call ended early: a callback's error comes first
            try:
                after_native(saved)
            except BaseException as error:
                add_note(error, f"then {name}() stopped: {stopped}")
                raise error from None
            raise
        try:
            after_native(saved)  # raises a callback's exception instead of returning results
        except BaseException as error:
            # The results still exist: decoding them hands memory the JIT code allocated to
            # free-on-collect owners, and dropping them here frees it.
            try:
                finish(frame, args)
            except Exception as also:  # noqa: BLE001 - the callback's exception is the one raised
                add_note(error, f"reading the results of {name}() failed too: {also}")
            raise
        return finish(frame, args)

    def invoke(*args):
        return run(pack(args), args)

    def bind(*args):
        """Checks and packs `args` once and returns a function of no arguments that calls
        `name` on them: the arrays' current contents are read at each call, but not later
        changes of their shape. It keeps the arguments alive (`.args`, and the views it reads of
        other frameworks' arrays). Its one frame holds the results, so use it from one thread
        at a time (bind again for another thread)."""
        frame = pack(args)
        if before_native is None:
            def bound():
                native(frame)
                return finish(frame, args)
        else:
            def bound():
                return run(frame, args)
        bound.__name__ = bound.__qualname__ = f"{name}.bound"
        bound.args, bound.owner, bound.frame = args, owner, frame
        return bound

    invoke.__name__ = invoke.__qualname__ = name
    invoke.__doc__ = f"Calls {signature} in the JIT-compiled module."
    invoke.bind, invoke.owner, invoke.memref_results = bind, owner, plan.memref_results
    return invoke
