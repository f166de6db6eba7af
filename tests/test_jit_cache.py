"""JIT reuse: a JitModule of the same module shares the linked engine, and only when that is sound."""

from __future__ import annotations

import gc
import os
import threading
import weakref

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from support.paths import mlir_input  # noqa: E402

from memref_runtime import JitModule
from memref_runtime.jit import cache as jit_cache  # noqa: E402

pytestmark = pytest.mark.jit

ADD = mlir_input("add3.mlir").read_text()  # @add3: c = a + b over memref<?xf32>
SUB = ADD.replace("arith.addf", "arith.subf")
TABLE = r"""
memref.global "private" constant @values : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @table() -> memref<4xf32> {
  %t = memref.get_global @values : memref<4xf32>
  return %t : memref<4xf32>
}
"""
COUNTER = r"""
memref.global "private" @count : memref<i64> = dense<0>
func.func @bump() -> i64 {
  %g = memref.get_global @count : memref<i64>
  %v = memref.load %g[] : memref<i64>
  %c1 = arith.constant 1 : i64
  %w = arith.addi %v, %c1 : i64
  memref.store %w, %g[] : memref<i64>
  return %w : i64
}
"""
CALLBACK = r"""
func.func private @hook(f64) -> f64
func.func @run(%x: f64) -> f64 {
  %r = call @hook(%x) : (f64) -> f64
  return %r : f64
}
"""


def loaded_library(prefix: str) -> str | None:
    """The path of a shared library this process has loaded (libm: Python links it)."""
    try:
        with open("/proc/self/maps") as f:
            paths = [line.split()[-1] for line in f if "/" in line]
    except OSError:
        return None
    return next((p for p in paths if os.path.basename(p).startswith(prefix)), None)


LIBM = loaded_library("libm.so") or loaded_library("libm-")
PIPELINE = (
    "builtin.module(convert-scf-to-cf,finalize-memref-to-llvm,convert-arith-to-llvm,"
    "convert-func-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)"
)


@pytest.fixture(autouse=True)
def empty_cache(monkeypatch):
    monkeypatch.delenv(jit_cache.SIZE_ENV, raising=False)
    jit_cache.clear()
    yield
    jit_cache.clear()


def add(jit):
    a, b = np.arange(5, dtype=np.float32), np.full(5, 10, np.float32)
    out = np.zeros(5, np.float32)
    jit.add3(a, b, out)
    return out


def test_the_same_module_built_again_reuses_the_linked_engine():
    first = JitModule(ADD)
    assert add(first).tolist() == [10, 11, 12, 13, 14]
    second = JitModule(ADD)
    assert second.engine is first.engine
    assert add(second).tolist() == [10, 11, 12, 13, 14]
    assert jit_cache.stats() == {"miss: first build": 1, "hit": 1}


def test_no_reuse_before_the_first_module_is_linked():
    first, second = JitModule(ADD), JitModule(ADD)
    add(second)  # links its own engine: `first` was never called
    assert add(first).tolist() == [10, 11, 12, 13, 14]
    assert first.engine is second.engine  # `first` adopts it at its first call
    assert jit_cache.stats()["hit"] == 1


@pytest.mark.parametrize(
    "source, options, expected",
    [
        (SUB, {}, [-10, -9, -8, -7, -6]),
        (
            ADD,
            dict(
                pipeline=PIPELINE.replace("reconcile-unrealized-casts", "reconcile-unrealized-casts,canonicalize,cse")
            ),
            [10, 11, 12, 13, 14],
        ),
        (ADD, dict(opt_level=0), [10, 11, 12, 13, 14]),
        pytest.param(
            ADD,
            dict(shared_libs=[LIBM]),
            [10, 11, 12, 13, 14],
            marks=pytest.mark.skipif(LIBM is None, reason="no libm path in /proc/self/maps"),
        ),
    ],
    ids=["source", "pipeline", "opt_level", "shared_libs"],
)
def test_any_difference_of_module_or_options_is_a_new_engine(source, options, expected):
    first = JitModule(ADD)
    add(first)
    second = JitModule(source, **options)
    assert add(second).tolist() == expected
    assert second.engine is not first.engine
    assert jit_cache.stats() == {"miss: first build": 2}


def test_a_pipeline_that_lowers_to_the_same_module_shares_the_engine():
    first = JitModule(ADD)  # the default pipeline, a superset of PIPELINE's passes
    add(first)
    second = JitModule(ADD, pipeline=PIPELINE)
    assert str(second.module) == str(first.module)
    assert second.engine is first.engine


def test_an_engine_with_callbacks_is_never_shared():
    first = JitModule(CALLBACK)
    first.register_callback("hook", lambda x: x + 1)
    assert first.run(1.0) == 2.0
    second = JitModule(CALLBACK)
    second.register_callback("hook", lambda x: x * 10)  # different callbacks, same module
    assert second.run(1.0) == 10.0
    assert second.engine is not first.engine
    third = JitModule(CALLBACK)  # may still register callbacks: no engine taken at creation
    third.register_callback("hook", lambda x: -x)
    assert third.run(1.0) == -1.0
    assert jit_cache.stats() == {"miss: callbacks registered": 3}


def test_a_callback_exception_reaches_the_module_that_registered_it():
    first = JitModule(CALLBACK)
    first.register_callback("hook", lambda x: x)
    first.run(1.0)

    def fail(x):
        raise ValueError("from the second module")

    second = JitModule(CALLBACK)
    second.register_callback("hook", fail)
    with pytest.raises(ValueError, match="from the second module"):
        second.run(1.0)
    assert first.run(3.0) == 3.0


def test_a_module_with_mutable_globals_is_never_shared():
    first = JitModule(COUNTER)
    assert [first.bump(), first.bump()] == [1, 2]
    second = JitModule(COUNTER)
    assert second.bump() == 1  # its own global, not the first module's
    assert second.engine is not first.engine
    assert jit_cache.stats() == {"miss: mutable globals": 2}


def test_constant_globals_are_shared_and_views_keep_the_engine_alive():
    first = JitModule(TABLE)
    table = first.table()
    second = JitModule(TABLE)
    assert second.engine is first.engine
    view = second.table()
    engine = weakref.ref(first.engine)
    del first, second, table
    jit_cache.clear()
    gc.collect()
    assert engine() is not None  # the view holds its JitModule, which holds the engine
    assert view.tolist() == [1.0, 2.0, 3.0, 4.0]
    del view
    gc.collect()
    assert engine() is None


def test_a_shared_engine_outlives_the_module_that_built_it():
    first = JitModule(ADD)
    add(first)
    second = JitModule(ADD)
    del first
    jit_cache.clear()
    gc.collect()
    assert add(second).tolist() == [10, 11, 12, 13, 14]


def test_the_cache_keeps_no_context_alive():
    from mlir.ir import Context

    gc.collect()
    before = Context._get_live_count()  # other tests of this worker may have left some
    add(JitModule(ADD))
    add(JitModule(ADD))
    gc.collect()
    assert Context._get_live_count() == before
    assert jit_cache.stats()["hit"] == 1


def test_least_recently_used_engines_leave_first(monkeypatch):
    monkeypatch.setenv(jit_cache.SIZE_ENV, "1")
    add(JitModule(ADD))
    add(JitModule(SUB))  # evicts ADD's engine
    add(JitModule(ADD))
    assert jit_cache.stats() == {"miss: first build": 3}


def test_size_zero_turns_reuse_off(monkeypatch):
    monkeypatch.setenv(jit_cache.SIZE_ENV, "0")
    first = JitModule(ADD)
    add(first)
    assert JitModule(ADD).engine is not first.engine
    monkeypatch.setenv(jit_cache.SIZE_ENV, "lots")
    with pytest.raises(ValueError, match=r"MEMREF_RUNTIME_JIT_CACHE_SIZE: expected a number of engines .* got 'lots'"):
        JitModule(ADD)


def test_threads_building_the_same_module_get_correct_results():
    results, errors = [], []

    def build_and_call():
        try:
            results.append(add(JitModule(ADD)).tolist())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=build_and_call) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == [[10, 11, 12, 13, 14]] * 8
