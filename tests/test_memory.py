"""Lifetime and memory: nothing dangles, nothing is created per call, nothing leaks."""

import ctypes
import gc
import textwrap
import weakref

import numpy as np
import pytest

from conftest import memref_arg, run_python
from memref_runtime.np_to_memref import (
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    make_nd_memref_descriptor,
    ranked_memref_to_numpy,
    unranked_memref_to_numpy,
)

SUM_F64 = r"""
func.func @sum(%a: memref<?xf64>, %out: memref<f64>) attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %acc, %x : f64
    scf.yield %y : f64
  }
  memref.store %s, %out[] : memref<f64>
  return
}
func.func @sum_unranked(%a: memref<*xf64>, %out: memref<f64>) attributes { llvm.emit_c_interface } {
  %r = memref.cast %a : memref<*xf64> to memref<?xf64>
  call @sum(%r, %out) : (memref<?xf64>, memref<f64>) -> ()
  return
}
"""

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
@pytest.mark.parametrize("make_descriptor, function", [
    (get_ranked_memref_descriptor, "sum"), (get_unranked_memref_descriptor, "sum_unranked")])
def test_temporary_descriptor_keeps_its_array_alive_through_a_jit_call(jit, make_descriptor, function):
    engine = jit(SUM_F64)
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
    junk = churn_the_allocator(size=1000, count=200)
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
    junk = churn_the_allocator(size=1000, count=200)
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
