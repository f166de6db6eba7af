"""NumPy -> memref -> JIT-compiled MLIR -> memref -> NumPy, invoked the upstream way."""

import ctypes
import textwrap
from pathlib import Path

import numpy as np
import pytest
from support.arrays import sample_values, supported_element_types
from support.engine import MIN_MLIR_FOR_I1_MEMREF, MLIR_MAJOR, compile_mlir, memref_arg
from support.subprocesses import run_python

from memref_runtime import element_type_for_dtype
from memref_runtime.np_to_memref import (
    UnrankedMemRefDescriptor,
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    make_zero_d_memref_descriptor,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)

pytestmark = pytest.mark.jit

STRIDED_2D = "memref<?x?x{T}, strided<[?, ?], offset: ?>>"

# out[i, j] = a[i, j] for any layout of `a`: a load and a store of T, nothing else.
COPY_2D = r"""
func.func @copy(%a: {A}, %out: memref<?x?x{T}>) attributes {{ llvm.emit_c_interface }} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : {A}
  %m = memref.dim %a, %c1 : {A}
  scf.for %i = %c0 to %n step %c1 {{
    scf.for %j = %c0 to %m step %c1 {{
      %x = memref.load %a[%i, %j] : {A}
      memref.store %x, %out[%i, %j] : memref<?x?x{T}>
    }}
  }}
  return
}}
"""

# Calls back into Python with its argument, ranked and unranked; no loads or stores, so it
# lowers for every element type, i1 included.
FORWARD = r"""
func.func @forward(%a: {A}) attributes {{ llvm.emit_c_interface }} {{
  call @ranked(%a) : ({A}) -> ()
  %u = memref.cast %a : {A} to memref<*x{T}>
  call @unranked(%u) : (memref<*x{T}>) -> ()
  return
}}
func.func private @ranked({A}) attributes {{ llvm.emit_c_interface }}
func.func private @unranked(memref<*x{T}>) attributes {{ llvm.emit_c_interface }}
"""

_ENGINES: dict = {}


def engine_for(template: str, element: str, layout: str = STRIDED_2D, callbacks=None):
    """One compiled engine per (kernel template, element type), reused across parametrized cases."""
    source = template.format(A=layout.format(T=element), T=element)
    return compile_mlir(source, callbacks) if callbacks else cached_engine(source)


def cached_engine(source: str):
    """One compiled engine per kernel without callbacks."""
    if source not in _ENGINES:
        _ENGINES[source] = compile_mlir(source)
    return _ENGINES[source]


def views_of(base: np.ndarray) -> dict:
    """2-d views of a (4, 6) array: every kind of layout a memref descriptor can express."""
    row = base[0]
    return {
        "contiguous": base,
        "negative": base[::-1, ::-2],
        "transpose": base.T,
        "step-slice": base[::2, 1::3],
        "broadcast": np.broadcast_to(row, (3,) + row.shape),
        "broadcast-column": np.broadcast_to(base[:, :1], (4, 5)),
        "zero-rows": base[2:2],
        "zero-columns": base[:, 6:],
        "one-row": base[1:2],
    }


VIEW_NAMES = list(views_of(np.zeros((4, 6))))
NON_BOOL = [(m, d) for m, d in supported_element_types() if d != np.bool_]


def copy_through_jit(engine, view: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.zeros(view.shape, dtype)
    engine.invoke("copy", memref_arg(get_ranked_memref_descriptor(view)), memref_arg(get_ranked_memref_descriptor(out)))
    return out


@pytest.mark.parametrize("view_name", VIEW_NAMES)
@pytest.mark.parametrize("mlir_name, dtype", NON_BOOL, ids=[d.name for _, d in NON_BOOL])
def test_every_element_type_and_layout_reaches_native_code(mlir_name, dtype, view_name):
    engine = engine_for(COPY_2D, mlir_name)
    view = views_of(sample_values(dtype, 24).reshape(4, 6))[view_name]
    out = copy_through_jit(engine, view, dtype)
    expected = np.ascontiguousarray(view)
    assert out.tobytes() == expected.tobytes()
    assert np.array_equal(out.astype(np.complex128), expected.astype(np.complex128))


@pytest.mark.parametrize("view_name", VIEW_NAMES)
def test_bool_arrays_through_an_i8_kernel(view_name):
    # i1 loads/stores do not lower in MLIR 22 (see test_i1_kernel_in_a_subprocess): view the
    # one-byte bools as int8, the same bytes, and copy them with an i8 kernel.
    engine = engine_for(COPY_2D, "i8")
    view = views_of(sample_values(np.dtype(np.bool_), 24).reshape(4, 6))[view_name]
    out = np.zeros(view.shape, np.bool_)
    engine.invoke(
        "copy",
        memref_arg(get_ranked_memref_descriptor(view.view(np.int8))),
        memref_arg(get_ranked_memref_descriptor(out.view(np.int8))),
    )
    assert np.array_equal(out, view)


def forward_engine(dtype: np.dtype, rank: int, received: list, write=None):
    """An engine whose @forward hands its argument to Python, ranked then unranked."""
    mlir_name, dtype, ctype = element_type_for_dtype(dtype)

    def ranked(pointer):
        view = ranked_memref_to_numpy(pointer)
        received.append(("ranked", view.copy(), view.__array_interface__["data"][0]))
        if write is not None:
            write(view)

    def unranked(pointer):
        assert pointer[0].rank == rank
        view = unranked_memref_to_numpy(pointer, dtype)
        received.append(("unranked", view.copy(), view.__array_interface__["data"][0]))

    descriptor = make_nd_memref_descriptor(rank, ctype) if rank else make_zero_d_memref_descriptor(ctype)
    callbacks = {
        "ranked": ctypes.CFUNCTYPE(None, ctypes.POINTER(descriptor))(ranked),
        "unranked": ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))(unranked),
    }
    layout = {0: "memref<{T}>", 1: "memref<?x{T}, strided<[?], offset: ?>>", 2: STRIDED_2D}[rank]
    return engine_for(FORWARD, mlir_name, layout, callbacks)


@pytest.mark.parametrize("view_name", VIEW_NAMES)
def test_bool_arrays_as_i1_memrefs_reach_python_callbacks(view_name):
    received = []

    def flip_first(view):
        if view.size:
            view[0, 0] = not view[0, 0]

    engine = forward_engine(np.bool_, 2, received, write=flip_first)
    base = sample_values(np.dtype(np.bool_), 24).reshape(4, 6)
    view = views_of(base)[view_name]
    view_before = view.copy()
    engine.invoke("forward", memref_arg(get_ranked_memref_descriptor(view)))
    assert [kind for kind, _, _ in received] == ["ranked", "unranked"]
    assert received[0][1].dtype == np.bool_
    assert np.array_equal(received[0][1], view_before)
    if view.size:  # the ranked callback wrote through its view; the unranked one saw it
        assert view[0, 0] == (not view_before[0, 0])
        assert np.array_equal(received[1][1], view)
        if view.flags.writeable:  # not a broadcast: that one element alone changed
            expected = view_before.copy()
            expected[0, 0] = not expected[0, 0]
            assert np.array_equal(view, expected)
    assert received[0][2] == received[1][2] == view.__array_interface__["data"][0]


I1_KERNEL = r"""
func.func @negate(%a: memref<?xi1, strided<[?], offset: ?>>, %out: memref<?xi1>) attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %n = memref.dim %a, %c0 : memref<?xi1, strided<[?], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xi1, strided<[?], offset: ?>>
    %y = arith.xori %x, %true : i1
    memref.store %y, %out[%i] : memref<?xi1>
  }
  return
}
"""


def negate_bools_with_an_i1_kernel():
    """A real i1 load/store kernel on a strided bool view, against NumPy."""
    engine = compile_mlir(I1_KERNEL)
    a = np.array([True, False, False, True, True, False, True])[::-2]
    out = np.zeros(a.shape, np.bool_)
    engine.invoke("negate", memref_arg(get_ranked_memref_descriptor(a)), memref_arg(get_ranked_memref_descriptor(out)))
    assert np.array_equal(out, ~a), (out.tolist(), (~a).tolist())


@pytest.mark.mlir_i1_memref
@pytest.mark.isolated  # lowering may abort the process (an LLVM assertion before MLIR 23): a failure then
def test_i1_kernel_on_bool_arrays():
    negate_bools_with_an_i1_kernel()


I1_SCRIPT = textwrap.dedent("""
    import resource, sys
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an abort leaves no core file behind
    sys.path.insert(0, {tests!r})
    from test_jit_roundtrip import negate_bools_with_an_i1_kernel
    negate_bools_with_an_i1_kernel()
    print("OK")
""")


@pytest.mark.skipif((MLIR_MAJOR or 0) >= MIN_MLIR_FOR_I1_MEMREF, reason="i1 memrefs lower here")
def test_i1_load_store_lowering_aborts_before_mlir_23():
    """Documents why the test above is skipped: the process dies in an LLVM assertion (in a
    subprocess, to see that it does)."""
    if MLIR_MAJOR is None:
        pytest.skip("MLIR version unknown")
    result = run_python(I1_SCRIPT.format(tests=str(Path(__file__).parent)))
    if result.returncode == 0:
        pytest.fail(f"i1 memref kernels work with MLIR {MLIR_MAJOR}: lower MIN_MLIR_FOR_I1_MEMREF in support/engine.py")
    assert "getWidth() >= 8" in result.stderr, result.stderr


# --- rank 0 -------------------------------------------------------------------------------


SCALE_0D = r"""
func.func @scale(%a: memref<f32>, %out: memref<f32>) attributes { llvm.emit_c_interface } {
  %x = memref.load %a[] : memref<f32>
  %two = arith.constant 2.0 : f32
  %y = arith.mulf %x, %two : f32
  memref.store %y, %out[] : memref<f32>
  return
}
"""


def test_rank_0_into_native_code_and_back():
    engine = cached_engine(SCALE_0D)
    a, out = np.array(-3.25, np.float32), np.zeros((), np.float32)
    out_desc = get_ranked_memref_descriptor(out)
    engine.invoke("scale", memref_arg(get_ranked_memref_descriptor(a)), memref_arg(out_desc))
    assert out == a * 2
    result = ranked_memref_to_numpy(ctypes.pointer(out_desc))
    assert result.shape == () and result == a * 2


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128], ids=lambda d: np.dtype(d).name)
def test_rank_0_memrefs_reach_python_callbacks(dtype):
    dtype = np.dtype(dtype)
    received = []

    def write(view):
        view[()] = view[()] + 1

    engine = forward_engine(dtype, 0, received, write=write)
    a = sample_values(dtype, 5)[3:4].reshape(())
    before = a.copy()
    engine.invoke("forward", memref_arg(get_ranked_memref_descriptor(a)))
    assert [(kind, r.shape) for kind, r, _ in received] == [("ranked", ()), ("unranked", ())]
    assert received[0][1] == before
    assert a == before + 1 and received[1][1] == before + 1


# --- zero-size dimensions -----------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 0), (0, 4), (0, 0)], ids=str)
def test_zero_size_memrefs_reach_python_callbacks(shape):
    received = []
    engine = forward_engine(np.float32, 2, received)
    engine.invoke("forward", memref_arg(get_ranked_memref_descriptor(np.zeros(shape, np.float32))))
    assert [(kind, r.shape, r.dtype) for kind, r, _ in received] == [
        ("ranked", shape, np.float32),
        ("unranked", shape, np.float32),
    ]


# --- strides and offsets made by native code ----------------------------------------------


NATIVE_VIEWS = r"""
func.func @views(%arg0: memref<12xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<12xf32> -> memref<f32>, index, index, index
  %t = memref.reinterpret_cast %base to offset: [0], sizes: [3, 4], strides: [1, 3]
      : memref<f32> to memref<3x4xf32, strided<[1, 3]>>
  %tc = memref.cast %t : memref<3x4xf32, strided<[1, 3]>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @cb(%tc) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  %r = memref.reinterpret_cast %base to offset: [11], sizes: [2, 3], strides: [-6, -1]
      : memref<f32> to memref<2x3xf32, strided<[-6, -1], offset: 11>>
  %rc = memref.cast %r : memref<2x3xf32, strided<[-6, -1], offset: 11>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @cb(%rc) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  %z = memref.reinterpret_cast %base to offset: [5], sizes: [2, 3], strides: [0, 1]
      : memref<f32> to memref<2x3xf32, strided<[0, 1], offset: 5>>
  %zc = memref.cast %z : memref<2x3xf32, strided<[0, 1], offset: 5>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @cb(%zc) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}
func.func private @cb(memref<?x?xf32, strided<[?, ?], offset: ?>>) attributes { llvm.emit_c_interface }
"""


def test_transposed_negative_and_zero_strides_from_native_code():
    received = []

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(2, ctypes.c_float)))
    def cb(pointer):
        view = ranked_memref_to_numpy(pointer)
        received.append((view.copy(), view.strides, view.__array_interface__["data"][0]))

    engine = compile_mlir(NATIVE_VIEWS, {"cb": cb})
    a = np.arange(12, dtype=np.float32)
    engine.invoke("views", memref_arg(get_ranked_memref_descriptor(a)))
    expected = [
        a.reshape(4, 3).T,  # offset 0, strides [1, 3]
        a[::-1].reshape(2, 6)[:, :3],  # offset 11, strides [-6, -1]
        np.broadcast_to(a[5:8], (2, 3)),  # offset 5, strides [0, 1]
    ]
    assert len(received) == len(expected)
    for (values, strides, address), view in zip(received, expected):
        assert np.array_equal(values, view)
        assert strides == view.strides
        assert address == view.__array_interface__["data"][0]


OFFSET_CALLBACK = r"""
func.func @view_tail(%arg0: memref<5xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<5xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [3], sizes: [2], strides: [1]
      : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %view : memref<2xf32, strided<[1], offset: 3>> to memref<?xf32, strided<[?], offset: ?>>
  call @ranked(%cast) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  %u = memref.cast %view : memref<2xf32, strided<[1], offset: 3>> to memref<*xf32>
  call @unranked(%u) : (memref<*xf32>) -> ()
  return
}
func.func private @ranked(memref<?xf32, strided<[?], offset: ?>>) attributes { llvm.emit_c_interface }
func.func private @unranked(memref<*xf32>) attributes { llvm.emit_c_interface }
"""


def test_offset_from_native_code_is_honoured_ranked_and_unranked():
    received = []

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(make_nd_memref_descriptor(1, ctypes.c_float)))
    def ranked(pointer):
        assert pointer[0].offset == 3
        view = ranked_memref_to_numpy(pointer)
        received.append((view.copy(), view.__array_interface__["data"][0]))
        view[1] = 20.0  # a view: reaches the caller's array

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(UnrankedMemRefDescriptor))
    def unranked(pointer):
        view = unranked_memref_to_numpy(pointer, np.float32)
        received.append((view.copy(), view.__array_interface__["data"][0]))

    engine = compile_mlir(OFFSET_CALLBACK, {"ranked": ranked, "unranked": unranked})
    inp = np.array([0, 0, 0, 1, 2], np.float32)
    engine.invoke("view_tail", memref_arg(get_ranked_memref_descriptor(inp)))
    tail = np.array([0, 0, 0, 1, 2], np.float32)[3:5]
    assert np.array_equal(received[0][0], tail)  # [1., 2.]
    assert received[0][1] == inp.ctypes.data + 3 * inp.itemsize
    assert np.array_equal(received[1][0], [tail[0], 20.0])  # saw the ranked callback's write
    assert received[1][1] == received[0][1]
    assert inp[4] == 20.0


def test_numpy_view_with_offset_as_argument():
    """A view into the middle of an array: native code sees exactly its elements."""
    engine = engine_for(COPY_2D, "f64")
    base = np.arange(48.0).reshape(6, 8)
    view = base[2:5, 7:0:-3]
    assert np.array_equal(copy_through_jit(engine, view, np.float64), view)


# --- writes through views -----------------------------------------------------------------


FILL_2D = r"""
func.func @fill(%out: memref<?x?xi32, strided<[?, ?], offset: ?>>) attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %n = memref.dim %out, %c0 : memref<?x?xi32, strided<[?, ?], offset: ?>>
  %m = memref.dim %out, %c1 : memref<?x?xi32, strided<[?, ?], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      %t = arith.muli %i, %c10 : index
      %v = arith.addi %t, %j : index
      %x = arith.index_cast %v : index to i32
      memref.store %x, %out[%i, %j] : memref<?x?xi32, strided<[?, ?], offset: ?>>
    }
  }
  return
}
"""


@pytest.mark.parametrize(
    "make_view",
    [
        lambda b: b,
        lambda b: b[::2, ::-1],
        lambda b: b.T[1:, ::-2],
        lambda b: b[1:4, 2:3],
    ],
    ids=["whole", "step-negative", "transpose", "column"],
)
def test_native_stores_through_strided_views_land_in_place(make_view):
    engine = cached_engine(FILL_2D)
    base = np.full((6, 5), -1, np.int32)
    view = make_view(base)
    engine.invoke("fill", memref_arg(get_ranked_memref_descriptor(view)))
    expected = np.full((6, 5), -1, np.int32)
    i, j = np.indices(view.shape)
    make_view(expected)[...] = i * 10 + j
    assert np.array_equal(base, expected)


SUM_2D = r"""
func.func @sum(%a: memref<?x?xf64, strided<[?, ?], offset: ?>>, %out: memref<f64>) attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %m = memref.dim %a, %c1 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
    %r = scf.for %j = %c0 to %m step %c1 iter_args(%acc2 = %acc) -> f64 {
      %x = memref.load %a[%i, %j] : memref<?x?xf64, strided<[?, ?], offset: ?>>
      %y = arith.addf %acc2, %x : f64
      scf.yield %y : f64
    }
    scf.yield %r : f64
  }
  memref.store %s, %out[] : memref<f64>
  return
}
"""


@pytest.mark.parametrize("kind", ["ranked", "unranked"])
def test_python_writes_into_a_memref_view_are_read_by_native_code(kind):
    engine = cached_engine(SUM_2D)
    array = np.zeros((5, 7))[::2, 1::2]
    if kind == "ranked":
        desc = get_ranked_memref_descriptor(array)
        view = ranked_memref_to_numpy(ctypes.pointer(desc))
    else:
        unranked = get_unranked_memref_descriptor(array)
        view = unranked_memref_to_numpy(ctypes.pointer(unranked), np.float64)
        desc = unranked._keepalive  # the ranked descriptor it points at
    view[...] = np.arange(view.size, dtype=np.float64).reshape(view.shape) + 0.5
    out = np.zeros(())
    engine.invoke("sum", ctypes.pointer(ctypes.pointer(desc)), memref_arg(get_ranked_memref_descriptor(out)))
    assert out == array.sum() == (np.arange(view.size) + 0.5).sum()


@pytest.mark.parametrize("shape", [(3, 0), (0, 5)], ids=str)
def test_zero_size_sum_in_native_code(shape):
    engine = cached_engine(SUM_2D)
    out = np.full((), 99.0)
    engine.invoke(
        "sum", memref_arg(get_ranked_memref_descriptor(np.zeros(shape))), memref_arg(get_ranked_memref_descriptor(out))
    )
    assert out == np.zeros(shape).sum() == 0.0
