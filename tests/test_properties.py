"""Properties: any view of any supported element type crosses into native code and back exactly.

Arrays of every element type the runtime supports, rank 0-4, sizes 0-4, cut from a larger base
(a non-zero offset), with steps of both signs, transposed, with zero strides (broadcast, read-only,
or made by as_strided, writable) and read-only. Each goes NumPy -> descriptor -> NumPy without
native code, and through JIT-compiled kernels: copied element by element into a fresh output
(ranked and unranked, upstream-style `ExecutionEngine.invoke` and typed `JitModule` calls), and
handed to Python callbacks (raw ctypes ones and `register_callback` ones). Typed calls either give
the exact copy or raise the documented error; they never give a wrong one.

Profiles (tests/conftest.py): "ci", 100 examples per property, by default;
`pytest --hypothesis-profile=long tests/test_properties.py` runs 10,000 per property.
"""

from __future__ import annotations

import ctypes
import functools
import re

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from support.arrays import address_of, assert_descriptor_matches, assert_same_view, supported_element_types
from support.engine import HAVE_JIT, MIN_MLIR_FOR_I1_MEMREF, MLIR_MAJOR, compile_mlir, memref_arg

from memref_runtime import element_type_for_mlir
from memref_runtime.jit.results import NativeAllocation
from memref_runtime.np_to_memref import (
    UnrankedMemRefDescriptor,
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    make_zero_d_memref_descriptor,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)

# (MLIR element type, NumPy dtype): every dtype of the element-type table, and `index` (int64).
ELEMENTS = supported_element_types() + [("index", np.dtype(np.int64))]
KERNEL_ELEMENTS = sorted({element for element, _ in ELEMENTS})
MAX_RANK_TESTED = 4

# Lowering memref.load/store of i1 aborts the process before MLIR 23 (see support/engine.py): there,
# bool arrays reach native code only through the callback kernels, which never load or store.
I1_LOADS = (MLIR_MAJOR or 0) >= MIN_MLIR_FOR_I1_MEMREF

# The copies need no optimization, and -O0 compiles a rank's kernels about ten times faster;
# test_jit_roundtrip.py runs the ExecutionEngine's default -O2 on every element type.
OPT_LEVEL = 0


# --- arrays -----------------------------------------------------------------------------------


@st.composite
def views(draw, elements=ELEMENTS, max_rank=MAX_RANK_TESTED):
    """(MLIR element type, an ndarray view of random bytes) of every layout a memref can describe:
    a C-contiguous block at an offset into a larger base, or any slice of it with steps of both
    signs, transposed, with a stride-0 axis; sometimes with a size-0 axis, sometimes read-only."""
    element, dtype = draw(st.sampled_from(elements))
    rank = draw(st.integers(0, max_rank))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    if rank and draw(st.integers(0, 7)) == 0:
        shape[draw(st.integers(0, rank - 1))] = 0
    contiguous = draw(st.integers(0, 4)) == 0
    base_shape, index = [], []
    for axis, n in enumerate(shape or [1]):  # rank 0: one element of a 1-d base
        step = 1 if contiguous or not shape else draw(st.sampled_from([1, 2, 3, -1, -2, -3]))
        padded = not contiguous or axis == 0  # a contiguous block's offset is along axis 0 only
        before, after = (draw(st.integers(0, 2)), draw(st.integers(0, 2))) if padded else (0, 0)
        span = (n - 1) * abs(step) + 1 if n else 0
        first = before + (span - 1 if step < 0 and n else 0)
        last = first + step * n  # one past the end; below 0 only when the view reaches index 0
        index.append(slice(first, last if last >= 0 else None, step) if shape else first)
        base_shape.append(before + span + after)
    base = np.empty(base_shape, dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if dtype == np.bool_:  # only 0 and 1 are bools; any other byte pattern is any other dtype's value
        base[...] = rng.integers(0, 2, base.shape).astype(bool)
    else:
        base.reshape(-1).view(np.uint8)[:] = rng.integers(0, 256, base.nbytes, dtype=np.uint8)
    view = base[(*index, Ellipsis)]  # the Ellipsis keeps rank 0 a 0-d array, not a scalar
    assert view.shape == tuple(shape)
    if not contiguous:
        view = view.transpose(draw(st.permutations(range(rank))))
        zero_stride = draw(st.sampled_from(["none", "broadcast", "as_strided"]))
        if zero_stride == "broadcast" and rank < max_rank:  # a new axis of stride 0, read-only
            view = np.broadcast_to(view, (draw(st.integers(1, 3)),) + view.shape)
        elif zero_stride == "as_strided" and rank:  # an existing axis of stride 0, still writable
            axis = draw(st.integers(0, rank - 1))
            view = as_strided(view, view.shape, view.strides[:axis] + (0,) + view.strides[axis + 1 :])
    if draw(st.integers(0, 7)) == 0:
        view.flags.writeable = False
    return element, view


def as_strided(array: np.ndarray, shape, strides) -> np.ndarray:
    """np.lib.stride_tricks.as_strided for every dtype (it cannot read ml_dtypes' typestr back)."""
    void = np.dtype(f"V{array.itemsize}")
    return np.lib.stride_tricks.as_strided(array.view(void), shape, strides).view(array.dtype)


def poisoned(shape, dtype: np.dtype) -> np.ndarray:
    """A fresh C-contiguous output, every byte 0x5a: an element the copy misses shows."""
    out = np.empty(shape, dtype)
    out.reshape(-1).view(np.uint8)[:] = 0x5A
    return out


def assert_exact_copy(got: np.ndarray, view: np.ndarray):
    """`got` holds `view`'s elements, byte for byte (NaN payloads, -0.0 and all), in C order."""
    assert got.shape == view.shape
    assert got.dtype.itemsize == view.dtype.itemsize
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(view).tobytes(), (
        f"{view.dtype} view of shape {view.shape}, strides {view.strides}"
    )


# --- NumPy -> descriptor -> NumPy, no native code ----------------------------------------------


@given(views())
def test_any_view_round_trips_without_native_code(case):
    _, view = case
    desc = get_ranked_memref_descriptor(view)
    assert_descriptor_matches(desc, view)
    unranked = get_unranked_memref_descriptor(view)
    assert unranked.rank == view.ndim
    for result in (
        ranked_memref_to_numpy(ctypes.pointer(desc)),
        unranked_memref_to_numpy(ctypes.pointer(unranked), view.dtype),
    ):
        assert_same_view(result, view)
        assert result.flags.writeable == view.flags.writeable


# --- kernels: one module per rank, a copy, an unranked copy, a clone and a callback per element --


def memref_types(rank: int, element: str) -> tuple[str, str]:
    """(fully dynamic strided type, identity-layout type) of `rank` and `element`."""
    dims = "?x" * rank
    return (f"memref<{dims}{element}, strided<[{', '.join('?' * rank)}], offset: ?>>", f"memref<{dims}{element}>")


def symbol(element: str) -> str:
    return element.replace("complex<", "complex_").replace(">", "")


def copies(element: str) -> bool:
    """Whether the copy kernels of `element` exist (they load and store it)."""
    return element != "i1" or I1_LOADS


def kernels_source(rank: int, element: str) -> str:
    """@copy_T (strided -> identity out-parameter), @copy_unranked_T (memref<*xT> cast to the
    strided type), @clone_T (identity -> a fresh memref.alloc), and @forward_T, which hands its
    strided argument to the callbacks @visit_T and, unranked, @visit_unranked_T."""
    strided, identity = memref_types(rank, element)
    s = symbol(element)
    consts = "".join(f"  %c{k} = arith.constant {k} : index\n" for k in range(max(rank, 2)))
    sizes = ", ".join(f"%n{k}" for k in range(rank))
    dims = "".join(f"  %n{k} = memref.dim %a, %c{k} : {{A}}\n" for k in range(rank))
    at = ", ".join(f"%i{k}" for k in range(rank))
    body = f"    %x = memref.load %a[{at}] : {strided}\n    memref.store %x, %out[{at}] : {identity}\n"
    for k in reversed(range(rank)):
        body = f"  scf.for %i{k} = %c0 to %n{k} step %c1 {{\n{body}  }}\n"
    unranked = f"memref<*x{element}>"
    text = ""
    if copies(element):
        text += f"""
func.func @copy_{s}(%a: {strided}, %out: {identity}) attributes {{llvm.emit_c_interface}} {{
{consts}{dims.format(A=strided)}{body}  return
}}
func.func @copy_unranked_{s}(%u: {unranked}, %out: {identity}) attributes {{llvm.emit_c_interface}} {{
  %a = memref.cast %u : {unranked} to {strided}
  call @copy_{s}(%a, %out) : ({strided}, {identity}) -> ()
  return
}}
func.func @clone_{s}(%a: {identity}) -> {identity} attributes {{llvm.emit_c_interface}} {{
{consts}{dims.format(A=identity)}  %out = memref.alloc({sizes}) : {identity}
  %s = memref.cast %a : {identity} to {strided}
  call @copy_{s}(%s, %out) : ({strided}, {identity}) -> ()
  return %out : {identity}
}}
"""
    return (
        text
        + f"""
func.func @forward_{s}(%a: {strided}) attributes {{llvm.emit_c_interface}} {{
  call @visit_{s}(%a) : ({strided}) -> ()
  %u = memref.cast %a : {strided} to {unranked}
  call @visit_unranked_{s}(%u) : ({unranked}) -> ()
  return
}}
func.func private @visit_{s}({strided}) attributes {{llvm.emit_c_interface}}
func.func private @visit_unranked_{s}({unranked}) attributes {{llvm.emit_c_interface}}
"""
    )


class RankKernels:
    """The kernels of one rank for every element type, compiled once: as a JitModule with typed
    callbacks, and as a bare ExecutionEngine with ctypes callbacks (upstream's way)."""

    def __init__(self, rank: int):
        from memref_runtime import JitModule

        source = "".join(kernels_source(rank, element) for element in KERNEL_ELEMENTS)
        self.received: list = []  # (callback kind, a copy of the view it got, its address)
        self.jit = JitModule(source, opt_level=OPT_LEVEL)
        raw = {}
        for element in KERNEL_ELEMENTS:
            s = symbol(element)
            self.jit.register_callback(f"visit_{s}", functools.partial(self.keep, "ranked"))
            self.jit.register_callback(f"visit_unranked_{s}", functools.partial(self.keep, "unranked"))
            raw[f"visit_{s}"], raw[f"visit_unranked_{s}"] = self.ctypes_callbacks(rank, element)
        self.engine = compile_mlir(source, raw, opt_level=OPT_LEVEL)

    def keep(self, kind: str, view: np.ndarray):
        self.received.append((kind, view.copy(), address_of(view)))

    def ctypes_callbacks(self, rank: int, element: str):
        et = element_type_for_mlir(element)
        descriptor = make_nd_memref_descriptor(rank, et.ctype) if rank else make_zero_d_memref_descriptor(et.ctype)

        @ctypes.CFUNCTYPE(None, ctypes.POINTER(descriptor))
        def ranked(pointer):
            self.keep("ranked", ranked_memref_to_numpy(pointer))

        @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
        def unranked(pointer):
            assert pointer[0].rank == rank
            self.keep("unranked", unranked_memref_to_numpy(pointer, et.dtype))

        return ranked, unranked

    def take_received(self) -> list:
        received, self.received = self.received, []
        return received


@functools.cache
def rank_kernels(rank: int) -> RankKernels:
    return RankKernels(rank)


# The tests that call rank_kernels leave its JitModules alive on purpose: compiled once per rank
# and process, they serve every hypothesis example of both tests.
KEEPS_RANK_KERNELS = pytest.mark.allow_context_leak(reason="rank_kernels() keeps one JitModule per rank")


def refusal(view: np.ndarray, identity: bool = False) -> str | None:
    """The error a typed call must raise for `view` (any memref parameter may be written, so a
    read-only array is refused; an identity layout needs C order), or None if it must accept it."""
    if not view.flags.writeable:
        return r"got a read-only .* array .*; the native code may write into it"
    if identity and not view.flags.c_contiguous:
        return r"whose identity layout assumes a C-contiguous array, got a non-contiguous"
    return None


def call_typed(jit, name: str, view: np.ndarray, *args, identity: bool = False):
    """(True, jit.call(name, view, *args)), or (False, None) once it raised the documented refusal."""
    expected_error = refusal(view, identity)
    event(f"typed call {name.split('_')[0]}: " + ("accepted" if expected_error is None else "refused"))
    if expected_error is None:
        return True, jit.call(name, view, *args)
    with pytest.raises(ValueError, match=rf"^{name}\(\): argument 0 expects .*{expected_error}"):
        jit.call(name, view, *args)
    return False, None


def memory_owner(array: np.ndarray):
    """What keeps the memory of an array made from a memref alive (past any .view() on the way)."""
    base = array.base
    while isinstance(base, np.ndarray):
        base = base.base
    return base.owner


def assert_callbacks_saw(received: list, view: np.ndarray):
    """Both callbacks, ranked then unranked, saw `view` itself: its elements, at its address."""
    assert [kind for kind, _, _ in received] == ["ranked", "unranked"]
    for _, values, address in received:
        assert_exact_copy(values, view)
        if view.size:
            assert address == address_of(view)


@pytest.mark.jit
@pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine")
@KEEPS_RANK_KERNELS
@given(views())
def test_any_view_crosses_jit_code_exactly(case):
    element, view = case
    event(f"rank {view.ndim}")
    event(
        "empty"
        if view.size == 0
        else "C-contiguous"
        if view.flags.c_contiguous
        else "a stride 0"
        if 0 in view.strides
        else "a negative stride"
        if min(view.strides, default=0) < 0
        else "other strides"
    )
    kernels = rank_kernels(view.ndim)
    jit, engine, s = kernels.jit, kernels.engine, symbol(element)

    if copies(element):
        # Upstream's way: descriptors made by hand, ExecutionEngine.invoke, no checks.
        for function, descriptor in (
            ("copy", get_ranked_memref_descriptor),
            ("copy_unranked", get_unranked_memref_descriptor),
        ):
            out = poisoned(view.shape, view.dtype)
            engine.invoke(
                f"{function}_{s}",
                ctypes.pointer(ctypes.pointer(descriptor(view))),
                memref_arg(get_ranked_memref_descriptor(out)),
            )
            assert_exact_copy(out, view)
        # Typed calls: checked arguments, an out-parameter or a result the JIT code allocated.
        for function in ("copy", "copy_unranked"):
            out = poisoned(view.shape, view.dtype)
            if call_typed(jit, f"{function}_{s}", view, out)[0]:
                assert_exact_copy(out, view)
        accepted, clone = call_typed(jit, f"clone_{s}", view, identity=True)
        if accepted:
            assert_exact_copy(clone, view)
            assert isinstance(memory_owner(clone), NativeAllocation) and clone.flags.writeable

    kernels.take_received()
    engine.invoke(f"forward_{s}", memref_arg(get_ranked_memref_descriptor(view)))
    assert_callbacks_saw(kernels.take_received(), view)
    if call_typed(jit, f"forward_{s}", view)[0]:
        assert_callbacks_saw(kernels.take_received(), view)
    assert kernels.take_received() == []


# --- byte strides that are not a multiple of the item size --------------------------------------


WIDE = [(element, dtype) for element, dtype in ELEMENTS if dtype.itemsize > 1]


@KEEPS_RANK_KERNELS
@given(
    element_and_dtype=st.sampled_from(WIDE),
    shape=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    extra=st.lists(st.integers(-17, 17), min_size=3, max_size=3),
)
def test_byte_strides_are_exact_or_rejected(element_and_dtype, shape, extra):
    element, dtype = element_and_dtype
    itemsize = dtype.itemsize
    strides = tuple(e if e % itemsize else e + 1 for e in extra[: len(shape)])  # mostly not multiples
    buffer = np.zeros(2048, np.uint8)[1024:].view(dtype)  # room on both sides; never read through
    view = as_strided(buffer, tuple(shape), strides)
    misread = {(s, axis) for axis, (n, s) in enumerate(zip(shape, strides)) if n > 1 and s % itemsize}
    if view.size and misread:
        with pytest.raises(ValueError) as info:
            get_ranked_memref_descriptor(view)
        named = re.search(
            r"stride (-?\d+) bytes on axis (\d+) is not a multiple of the item size (\d+)", str(info.value)
        )
        assert named and (int(named[1]), int(named[2])) in misread and int(named[3]) == itemsize, str(info.value)
        if HAVE_JIT and len(shape) <= MAX_RANK_TESTED:  # a typed call says the same, naming the argument
            jit = rank_kernels(len(shape)).jit
            with pytest.raises(
                ValueError,
                match=rf"^copy_{re.escape(symbol(element))}\(\): argument 0 "
                r"\(memref<.*>\): stride -?\d+ bytes on axis \d+",
            ):
                jit.call(f"copy_{symbol(element)}", view, np.empty(view.shape, dtype))
    else:
        desc = get_ranked_memref_descriptor(view)
        result = ranked_memref_to_numpy(desc)
        assert result.shape == view.shape and address_of(result) == address_of(view)
        for n, s, r in zip(shape, strides, result.strides):
            if n > 1 and view.size:
                assert r == s
