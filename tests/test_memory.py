"""Lifetime and memory: nothing dangles, nothing is created per call, nothing leaks."""

import ctypes
import functools
import gc
import textwrap
import weakref

import numpy as np
import pytest
from support.arrays import address_of
from support.engine import compile_mlir, memref_arg
from support.paths import mlir_input
from support.subprocesses import run_python

from memref_runtime.np_to_memref import (
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)

# The RSS measurements of other processes (rss_growth runs a script of its own) and the lifetime
# tests need no isolation; the one that reads this process's RSS runs alone (serial).

# @sum(a, out) and @sum_unranked(a, out): out[] = the sum of a, an f64 memref.
SUM_F64 = mlir_input("sum_f64.mlir").read_text()

N = 10**7
# 0 + 1 + ... + (N - 1): every partial sum is an integer below 2**53, so exact in f64.
EXPECTED_SUM = float(N * (N - 1) // 2)


def churn_the_allocator(size: int = N, count: int = 3) -> list:
    """Collect, then allocate and fill big arrays where a freed input would have been.

    The caller keeps them until after the call: a dangling descriptor then reads their
    values (a wrong sum) rather than unmapped memory (a crash of the whole run).
    """
    gc.collect()
    junk = [np.full(size, -1.0) for _ in range(count)]
    for j in junk:
        j[::3] = 7.0
    gc.collect()
    return junk


@pytest.mark.jit
@pytest.mark.parametrize(
    "make_descriptor, function",
    [(get_ranked_memref_descriptor, "sum"), (get_unranked_memref_descriptor, "sum_unranked")],
)
def test_temporary_descriptor_keeps_its_array_alive_through_a_jit_call(make_descriptor, function):
    engine = compile_mlir(SUM_F64)
    # The array and the descriptor are temporaries: only the pointer chain holds them.
    p = ctypes.pointer(ctypes.pointer(make_descriptor(np.arange(float(N)))))
    junk = churn_the_allocator()
    out = np.zeros(())
    engine.invoke(function, p, memref_arg(get_ranked_memref_descriptor(out)))
    del junk
    assert out[()] == EXPECTED_SUM
    assert EXPECTED_SUM == np.arange(float(N)).sum()


def test_temporary_descriptor_keeps_its_array_alive_for_python_too():
    array = np.arange(1000.0)
    alive = weakref.ref(array)
    p = ctypes.pointer(get_ranked_memref_descriptor(array))
    del array
    junk = churn_the_allocator(size=1000, count=200)  # noqa: F841 - held: the churned blocks stay allocated
    assert alive() is not None
    assert np.array_equal(ranked_memref_to_numpy(p), np.arange(1000.0))
    del p
    gc.collect()
    assert alive() is None  # ... and no longer than that


@pytest.mark.parametrize("kind", ["ranked", "unranked"])
def test_view_keeps_what_it_was_made_from_alive(kind):
    array = np.arange(100, dtype=np.int32)
    alive = weakref.ref(array)
    if kind == "ranked":
        view = ranked_memref_to_numpy(ctypes.pointer(get_ranked_memref_descriptor(array)))
    else:
        view = unranked_memref_to_numpy(ctypes.pointer(get_unranked_memref_descriptor(array)), np.int32)
    del array
    junk = churn_the_allocator(size=1000, count=200)  # noqa: F841 - held: the churned blocks stay allocated
    assert alive() is not None
    assert np.array_equal(view, np.arange(100, dtype=np.int32))
    view[7] = -7
    assert alive()[7] == -7  # a view, not a copy
    del view
    gc.collect()
    assert alive() is None


def test_view_of_a_hand_made_descriptor_keeps_the_descriptor_alive():
    backing = np.arange(8.0)
    cls = make_nd_memref_descriptor(1, ctypes.c_double)
    desc = cls(backing.ctypes.data, backing.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), 2, (4,), (1,))
    view = ranked_memref_to_numpy(desc)
    # The view's base chain reaches the descriptor it was made from.
    assert view.base.owner is desc
    assert np.array_equal(view, backing[2:6])


def test_no_ctypes_class_per_call():
    a = np.zeros((2, 3), np.float32)
    assert make_nd_memref_descriptor(2, ctypes.c_float) is make_nd_memref_descriptor(2, ctypes.c_float)
    classes = {type(get_ranked_memref_descriptor(a)) for _ in range(100)}
    classes |= {type(get_ranked_memref_descriptor(np.ones((4, 5), np.float32).T)) for _ in range(100)}
    assert classes == {make_nd_memref_descriptor(2, ctypes.c_float)}


GROWTH_SCRIPT = textwrap.dedent("""
    import ctypes, gc, sys
    import numpy as np
    import psutil
    namespace = {{}}
    exec("from {module} import *", namespace)
    get_ranked = namespace["get_ranked_memref_descriptor"]
    get_unranked = namespace["get_unranked_memref_descriptor"]
    to_numpy = namespace["ranked_memref_to_numpy"]
    arrays = [np.zeros((3, 4), np.float32), np.arange(5.0)[::-1], np.zeros((2, 2, 2), np.int8).T,
              np.array(1.5)]

    def once(i):
        a = arrays[i % 4]
        p = ctypes.pointer(get_ranked(a))
        if {with_back}:
            to_numpy(p)
            ctypes.pointer(get_unranked(a))

    for i in range(2000):  # warm up: caches, allocator pools
        once(i)
    gc.collect()
    process = psutil.Process()
    before = process.memory_info().rss
    for i in range({calls}):
        once(i)
    gc.collect()
    print(process.memory_info().rss - before)
""")


def rss_growth(module: str, calls: int, with_back: bool = False) -> int:
    result = run_python(GROWTH_SCRIPT.format(module=module, calls=calls, with_back=with_back))
    assert result.returncode == 0, result.stderr
    return int(result.stdout)


def test_100k_conversions_grow_the_process_by_less_than_1_mb():
    pytest.importorskip("psutil")
    growth = rss_growth("memref_runtime.np_to_memref", 100_000)
    assert growth < 1_000_000, f"grew by {growth} bytes"


def test_100k_round_trips_grow_the_process_by_less_than_1_mb():
    pytest.importorskip("psutil")
    growth = rss_growth("memref_runtime.np_to_memref", 100_000, with_back=True)
    assert growth < 1_000_000, f"grew by {growth} bytes"


def test_contrast_upstream_grows_with_every_call():
    """Upstream makes a ctypes class per call (and ctypes caches a pointer type for each)."""
    pytest.importorskip("psutil")
    upstream = pytest.importorskip("mlir.runtime")
    a = np.zeros(3, np.float32)
    assert type(upstream.get_ranked_memref_descriptor(a)) is not type(upstream.get_ranked_memref_descriptor(a))
    growth = rss_growth("mlir.runtime", 2_000)
    assert growth > 1_000_000, f"upstream grew by only {growth} bytes in 2,000 calls"


# --- typed calls and JIT-compiled code: temporaries, returned memory, callback views ----------


def rss_bytes() -> int:
    import psutil

    return psutil.Process().memory_info().rss


@pytest.fixture(scope="module")
def sums():
    """SUM_F64 compiled twice: an ExecutionEngine (upstream's way) and a JitModule."""
    from memref_runtime import JitModule

    return compile_mlir(SUM_F64), JitModule(SUM_F64)


@pytest.mark.jit
@pytest.mark.parametrize("way", ["ranked descriptor", "unranked descriptor", "bound typed call"])
def test_10k_calls_on_temporaries_collected_between_conversion_and_call(sums, way):
    engine, typed = sums
    out = np.zeros(())
    out_arg = memref_arg(get_ranked_memref_descriptor(out))
    gc.freeze()  # what exists now is never collected: each gc.collect() below costs microseconds
    try:
        for i in range(10_000):
            n, k = 1 + i % 61, 1 + i % 7
            # The argument is a temporary: only what the conversion returned refers to it.
            if way == "bound typed call":
                call = typed.sum.bind(np.arange(n, dtype=np.float64) * k, out)
            else:
                make = get_ranked_memref_descriptor if way == "ranked descriptor" else get_unranked_memref_descriptor
                p = ctypes.pointer(ctypes.pointer(make(np.arange(n, dtype=np.float64) * k)))
                call = functools.partial(
                    engine.invoke, "sum" if way == "ranked descriptor" else "sum_unranked", p, out_arg
                )
            gc.collect()
            junk = np.full(n, -1.0)  # takes the place of the argument's memory, had it been freed
            call()
            assert out[()] == k * n * (n - 1) // 2, f"call {i}"
            del junk
    finally:
        gc.unfreeze()


FOUR_MB = r"""
func.func @alloc_touch(%n: index) -> memref<?xf32> {
  // Touches one element per 4 KiB page so the allocation really takes memory.
  %m = memref.alloc(%n) : memref<?xf32>
  %c0 = arith.constant 0 : index
  %step = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %n step %step {
    memref.store %one, %m[%i] : memref<?xf32>
  }
  return %m : memref<?xf32>
}
"""


@pytest.mark.serial  # reads the resident memory of this process: nothing else may run meanwhile
@pytest.mark.jit
def test_10k_returned_4mb_memrefs_dropped_leave_memory_flat():
    from memref_runtime import JitModule

    jit = JitModule(FOUR_MB)
    n = 1 << 20  # 4 MiB of f32
    for _ in range(50):  # warm up the allocator
        jit.alloc_touch(n)
    start, peak = rss_bytes(), 0
    for i in range(10_000):
        r = jit.alloc_touch(n)  # the previous result is dropped here, after this one exists
        peak = max(peak, rss_bytes() - start)
        assert peak < 12 << 20, f"call {i}: memory grew by {peak / 2**20:.1f} MiB"  # two results live: 8 MiB
    assert r[0] == 1.0 and r[-1024] == 1.0
    del r
    assert rss_bytes() - start < 4 << 20


RESULTS = r"""
memref.global "private" constant @constants : memref<3xf32> = dense<[1.0, 2.0, 4.0]>
func.func @table() -> memref<3xf32> {
  %g = memref.get_global @constants : memref<3xf32>
  return %g : memref<3xf32>
}
func.func @tail(%a: memref<?xf32>, %from: index) -> memref<?xf32, strided<[1], offset: ?>> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  %m = arith.subi %n, %from : index
  %r = memref.subview %a[%from][%m][1] : memref<?xf32> to memref<?xf32, strided<[1], offset: ?>>
  return %r : memref<?xf32, strided<[1], offset: ?>>
}
func.func @as_unranked(%a: memref<?xf32>) -> memref<*xf32> {
  %u = memref.cast %a : memref<?xf32> to memref<*xf32>
  return %u : memref<*xf32>
}
func.func @fresh(%n: index, %v: f32) -> memref<?xf32> {
  %m = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%v : f32) outs(%m : memref<?xf32>)
  return %m : memref<?xf32>
}
"""

# result kind -> (call, the values it must hold, whose memory it is)
RESULT_KINDS = {
    "view of the input": (lambda jit, a: jit.tail(a, 2), [2, 3, 4, 5], "input"),
    "unranked view of the input": (lambda jit, a: jit.as_unranked(a), [0, 1, 2, 3, 4, 5], "input"),
    "global": (lambda jit, a: jit.table(), [1, 2, 4], "module"),
    "fresh allocation": (lambda jit, a: jit.fresh(4, 2.5), [2.5] * 4, "its own"),
}


@pytest.mark.jit
@pytest.mark.parametrize("kind", list(RESULT_KINDS))
def test_results_stay_valid_after_the_input_and_the_module_names_are_deleted(kind):
    from memref_runtime import JitModule
    from memref_runtime.jit.results import NativeAllocation

    call, expected, owner = RESULT_KINDS[kind]
    jit = JitModule(RESULTS)
    a = np.arange(6, dtype=np.float32)
    r = call(jit, a)
    expected = np.array(expected, np.float32)
    np.testing.assert_array_equal(r, expected)
    assert r.base.owner is {"input": a, "module": jit}.get(owner, r.base.owner)
    if owner == "its own":
        assert isinstance(r.base.owner, NativeAllocation)
    assert r.flags.writeable == (owner != "module")  # a constant global is read-only
    if r.flags.writeable:
        r[0] = expected[0] = -1.0
        assert owner != "input" or a[a.size - r.size] == -1.0  # a view: the write reaches the input
    input_alive, module_alive = weakref.ref(a), weakref.ref(jit)
    del a, jit
    junk = churn_the_allocator(size=1000, count=200)
    assert (input_alive() is not None) == (owner == "input")
    assert (module_alive() is not None) == (owner == "module")
    np.testing.assert_array_equal(r, expected)
    del r, junk
    gc.collect()
    assert input_alive() is None and module_alive() is None  # ... and no longer than that


CALLBACK_VIEWS = r"""
func.func private @visit(memref<?xf64>) attributes {llvm.emit_c_interface}
func.func @visit_input(%a: memref<?xf64>) {
  call @visit(%a) : (memref<?xf64>) -> ()
  return
}
"""


@pytest.mark.jit
def test_callback_views_kept_past_the_callback_the_documented_safe_ways():
    """A callback's view does not own its memory: keep a copy, or keep the view only as long as
    the caller keeps the array it views (docs/bad-inputs.md, "Views a callback keeps")."""
    from memref_runtime import JitModule

    copies, views = [], []

    def visit(view):
        copies.append(view.copy())
        views.append(view)

    jit = JitModule(CALLBACK_VIEWS)
    jit.register_callback("visit", visit)
    a = np.arange(5.0)
    jit.visit_input(a)
    del jit
    junk = churn_the_allocator(size=1000, count=200)
    (copy,), (view,) = copies, views
    np.testing.assert_array_equal(copy, np.arange(5.0))  # a copy: the callback's values, for good
    assert view.base.owner is None  # the view keeps nothing alive ...
    assert address_of(view) == address_of(a) and view.flags.writeable  # ... it is the caller's array
    a[1] = 40.0
    view[2] = 50.0
    np.testing.assert_array_equal(view, [0.0, 40.0, 50.0, 3.0, 4.0])
    np.testing.assert_array_equal(a, view)
    np.testing.assert_array_equal(copy, np.arange(5.0))
    del junk


ADD_INTO = """
func.func @add_into(%a: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %a : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
"""


@pytest.mark.jit
@pytest.mark.parametrize("way", ["the function after its first call", "a JitFunction", "a bound call"])
def test_a_function_taken_from_a_jit_module_keeps_it_alive(way):
    """`f = JitModule(src).f` (or `.bind(...)`) must not outlive the engine holding its code:
    calling it after the module's last name was gone ran freed code (SIGSEGV) before."""
    from memref_runtime import JitModule

    a, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    jit = JitModule(ADD_INTO)
    if way == "the function after its first call":
        jit.add_into(a, out)
    call = jit.add_into.bind(a, out) if way == "a bound call" else functools.partial(jit.add_into, a, out)
    module_alive = weakref.ref(jit)
    del jit
    gc.collect()
    junk = churn_the_allocator(size=1000, count=200)
    assert module_alive() is not None
    out[:] = 0
    call()
    np.testing.assert_array_equal(out, 2 * a)
    del call, junk
    gc.collect()
    assert module_alive() is None  # ... and no longer than that
