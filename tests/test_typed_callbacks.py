"""JitModule.register_callback: signatures from declarations, views, results, errors, lifetime."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from memref_runtime import JitModule  # noqa: E402

pytestmark = pytest.mark.jit

CALLBACKS = r"""
func.func private @visit(memref<?x?xf32>, f32) -> f32 attributes {llvm.emit_c_interface}
func.func private @visit_unranked(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @exploded(memref<?xf64>, index) -> i32
func.func private @minmax(i64) -> (i64, f64, i1) attributes {llvm.emit_c_interface}

func.func @run(%a: memref<?x?xf32>, %s: f32) -> f32 {
  %r = call @visit(%a, %s) : (memref<?x?xf32>, f32) -> f32
  %u = memref.cast %a : memref<?x?xf32> to memref<*xf32>
  call @visit_unranked(%u) : (memref<*xf32>) -> ()
  return %r : f32
}
func.func @run_exploded(%a: memref<?xf64>) -> i32 {
  %c3 = arith.constant 3 : index
  %r = call @exploded(%a, %c3) : (memref<?xf64>, index) -> i32
  return %r : i32
}
func.func @run_minmax(%x: i64) -> (i64, f64, i1) {
  %a, %b, %c = call @minmax(%x) : (i64) -> (i64, f64, i1)
  return %a, %b, %c : i64, f64, i1
}
"""


def make(**callbacks):
    jit = JitModule(CALLBACKS)
    defaults = {
        "visit": lambda a, s: 0.0,
        "visit_unranked": lambda u: None,
        "exploded": lambda a, n: 0,
        "minmax": lambda x: (0, 0.0, False),
    }
    for name, fn in {**defaults, **callbacks}.items():
        jit.register_callback(name, fn)
    return jit


def test_memref_arguments_are_views_and_a_scalar_result_comes_back():
    seen = []

    def visit(view, s):
        seen.append((view.shape, view.dtype, view.copy()))
        view[0, 0] = 100.0  # writes reach the caller's array
        return float(view.sum() * s)

    def visit_unranked(u):
        seen.append(("unranked", u.shape, u[0, 0]))

    jit = make(visit=visit, visit_unranked=visit_unranked)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected_view = a.copy()
    expected_a = a.copy()
    expected_a[0, 0] = 100.0
    result = jit.run(a, 2.0)
    assert result == pytest.approx(float(expected_a.sum() * 2))
    np.testing.assert_array_equal(a, expected_a)
    assert seen[0][0] == (2, 3) and seen[0][1] == np.float32
    np.testing.assert_array_equal(seen[0][2], expected_view)
    assert seen[1] == ("unranked", (2, 3), 100.0)


def test_declaration_without_c_interface_gets_exploded_descriptor_fields():
    got = {}

    def exploded(view, n):
        got["view"], got["n"] = view.copy(), n
        view[:] *= 2
        return int(view.size * 10 + n)

    jit = make(exploded=exploded)
    a = np.array([1.0, 2.0, 4.0])
    assert jit.run_exploded(a) == 33
    np.testing.assert_array_equal(got["view"], [1.0, 2.0, 4.0])
    assert got["n"] == 3
    np.testing.assert_array_equal(a, [2.0, 4.0, 8.0])


def test_several_results_go_through_the_out_parameter():
    jit = make(minmax=lambda x: (x * 2, x / 4, x > 0))
    assert jit.run_minmax(10) == (20, 2.5, True)
    assert jit.run_minmax(-3) == (-6, -0.75, False)


def test_callback_lives_as_long_as_the_engine():
    calls = []

    def visit(view, s):
        calls.append(s)
        return s

    jit = make(visit=visit)
    alive = weakref.ref(visit)
    del visit
    gc.collect()
    assert alive() is not None
    assert jit.run(np.zeros((1, 1), np.float32), 4.0) == 4.0
    assert calls == [4.0]
    del jit  # `calls` does not hold `visit` (the closure holds `calls`)
    gc.collect()
    assert alive() is None


def test_registration_errors():
    jit = JitModule(CALLBACKS)
    with pytest.raises(
        ValueError,
        match=r"register_callback\('nope'\): the module has no declaration @nope.*"
        r"declarations: @visit, @visit_unranked, @exploded, @minmax",
    ):
        jit.register_callback("nope", print)
    with pytest.raises(ValueError, match=r"register_callback\('run'\): the module defines @run"):
        jit.register_callback("run", print)
    with pytest.raises(TypeError, match="expected a callable, got int"):
        jit.register_callback("visit", 3)


def test_missing_callback_fails_to_link_with_a_clear_error():
    jit = JitModule(CALLBACKS)
    jit.register_callback("visit", lambda v, s: s)
    with pytest.raises(
        RuntimeError,
        match=r"could not link the module(.|\n)*without a registered callback: "
        r"@visit_unranked, @exploded, @minmax",
    ):
        jit.run(np.zeros((1, 1), np.float32), 1.0)
    with pytest.raises(RuntimeError, match="could not link"):  # and keeps saying so
        jit.run(np.zeros((1, 1), np.float32), 1.0)


def test_registering_after_the_first_call_raises():
    jit = make()
    jit.run(np.zeros((1, 1), np.float32), 1.0)
    with pytest.raises(RuntimeError, match=r"register every callback before the first call"):
        jit.register_callback("visit", lambda v, s: s)


def test_callback_types_the_c_abi_cannot_carry_are_refused():
    jit = JitModule(
        "func.func private @h(f16) attributes {llvm.emit_c_interface}\n"
        "func.func @f(%x: f16) {\n call @h(%x) : (f16) -> ()\n return\n}\n"
    )
    with pytest.raises(TypeError, match=r"callback @h: argument 0 has type f16, which a callback cannot take"):
        jit.register_callback("h", print)


GLOBALS = r"""
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func private @visit(memref<4xf32>) attributes {llvm.emit_c_interface}
func.func private @visit_unranked(memref<*xf32>) attributes {llvm.emit_c_interface}
func.func private @visit_exploded(memref<4xf32>)
func.func private @visit_unranked_exploded(memref<*xf32>)
func.func @run() {
  %t = memref.get_global @table : memref<4xf32>
  func.call @visit(%t) : (memref<4xf32>) -> ()
  %u = memref.cast %t : memref<4xf32> to memref<*xf32>
  func.call @visit_unranked(%u) : (memref<*xf32>) -> ()
  func.call @visit_exploded(%t) : (memref<4xf32>) -> ()
  func.call @visit_unranked_exploded(%u) : (memref<*xf32>) -> ()
  return
}
"""


def test_callback_views_of_a_constant_global_are_read_only():
    seen = []

    def visit(view):
        seen.append((view.flags.writeable, view.tolist()))
        if not view.flags.writeable:  # writing into the constant would crash the process
            with pytest.raises(ValueError, match="read-only"):
                view[0] = 42.0

    jit = JitModule(GLOBALS)
    for name in ("visit", "visit_unranked", "visit_exploded", "visit_unranked_exploded"):
        jit.register_callback(name, visit)
    jit.run()
    assert seen == [(False, [1.0, 2.0, 3.0, 4.0])] * 4


LEAKY = r"""
func.func private @check(index) attributes {llvm.emit_c_interface}
func.func @make(%n: index) -> memref<?xf64> {
  func.call @check(%n) : (index) -> ()
  %m = memref.alloc(%n) : memref<?xf64>
  %one = arith.constant 1.0 : f64
  linalg.fill ins(%one : f64) outs(%m : memref<?xf64>)
  return %m : memref<?xf64>
}
func.func @make_unranked(%n: index) -> (memref<*xf64>, f64) {
  func.call @check(%n) : (index) -> ()
  %m = memref.alloc(%n) : memref<?xf64>
  %u = memref.cast %m : memref<?xf64> to memref<*xf64>
  %x = arith.constant 2.0 : f64
  return %u, %x : memref<*xf64>, f64
}
"""


def test_results_of_a_call_whose_callback_raised_are_freed(monkeypatch):
    from memref_runtime.jit import results

    created = []

    class CountedAllocation(results.NativeAllocation):
        __slots__ = ()

        def __init__(self, address):
            super().__init__(address)
            created.append(weakref.ref(self))

    monkeypatch.setattr(results, "NativeAllocation", CountedAllocation)
    freed_descriptors = []
    real_free = results._free
    monkeypatch.setattr(results, "_free", lambda address: (freed_descriptors.append(address), real_free(address)))

    def check(n):
        raise RuntimeError(f"refused {n}")

    jit = JitModule(LEAKY)
    jit.register_callback("check", check)
    calls = [lambda: jit.make(1000), lambda: jit.make_unranked(1000), jit.make.bind(1000), jit.make_unranked.bind(1000)]
    for i, call in enumerate(calls):
        with pytest.raises(RuntimeError, match="refused 1000"):
            call()
        gc.collect()
        assert len(created) == i + 1, "the JIT-allocated result was never handed to an owner"
        assert created[-1]() is None, "the JIT-allocated result is still alive"
    assert len(freed_descriptors) == 2  # the heap copies of the unranked results' descriptors


def test_results_struct_layout_is_shared_by_calls_and_callbacks():
    from memref_runtime.jit import callbacks, results
    from memref_runtime.jit.signatures import SCALAR_KINDS, MemRefSpec, ScalarSpec

    specs = [
        ScalarSpec("i1", SCALAR_KINDS["i1"]),
        ScalarSpec("f64", SCALAR_KINDS["f64"]),
        ScalarSpec("complex<f32>", SCALAR_KINDS["complex<f32>"]),
        ScalarSpec("i8", SCALAR_KINDS["i8"]),
        MemRefSpec("memref<?xf32>", "f32", (None,), True, None, 0, True),
    ]
    fmt, size = results.results_layout(specs)
    assert fmt == "=?" + "x" * 7 + "d" + "ff" + "b" + "x" * 7 + "q" * 5 and size == 72
    assert callbacks.results_layout is results.results_layout
