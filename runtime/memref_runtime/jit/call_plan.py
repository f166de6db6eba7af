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
from collections.abc import Callable
from typing import Any, NamedTuple

from .arguments import WORD, Param, memref_param, scalar_param, unsupported
from .benchmark import DEFAULT_REPEATS, DEFAULT_WARMUP, run_benchmark
from .benchmark_result import BenchmarkResult
from .callbacks import add_note
from .linked_engine import LinkedEngine
from .results import (
    Ownership,
    memref_decoder,
    result_offsets,
    result_piece,
    results_layout,
    scalar_decoder,
    through_out_param,
)
from .signatures import FunctionSignature, MemRefSpec, UnsupportedSpec

_addressof = ctypes.addressof


class CallPlan(NamedTuple):
    """Everything a call of one function needs, computed once."""

    nargs: int
    frame_type: type
    consts: tuple  # frame offsets whose absolute addresses fill the packed array and pointer slots
    fast: tuple
    check: tuple
    pack_into: Callable[..., None]
    finish: Callable[[Any, tuple], Any]  # (frame, args) -> the Python result
    # Per memref result: (frame offset of the word a caller frees, ranked?): a ranked result's
    # `allocated`, an unranked one's pointer to its heap copy of the descriptor (benchmark.py).
    memref_results: tuple = ()


def build_plan(sig: FunctionSignature, engine_owner: object) -> CallPlan:
    """The plan for calling `sig` (a public function with a body) through its C interface;
    `engine_owner` keeps the engine alive for the views of its globals that calls return."""
    _refuse_unsupported(sig)
    layout = _lay_out(sig)
    return CallPlan(
        nargs=len(sig.inputs),
        frame_type=ctypes.c_int64 * layout.words,
        consts=layout.consts,
        fast=tuple(p.fast for p in layout.params),
        check=tuple(p.check for p in layout.params),
        pack_into=struct.Struct("=" + "q" * len(layout.consts) + "".join(p.fmt for p in layout.params)).pack_into,
        finish=_result_reader(sig, layout, engine_owner),
        memref_results=_memref_result_words(sig, layout),
    )


def _refuse_unsupported(sig: FunctionSignature) -> None:
    for kind, specs in (("argument", sig.inputs), ("result", sig.results)):
        for i, spec in enumerate(specs):
            if isinstance(spec, UnsupportedSpec):
                unsupported(spec, f"{sig.name}(): {kind} {i}")


class _Layout(NamedTuple):
    """Where one function's call puts everything in its frame."""

    params: list[Param]
    consts: tuple  # frame offsets whose absolute addresses fill the packed array, then the slots
    out_param: bool  # results come back through a struct the caller allocates (the result area)
    result_offset: int  # where the result area starts
    result_format: str  # struct format of the result area
    words: int  # the frame's size


def _lay_out(sig: FunctionSignature) -> _Layout:
    """[packed void* array][pointer slots][argument values and descriptors][result area]."""
    out_param = through_out_param(sig.results)
    scalar_result = len(sig.results) == 1 and not out_param
    n_packed = out_param + len(sig.inputs) + scalar_result
    n_slots = out_param + sum(isinstance(s, MemRefSpec) for s in sig.inputs)
    packed = [n_packed * WORD] if out_param else []  # packed[0] -> the out slot, the first slot
    params, slots, result_offset = _place_arguments(
        sig, packed, n_packed * WORD + WORD * out_param, (n_packed + n_slots) * WORD
    )
    if out_param:
        result_format, result_size = results_layout(sig.results)
        slots.insert(0, result_offset)  # the out slot points at the result area
    else:
        result_format, result_size = "=" + (sig.results[0].scalar.fmt if scalar_result else ""), 2 * WORD
        if scalar_result:  # the last packed entry points straight at the result
            packed.append(result_offset)
    return _Layout(
        params,
        tuple(packed + slots),
        out_param,
        result_offset,
        result_format,
        -(-(result_offset + result_size) // WORD),
    )


def _place_arguments(sig: FunctionSignature, packed: list, slot: int, cursor: int):
    """(params, slots, the end of the arguments): each argument's place from `cursor` on, and its
    packed entry appended to `packed`: the argument itself, or (a memref) a slot that points at
    its descriptor, the slots counting from `slot`."""
    params, slots = [], []
    for i, spec in enumerate(sig.inputs):
        where = f"{sig.name}(): argument {i}"
        param = memref_param(spec, where, cursor) if isinstance(spec, MemRefSpec) else scalar_param(spec, where)
        if param.needs_slot:  # packed -> slot -> descriptor
            packed.append(slot)
            slots.append(cursor)
            slot += WORD
        else:  # packed -> the value itself
            packed.append(cursor)
        params.append(param)
        cursor += param.size
    return params, slots, cursor


def _result_reader(sig: FunctionSignature, layout: _Layout, engine_owner):
    """finish(frame, args): the call's Python result, read from the frame's result area."""
    unpack_from, at = struct.Struct(layout.result_format).unpack_from, layout.result_offset
    if not sig.results:

        def finish(frame, args):
            return None
    elif not layout.out_param:  # one scalar, not complex

        def finish(frame, args):
            return unpack_from(frame, at)[0]
    else:
        decoders, start = [], 0
        for i, spec in enumerate(sig.results):
            width = len(result_piece(spec)[0])  # one format letter per value
            decode = (
                memref_decoder(spec, f"{sig.name}(): result {i}")
                if isinstance(spec, MemRefSpec)
                else scalar_decoder(spec)
            )
            decoders.append((start, start + width, decode))
            start += width
        memref_positions = tuple(i for i, s in enumerate(sig.inputs) if isinstance(s, MemRefSpec))
        returns_memrefs = any(isinstance(s, MemRefSpec) for s in sig.results)

        def finish(frame, args):
            fields = unpack_from(frame, at)
            ownership = Ownership(args, memref_positions, engine_owner) if returns_memrefs else None
            values = tuple(decode(fields[a:b], ownership) for a, b, decode in decoders)
            return values if len(values) > 1 else values[0]

    return finish


def _memref_result_words(sig: FunctionSignature, layout: _Layout) -> tuple:
    """Per memref result: (frame offset of the word a caller frees, ranked?)."""
    if not layout.out_param:
        return ()
    return tuple(
        (layout.result_offset + at + (0 if spec.shape is not None else WORD), spec.shape is not None)
        for spec, at in zip(sig.results, result_offsets(sig.results))
        if isinstance(spec, MemRefSpec)
    )


# --- calls ----------------------------------------------------------------------------------


class Invoker:
    """How one function of a linked engine is called, built once per function: `pack(args)`
    checks and converts the Python arguments into a fresh frame, `run(frame, args)` makes the
    native call and reads the results, `bind(*args)` packs once for repeated calls.

    `function` is what `jit.<name>` is after its first call: a plain function of the arguments,
    the hot path, so no object's attributes are read per call. It carries what JitFunction offers
    (`signature`, `bind`, `benchmark`, `owner`) and this Invoker (`invoker`).

    `owner` (the JitModule, whose engine holds the code) is kept alive by the invoker, its
    function and every bound call: a call never runs freed code. When the engine has callbacks,
    their hooks surround the native call and re-raise an exception raised inside them; under
    runtime verification the call goes through the guard, which raises when it stopped at a
    failed check (no results are read then).
    """

    def __init__(
        self, plan: CallPlan, signature: FunctionSignature, linked: LinkedEngine, owner: object = None
    ) -> None:
        self.plan, self.signature, self.linked, self.owner = plan, signature, linked, owner
        self.name = signature.name
        self.native = linked.native(self.name)
        before_native, after_native = linked.callback_hooks()
        self.hooked = before_native is not None  # the engine has callbacks
        self.pack = _packer(plan, signature)
        self.run = _runner(plan.finish, self.name, self.native, before_native, after_native)
        self.function = self._function()

    def _function(self):
        pack, run = self.pack, self.run

        def invoke(*args):
            return run(pack(args), args)

        invoke.__name__ = invoke.__qualname__ = self.name
        invoke.__doc__ = f"Calls {self.signature} in the JIT-compiled module."
        # A plain function, the hot path: what JitFunction offers rides on it as attributes.
        invoke.signature, invoke.bind, invoke.benchmark, invoke.owner, invoke.invoker = (  # type: ignore[attr-defined]
            self.signature,
            self.bind,
            self.benchmark,
            self.owner,
            self,
        )
        return invoke

    def bind(self, *args: Any) -> Callable[[], Any]:
        """Checks and packs `args` once and returns a function of no arguments that calls the
        function on them: the arrays' current contents are read at each call, but not later
        changes of their shape. It keeps the arguments alive (`.args`, and the views it reads of
        other frameworks' arrays, in `.frame`) and the JitModule (`.owner`). Its one frame holds
        the results, so use it from one thread at a time (bind again for another thread)."""
        frame = self.pack(args)
        if self.hooked:
            run = self.run

            def bound():
                return run(frame, args)
        else:
            native, finish = self.native, self.plan.finish

            def bound():
                native(frame)
                return finish(frame, args)

        bound.__name__ = bound.__qualname__ = f"{self.name}.bound"
        bound.args, bound.owner, bound.frame = args, self.owner, frame  # type: ignore[attr-defined]  # as invoke's
        return bound

    def benchmark(
        self,
        *args: Any,
        warmup: float = DEFAULT_WARMUP,
        repeats: int = DEFAULT_REPEATS,
        min_time: float | None = None,
        number: int | None = None,
        flops: float | None = None,
        bytes: float | None = None,
        clock: str = "cpu",
    ) -> BenchmarkResult:
        """Times calls on `args` in a native loop (benchmark.py); returns a BenchmarkResult."""
        return run_benchmark(
            self,
            args,
            warmup=warmup,
            repeats=repeats,
            min_time=min_time,
            number=number,
            flops=flops,
            bytes=bytes,
            clock=clock,
        )


def _packer(plan: CallPlan, signature: FunctionSignature):
    """pack(args): a fresh frame holding `args`, checked and converted."""
    nargs, frame_type, consts, fast, check, pack_into = plan[:6]
    name = signature.name

    def pack(args):
        if len(args) != nargs:
            raise TypeError(
                f"{name}() takes {nargs} argument{'s' * (nargs != 1)} "
                f"({', '.join(s.mlir for s in signature.inputs)}), got {len(args)}"
            )
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

    return pack


def _runner(finish, name: str, native, before_native=None, after_native=None):
    """run(frame, args): the native call on a packed frame, and its results; between
    `before_native()` and `after_native(its result)` when the engine has callbacks."""
    if before_native is None:

        def run(frame, args):
            native(frame)
            return finish(frame, args)

        return run

    def run_with_hooks(frame, args):
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

    return run_with_hooks


def make_invoker(
    plan: CallPlan, signature: FunctionSignature, linked: LinkedEngine, owner: object = None
) -> Callable[..., Any]:
    """`jit.<name>` after its first call: the function of a new Invoker (process/timing.py wraps this)."""
    return Invoker(plan, signature, linked, owner).function
