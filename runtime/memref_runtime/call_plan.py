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
import math
import numbers
import operator
import struct
from typing import NamedTuple

import numpy as np

from .conversion import _element_strides, read_ranked_descriptor, view_memref
from .descriptors import MAX_RANK
from .element_types import C64, C128, describe_dtype, element_type_for_mlir
from .signatures import DYNAMIC, FunctionSignature, MemRefSpec, ScalarSpec, UnsupportedSpec

_WORD = 8
GLOBAL_ALLOCATED = 0xDEADBEEF  # what memref.get_global's lowering puts in `allocated`

_addressof = ctypes.addressof
_from_buffer = ctypes.c_char.from_buffer
_ndarray = np.ndarray
_MaskedArray = np.ma.MaskedArray
_libc = ctypes.CDLL(None)
_free = _libc.free
_free.argtypes, _free.restype = [ctypes.c_void_p], None
_byte_bounds = getattr(getattr(np.lib, "array_utils", np), "byte_bounds", None) or np.byte_bounds


def add_note(error: BaseException, note: str) -> None:
    """`error.add_note(note)`: on Python 3.10, which lacks it, the note goes to `__notes__` unprinted."""
    if hasattr(error, "add_note"):
        error.add_note(note)
    else:
        error.__notes__ = [*getattr(error, "__notes__", ()), note]


class NativeAllocation:
    """Memory the JIT code allocated (malloc) and handed to Python: freed once no view needs it.

    The JIT resolves `malloc` and `free` through the process's symbol table, so libc's `free`
    is the allocator that matches; every array made from the memory has this as `.base.owner`.
    """

    __slots__ = ("address", "__weakref__")

    def __init__(self, address: int):
        self.address = address

    def __del__(self, _free=_free):
        _free(self.address)


# --- describing values for error messages --------------------------------------------------

def with_article(text: str) -> str:
    """`text` after "a" or "an", as it is read: an int8, an object, a uint8 (you-int), a float32."""
    return ("an " if text[:1] in ("a", "e", "i", "o") else "a ") + text


def describe(value) -> str:
    """What was given, as an error message names it."""
    if isinstance(value, np.ndarray):
        traits = ("read-only " if not value.flags.writeable else "") + (
            "non-contiguous " if not value.flags.c_contiguous else "") + (
            "masked " if isinstance(value, _MaskedArray) else "")
        text = with_article(f"{traits}{describe_dtype(value.dtype)} array of shape {value.shape}")
        return text if value.flags.c_contiguous else f"{text} and byte strides {value.strides}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _shape_text(shape) -> str:
    return "(" + ", ".join("?" if n is DYNAMIC else str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


# --- strides of C-contiguous arrays --------------------------------------------------------

def _canonical_strides(shape) -> tuple:
    """Element strides of a C-contiguous array of `shape` (what an identity layout assumes)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


# The ranks almost every call uses, without a loop.
_CANONICAL = {0: lambda s: (), 1: lambda s: (1,), 2: lambda s: (s[1], 1)}


def _strides_function(rank: int | None):
    return _CANONICAL.get(rank, _canonical_strides)


# --- argument converters ------------------------------------------------------------------
#
# Each parameter gets two functions of (value, base): `fast` for the common case, which hands
# anything unusual to `check`, and `check`, which accepts every valid value and raises the
# exact error otherwise. Both return the values the parameter contributes to the frame.

class _Param(NamedTuple):
    fmt: str  # struct format of the parameter's bytes in the frame
    size: int  # bytes, a multiple of the word
    needs_slot: bool  # a memref: its packed entry points at a slot holding the descriptor's address
    fast: object
    check: object


def _accepted_dtypes(element: str) -> tuple[np.dtype, tuple]:
    """The dtype results use, and every dtype an argument may have (both signs for signless)."""
    et = element_type_for_mlir(element)
    if element.startswith("i") and element[1:].isdigit():
        from .element_types import _BY_DTYPE  # noqa: PLC0415 - the table is private to that module
        return et.dtype, tuple(d for d, e in _BY_DTYPE.items() if e.mlir == element)
    return et.dtype, (et.dtype,)


def _memref_param(spec: MemRefSpec, where: str, frame_offset: int) -> _Param:
    dtype, accepted = _accepted_dtypes(spec.element)
    itemsize, align_mask = dtype.itemsize, dtype.alignment - 1
    rank, unranked = spec.rank, spec.shape is None
    static_dims = () if unranked else tuple((i, n) for i, n in enumerate(spec.shape) if n is not DYNAMIC)
    static_strides = () if spec.strides is None else tuple(
        (i, s) for i, s in enumerate(spec.strides) if s is not DYNAMIC)
    offset = spec.offset or 0  # a static offset is honoured by pointing `aligned` back by it
    back = offset * itemsize
    # An unranked argument reserves a descriptor of NumPy's largest rank.
    words = 2 + 3 + 2 * MAX_RANK if unranked else 3 + 2 * rank
    inner = frame_offset + 2 * _WORD  # unranked: where its ranked descriptor sits in the frame
    pads = [(0,) * (2 * (MAX_RANK - r)) for r in range(MAX_RANK + 1)] if unranked else None
    expected = with_article(f"{'' if unranked else f'{rank}-d '}{' or '.join(d.name for d in accepted)} array")

    def fields(address, shape, strides, base):
        if unranked:
            r = len(shape)
            return (r, base + inner, address, address, 0, *shape, *strides, *pads[r])
        return (address, address - back, offset, *shape, *strides)

    def check(value, base):
        if not isinstance(value, np.ndarray):
            raise TypeError(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}")
        if isinstance(value, _MaskedArray):  # the native code would read the masked elements too
            raise TypeError(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}, whose mask "
                            "would be dropped; pass a.filled(fill_value) to replace the masked elements, "
                            "or np.asarray(a) to ignore the mask")
        if value.dtype not in accepted:
            native = value.dtype.newbyteorder("=")
            error = ValueError if not value.dtype.isnative and native in accepted else TypeError
            hint = "; convert it with a.astype(a.dtype.newbyteorder('='))" if error is ValueError else ""
            raise error(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}{hint}")
        if not unranked and value.ndim != rank:
            raise ValueError(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}")
        for i, n in static_dims:
            if value.shape[i] != n:
                raise ValueError(f"{where} expects {spec.mlir} (shape {_shape_text(spec.shape)}), "
                                 f"got {describe(value)}")
        if spec.writable and not value.flags.writeable:
            raise ValueError(f"{where} expects {spec.mlir}, got {describe(value)}; the native code may "
                             "write into it, so pass a writable copy (np.array(a))")
        if spec.identity and not value.flags.c_contiguous:
            raise ValueError(f"{where} expects {spec.mlir}, whose identity layout assumes a C-contiguous "
                             f"array, got {describe(value)}; pass np.ascontiguousarray(a), or declare the "
                             "parameter with a strided layout (strided<[?, ...], offset: ?>)")
        address = value.ctypes.data
        if address & align_mask:
            raise ValueError(f"{where} expects {spec.mlir}, got {describe(value)} at address {address:#x}, "
                             f"not aligned to {dtype.alignment} bytes; pass a copy (np.array(a))")
        strides = (_canonical_strides(value.shape) if spec.identity
                   else _element_strides(value, f"{where} ({spec.mlir})"))
        for i, s in static_strides:
            if value.shape[i] > 1 and strides[i] != s:
                raise ValueError(
                    f"{where} expects {spec.mlir} (element strides "
                    f"{_shape_text(spec.strides)}), got {describe(value)}, element strides {strides}")
        return fields(address, value.shape, strides, base)

    strides_of = _strides_function(rank)
    primary = accepted[0]

    # The fast paths take a writable C-contiguous ndarray of the exact dtype: the buffer
    # protocol checks writability and contiguity in one step, faster than reading `flags`.
    def fast(value, base):
        if type(value) is not _ndarray or value.dtype is not primary or value.ndim != rank:
            return check(value, base)
        try:
            address = _addressof(_from_buffer(value))
        except (TypeError, ValueError, BufferError):  # read-only, strided or empty
            return check(value, base)
        shape = value.shape
        if address & align_mask:
            return check(value, base)
        for i, n in static_dims:
            if shape[i] != n:
                return check(value, base)
        return (address, address - back, offset, *shape, *strides_of(shape))

    def fast_unranked(value, base):
        if type(value) is not _ndarray or value.dtype is not primary:
            return check(value, base)
        try:
            address = _addressof(_from_buffer(value))
        except (TypeError, ValueError, BufferError):
            return check(value, base)
        if address & align_mask:
            return check(value, base)
        return fields(address, value.shape, _canonical_strides(value.shape), base)

    if unranked:
        fast = fast_unranked
    # A contiguous array fits any layout whose strides are all dynamic; static strides are checked.
    chosen = check if static_strides else fast
    return _Param("q" * words, words * _WORD, True, chosen, check)


_INT_TYPES = frozenset({int, bool} | {np.dtype(c).type for c in "bBhHiIlLqQ"})
_FLOAT_TYPES = frozenset({float, int} | {np.dtype(c).type for c in "efdbBhHiIlLqQ"})
_COMPLEX_TYPES = frozenset({complex, np.complex64, np.complex128})
_BOOL_TYPES = frozenset({bool, np.bool_})


_INT_RANGES = {  # kind -> (lowest, one past the highest) for `bits` wide values
    "int": lambda bits: (-(2 ** (bits - 1)), 2 ** bits),  # signless: either reading
    "sint": lambda bits: (-(2 ** (bits - 1)), 2 ** (bits - 1)),
    "uint": lambda bits: (0, 2 ** bits),
}


def _scalar_check(spec: ScalarSpec, where: str):
    kind, bits, fmt = spec.scalar.kind, spec.scalar.bits, spec.scalar.fmt

    def fail(error, expected, value, extra=""):
        raise error(f"{where} expects {spec.mlir} ({expected}), got {describe(value)}{extra}")

    def to_int(value):
        if isinstance(value, (float, complex, np.floating, np.complexfloating)):
            fail(TypeError, "an integer", value, "; convert it explicitly, e.g. int(x)")
        try:
            v = operator.index(value)
        except TypeError:
            fail(TypeError, "an integer", value)
        low, high = _INT_RANGES[kind](bits)
        if not low <= v < high:
            fail(ValueError, f"an integer in [{low}, {high - 1}]", value)
        if kind == "int" and v >= 2 ** (bits - 1):
            return v - 2 ** bits  # signless packs signed: the same bits
        return v

    out_of_range = f", out of range for {spec.mlir}"

    def to_float(value):
        if isinstance(value, (complex, np.complexfloating)) or not isinstance(value, numbers.Real):
            fail(TypeError, "a real number", value)
        try:
            v = float(value)  # an int beyond f64 raises; an np.longdouble beyond f64 becomes inf
            if math.isinf(v) and v != value:
                raise OverflowError
            struct.pack("=" + fmt, v)
        except OverflowError:
            fail(ValueError, "a real number", value, out_of_range)
        return v

    def to_bool(value):
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
        if isinstance(value, (int, np.integer)) and value in (0, 1):
            return bool(value)
        fail(TypeError, "a bool", value)

    def to_complex(value):
        if not isinstance(value, numbers.Complex):
            fail(TypeError, "a complex number", value)
        try:
            c = complex(value)  # as float() above: raises, or gives inf for an np.clongdouble
            if (math.isinf(c.real) or math.isinf(c.imag)) and c != value:
                raise OverflowError
            struct.pack("=" + fmt, c.real, c.imag)
        except OverflowError:
            fail(ValueError, "a complex number", value, out_of_range)
        return c.real, c.imag

    convert = {"bool": to_bool, "int": to_int, "sint": to_int, "uint": to_int,
               "float": to_float, "complex": to_complex}[kind]
    if kind == "complex":
        return lambda value, base: convert(value)
    return lambda value, base: (convert(value),)


def _scalar_param(spec: ScalarSpec, where: str) -> _Param:
    kind, fmt = spec.scalar.kind, spec.scalar.fmt
    size = -(-struct.calcsize("=" + fmt) // _WORD) * _WORD
    check = _scalar_check(spec, where)
    accepted = {"bool": _BOOL_TYPES, "int": _INT_TYPES, "sint": _INT_TYPES, "uint": _INT_TYPES,
                "float": _FLOAT_TYPES, "complex": _COMPLEX_TYPES}[kind]
    if kind == "complex":
        def fast(value, base):
            return (value.real, value.imag) if type(value) in accepted else check(value, base)
    else:
        def fast(value, base):
            return (value,) if type(value) in accepted else check(value, base)
    padding = size - struct.calcsize("=" + fmt)
    return _Param(fmt + "x" * padding, size, False, fast, check)


def _unsupported(spec: UnsupportedSpec, where: str):
    raise TypeError(f"{where} has type {spec.mlir}, which JitModule cannot pass: {spec.reason}")


# --- results --------------------------------------------------------------------------------

_LAYOUT_CTYPES = {  # a scalar's ctypes type, for the layout of a struct of results
    "?": ctypes.c_bool, "b": ctypes.c_int8, "h": ctypes.c_int16, "i": ctypes.c_int32, "q": ctypes.c_int64,
    "B": ctypes.c_uint8, "H": ctypes.c_uint16, "I": ctypes.c_uint32, "Q": ctypes.c_uint64,
    "e": ctypes.c_uint16, "f": ctypes.c_float, "d": ctypes.c_double, "ff": C64, "dd": C128,
}


def _result_piece(spec) -> tuple[str, type]:
    """(struct format, ctypes layout type) of one result inside the results struct."""
    if isinstance(spec, ScalarSpec):
        return spec.scalar.fmt, _LAYOUT_CTYPES[spec.scalar.fmt]
    words = 2 if spec.shape is None else 3 + 2 * len(spec.shape)
    return "q" * words, ctypes.c_int64 * words


def results_layout(results) -> tuple[str, int]:
    """(struct format, size in bytes) of the struct that carries several or complex results
    through the C interface's out-parameter, padded as C lays it out (ctypes says where)."""
    pieces = [_result_piece(s) for s in results]
    layout = type("Results", (ctypes.Structure,), {"_fields_": [
        (f"r{i}", ctype) for i, (_, ctype) in enumerate(pieces)]})
    fmt, at = "=", 0
    for i, (piece, _) in enumerate(pieces):
        offset = getattr(layout, f"r{i}").offset
        fmt, at = fmt + "x" * (offset - at) + piece, offset + struct.calcsize("=" + piece)
    return fmt, ctypes.sizeof(layout)


def view_ranked(fields, dtype: np.dtype, owner) -> np.ndarray:
    """A view of what a ranked descriptor's fields (allocated, aligned, offset, sizes, strides)
    describe, keeping `owner` alive. A global's view is read-only: a constant global lives
    in read-only memory, where a write would crash the process."""
    rank = (len(fields) - 3) // 2
    aligned = fields[1] or 0  # None: a NULL pointer passed by value to a callback
    array = view_memref(aligned + fields[2] * dtype.itemsize, fields[3:3 + rank], fields[3 + rank:], dtype, owner)
    if fields[0] == GLOBAL_ALLOCATED:
        array.flags.writeable = False
    return array


class _Ownership:
    """Who owns the memory a call's memref results point into; one NativeAllocation per buffer."""

    __slots__ = ("args", "memref_positions", "engine_owner", "allocations")

    def __init__(self, args, memref_positions, engine_owner):
        self.args, self.memref_positions, self.engine_owner = args, memref_positions, engine_owner
        self.allocations = {}

    def owner_for(self, allocated: int, aligned: int):
        """Who keeps a returned memref's memory alive (and frees it, if anyone does)."""
        if allocated == GLOBAL_ALLOCATED:
            return self.engine_owner
        for i in self.memref_positions:
            array = self.args[i]
            low, high = _byte_bounds(array)
            if low <= allocated < high or low <= aligned < high or allocated == low:
                return array  # a view of an input: keep the input alive, free nothing
        owner = self.allocations.get(allocated)
        if owner is None:
            owner = self.allocations[allocated] = NativeAllocation(allocated)
        return owner


def _memref_result(spec: MemRefSpec, where: str):
    dtype = element_type_for_mlir(spec.element).dtype

    def to_array(fields, ownership: _Ownership):
        return view_ranked(fields, dtype, ownership.owner_for(fields[0], fields[1]))

    if spec.shape is not None:
        return to_array

    def unranked_to_array(fields, ownership):
        rank, descriptor = fields
        # The callee copied the ranked descriptor to the heap for us; we read it and free it
        # (after a garbage rank the pointer may be garbage too: it is left alone).
        ranked = read_ranked_descriptor(rank, descriptor, where)
        _free(descriptor)
        return to_array(ranked, ownership)

    return unranked_to_array


def _scalar_result(spec: ScalarSpec):
    if spec.scalar.kind == "complex":
        return lambda fields, ownership: complex(*fields)
    return lambda fields, ownership: fields[0]


# --- the plan ------------------------------------------------------------------------------

class CallPlan(NamedTuple):
    """Everything a call of one function needs, computed once."""

    nargs: int
    frame_type: type
    consts: tuple  # frame offsets whose absolute addresses fill the packed array and pointer slots
    fast: tuple
    check: tuple
    pack_into: object
    finish: object  # (frame, args) -> the Python result


def _out_param(results) -> bool:
    return len(results) > 1 or (len(results) == 1 and (
        isinstance(results[0], MemRefSpec) or results[0].scalar.kind == "complex"))


def build_plan(sig: FunctionSignature, engine_owner) -> CallPlan:
    """The plan for calling `sig` (a public function with a body) through its C interface."""
    name = sig.name
    for i, spec in enumerate(sig.inputs):
        if isinstance(spec, UnsupportedSpec):
            _unsupported(spec, f"{name}(): argument {i}")
    for i, spec in enumerate(sig.results):
        if isinstance(spec, UnsupportedSpec):
            _unsupported(spec, f"{name}(): result {i}")
    out_param = _out_param(sig.results)
    scalar_result = len(sig.results) == 1 and not out_param
    n_packed = out_param + len(sig.inputs) + scalar_result
    n_slots = out_param + sum(isinstance(s, MemRefSpec) for s in sig.inputs)
    cursor = (n_packed + n_slots) * _WORD  # arguments start after the packed array and slots

    params, packed, slots = [], [], []
    slot = n_packed * _WORD
    if out_param:
        packed.append(slot)
        slot += _WORD
    for i, spec in enumerate(sig.inputs):
        where = f"{name}(): argument {i}"
        param = (_memref_param(spec, where, cursor) if isinstance(spec, MemRefSpec)
                 else _scalar_param(spec, where))
        if param.needs_slot:  # packed -> slot -> descriptor
            packed.append(slot)
            slots.append(cursor)
            slot += _WORD
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
        result_size = 2 * _WORD
        if scalar_result:
            packed.append(result_offset)
    unpack_from = struct.Struct(fmt).unpack_from

    decoders, start = [], 0
    for i, spec in enumerate(sig.results):
        width = len(_result_piece(spec)[0])  # one format letter per value
        decode = (_memref_result(spec, f"{name}(): result {i}") if isinstance(spec, MemRefSpec)
                  else _scalar_result(spec))
        decoders.append((start, start + width, decode))
        start += width
    memref_positions = tuple(i for i, s in enumerate(sig.inputs) if isinstance(s, MemRefSpec))
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
            ownership = _Ownership(args, memref_positions, engine_owner) if returns_memrefs else None
            values = tuple(decode(fields[a:b], ownership) for a, b, decode in decoders)
            return values if len(values) > 1 else values[0]

    frame_words = -(-(result_offset + result_size) // _WORD)
    return CallPlan(
        nargs=len(sig.inputs),
        frame_type=ctypes.c_int64 * frame_words,
        consts=tuple(packed + slots),
        fast=tuple(p.fast for p in params),
        check=tuple(p.check for p in params),
        pack_into=struct.Struct("=" + "q" * (len(packed) + len(slots)) + "".join(p.fmt for p in params)).pack_into,
        finish=finish,
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
    nargs, frame_type, consts, fast, check, pack_into, finish = plan
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
            values += convert(value, base)
        try:
            pack_into(frame, 0, *values)
        except (struct.error, OverflowError):  # a scalar out of range: the exact checks say which
            values = [base + o for o in consts]
            for convert, value in zip(check, args):
                values += convert(value, base)
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
        changes of their shape. It keeps the arguments alive (`.args`). Its one frame holds
        the results, so use it from one thread at a time (bind again for another thread)."""
        frame = pack(args)
        if before_native is None:
            def bound():
                native(frame)
                return finish(frame, args)
        else:
            def bound():
                return run(frame, args)
        bound.__name__ = bound.__qualname__ = f"{name}.bound"
        bound.args, bound.owner = args, owner
        return bound

    invoke.__name__ = invoke.__qualname__ = name
    invoke.__doc__ = f"Calls {signature} in the JIT-compiled module."
    invoke.bind, invoke.owner = bind, owner
    return invoke
