"""JitModule calls: argument checks, scalar and memref results, ownership, sources, threads."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

from memref_runtime import JitModule  # noqa: E402
from memref_runtime.jit.results import NativeAllocation  # noqa: E402

pytestmark = pytest.mark.jit

KERNELS = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%c : memref<?xf32>)
  return
}
func.func @scale2d(%a: memref<?x4xf64>, %s: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %n = memref.dim %a, %c0 : memref<?x4xf64>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x4xf64>
      %y = arith.mulf %x, %s : f64
      memref.store %y, %a[%i, %j] : memref<?x4xf64>
    }
  }
  return
}
func.func @scale_strided(%a: memref<?x?xf64, strided<[?, ?], offset: ?>>, %s: f64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  %m = memref.dim %a, %c1 : memref<?x?xf64, strided<[?, ?], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf64, strided<[?, ?], offset: ?>>
      %y = arith.mulf %x, %s : f64
      memref.store %y, %a[%i, %j] : memref<?x?xf64, strided<[?, ?], offset: ?>>
    }
  }
  return
}
func.func @sum_unranked(%u: memref<*xf32>) -> f32 {
  %a = memref.cast %u : memref<*xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %m = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %r2 = scf.for %j = %c0 to %m step %c1 iter_args(%acc2 = %acc) -> f32 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      %s = arith.addf %acc2, %x : f32
      scf.yield %s : f32
    }
    scf.yield %r2 : f32
  }
  return %r : f32
}
func.func @scalars(%b: i1, %i8: i8, %i16: i16, %i32: i32, %i64: i64, %ix: index,
                   %h: f16, %f: f32, %d: f64) -> (i1, i8, i16, i32, i64, index, f16, f32, f64) {
  %nb = arith.xori %b, %b : i1
  %t = arith.constant true
  %nb2 = arith.xori %b, %t : i1
  %one8 = arith.constant 1 : i8
  %r8 = arith.addi %i8, %one8 : i8
  %r16 = arith.muli %i16, %i16 : i16
  %r32 = arith.subi %i32, %i32 : i32
  %r32b = arith.addi %r32, %i32 : i32
  %one64 = arith.constant 1 : i64
  %r64 = arith.addi %i64, %one64 : i64
  %rx = arith.addi %ix, %ix : index
  %rh = arith.addf %h, %h : f16
  %rf = arith.mulf %f, %f : f32
  %rd = arith.negf %d : f64
  return %nb2, %r8, %r16, %r32b, %r64, %rx, %rh, %rf, %rd : i1, i8, i16, i32, i64, index, f16, f32, f64
}
func.func @negate(%x: f64) -> f64 {
  %r = arith.negf %x : f64
  return %r : f64
}
func.func @cmul(%a: complex<f64>, %b: complex<f32>) -> (complex<f64>, complex<f32>) {
  %r = complex.mul %a, %a : complex<f64>
  %s = complex.add %b, %b : complex<f32>
  return %r, %s : complex<f64>, complex<f32>
}
func.func @cneg(%a: complex<f64>) -> complex<f64> {
  %r = complex.neg %a : complex<f64>
  return %r : complex<f64>
}
func.func @alloc_fill(%n: index, %v: f32) -> memref<?xf32> {
  %m = memref.alloc(%n) : memref<?xf32>
  linalg.fill ins(%v : f32) outs(%m : memref<?xf32>)
  return %m : memref<?xf32>
}
func.func @row(%a: memref<?x?xf32>, %i: index) -> memref<?xf32, strided<[1], offset: ?>> {
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %r = memref.subview %a[%i, 0][1, %m][1, 1] : memref<?x?xf32> to memref<?xf32, strided<[1], offset: ?>>
  return %r : memref<?xf32, strided<[1], offset: ?>>
}
func.func @pair(%n: index, %a: memref<?xf32>) -> (memref<?xi32>, f64, memref<?xf32>, memref<?xi32>) {
  %m = memref.alloc(%n) : memref<?xi32>
  %seven = arith.constant 7 : i32
  linalg.fill ins(%seven : i32) outs(%m : memref<?xi32>)
  %x = arith.constant 2.5 : f64
  return %m, %x, %a, %m : memref<?xi32>, f64, memref<?xf32>, memref<?xi32>
}
func.func @unranked_result(%a: memref<?x?xf32>) -> memref<*xf32> {
  %u = memref.cast %a : memref<?x?xf32> to memref<*xf32>
  return %u : memref<*xf32>
}
func.func @zero_d(%a: memref<f32>) -> f32 {
  %x = memref.load %a[] : memref<f32>
  return %x : f32
}
func.func @static_shape(%a: memref<2x3xi64>) -> i64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = memref.load %a[%c1, %c2] : memref<2x3xi64>
  return %x : i64
}
func.func @nothing() {
  return
}
func.func private @helper(%x: f32) -> f32 {
  return %x : f32
}
"""


@pytest.fixture
def kernels(jit):
    """KERNELS from the plugin's `jit` factory, at this test's opt level: `--mlir-opt-levels=0,3` runs each
    test at each level. The JIT cache links the engine once per level; each test parses and lowers (~70 ms)."""
    return jit(KERNELS)


# --- memref arguments -------------------------------------------------------------------


def test_ranked_memref_arguments_are_written_in_place(kernels):
    a = np.linspace(0, 1, 16, dtype=np.float32)
    b = np.arange(16, dtype=np.float32)
    c = np.zeros(16, np.float32)
    assert kernels.add(a, b, c) is None
    np.testing.assert_array_equal(c, a + b)
    c2 = np.zeros(16, np.float32)
    kernels.call("add", b, b, c2)
    np.testing.assert_array_equal(c2, b + b)


def test_static_dimension_and_scalar(kernels):
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    expected = a * 2.5
    kernels.scale2d(a, 2.5)
    np.testing.assert_array_equal(a, expected)


def test_strided_parameter_accepts_any_view(kernels):
    base = np.arange(60, dtype=np.float64).reshape(6, 10)
    expected = base.copy()
    view = base[4:0:-2, 1:9:3]  # negative and non-unit strides
    expected[4:0:-2, 1:9:3] *= 3
    kernels.scale_strided(view, 3.0)
    np.testing.assert_array_equal(base, expected)
    t = np.arange(12.0).reshape(3, 4)
    expected_t = t * -1
    kernels.scale_strided(t.T, -1.0)  # Fortran-ordered view
    np.testing.assert_array_equal(t, expected_t)


def test_unranked_parameter_checks_dtype_only(kernels):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert kernels.sum_unranked(a) == pytest.approx(float(a.sum()))
    v = a[::2, 1:]  # views pass their strides
    assert kernels.sum_unranked(v) == pytest.approx(float(v.sum()))
    with pytest.raises(TypeError, match=r"sum_unranked\(\): argument 0 expects memref<\*xf32>.*float64"):
        kernels.sum_unranked(a.astype(np.float64))


def test_zero_d_and_static_shapes(kernels):
    assert kernels.zero_d(np.array(6.5, np.float32)) == 6.5
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    assert kernels.static_shape(a) == a[1, 2]


def test_masked_arrays_are_refused_not_unmasked(kernels):
    a = np.ma.masked_array(np.arange(4, dtype=np.float32), mask=[0, 1, 0, 0])
    b, c = np.ones(4, np.float32), np.zeros(4, np.float32)
    with pytest.raises(
        TypeError,
        match=r"^add\(\): argument 0 expects memref<\?xf32> \(a 1-d float32 array\), "
        r"got a masked float32 \('<f4'\) array of shape \(4,\), "
        r"whose mask would be dropped.*"
        r"a\.filled\(.*np\.asarray\(a\)",
    ):
        kernels.add(a, b, c)
    with pytest.raises(TypeError, match=r"^add\(\): argument 2 expects .* got a masked"):
        kernels.add(b, b, np.ma.masked_array(c))  # even without a masked element
    with pytest.raises(TypeError, match=r"^sum_unranked\(\): argument 0 .* got a masked"):
        kernels.sum_unranked(np.ma.masked_array(np.ones((2, 2), np.float32)))
    with pytest.raises(TypeError, match=r"^add\(\): argument 0 .* got a masked"):
        kernels.add.bind(a, b, c)
    kernels.add(a.filled(0), b, c)  # the explicit conversions work
    np.testing.assert_array_equal(c, [1, 1, 3, 4])
    kernels.add(np.asarray(a), b, c)
    np.testing.assert_array_equal(c, [1, 2, 3, 4])


def test_empty_and_signless_unsigned_arrays(kernels):
    e = np.zeros(0, np.float32)
    kernels.add(e, e, e)  # an empty array has no buffer to export; still a valid memref
    a = np.arange(6, dtype=np.uint64).reshape(2, 3)  # i64 is signless: uint64 has the same bits
    assert kernels.static_shape(a) == 5


# --- scalars ----------------------------------------------------------------------------


def test_scalar_arguments_and_results_of_every_type(kernels):
    args = (True, np.int8(-3), 300, np.int32(-7), 2**40, 21, 1.5, np.float32(3.0), 0.25)
    got = kernels.scalars(*args)
    assert isinstance(got, tuple) and len(got) == 9
    b, i8, i16, i32, i64, ix, h, f, d = got
    assert b is (not True)
    assert i8 == int(np.int8(-3) + np.int8(1))
    assert i16 == int((np.int16(300).astype(np.int32) * 300).astype(np.int16))
    assert i32 == -7 and i64 == 2**40 + 1 and ix == 42
    assert h == float(np.float16(1.5) + np.float16(1.5)) and f == 9.0 and d == -0.25
    assert all(type(v) is t for v, t in zip(got, (bool, int, int, int, int, int, float, float, float)))


def test_signless_integers_accept_the_unsigned_range(kernels):
    got = kernels.scalars(False, 255, 0, np.uint32(2**32 - 1), 2**64 - 1, 0, 0.0, 0.0, 0.0)
    assert got[0] is True
    assert got[1] == int(np.uint8(255).view(np.int8)) + 1
    assert got[3] == -1 and got[4] == 0  # 2**64 - 1 is -1 as i64; + 1 wraps to 0


@pytest.mark.parametrize(
    "index, value, error, message",
    [
        (2, 70000, ValueError, r"argument 2 expects i16 \(an integer in \[-32768, 65535\]\), got int 70000"),
        (3, 1.5, TypeError, r"argument 3 expects i32 \(an integer\), got float 1.5"),
        (0, 2, TypeError, r"argument 0 expects i1 \(a bool\), got int 2"),
        (7, "x", TypeError, r"argument 7 expects f32 \(a real number\), got str 'x'"),
        (7, 1e300, ValueError, r"argument 7 expects f32 \(a real number\), got float 1e\+300, out of range"),
        (8, 1j, TypeError, r"argument 8 expects f64 \(a real number\), got complex 1j"),
    ],
)
def test_bad_scalars(kernels, index, value, error, message):
    args = [True, 1, 1, 1, 1, 1, 1.0, 1.0, 1.0]
    args[index] = value
    with pytest.raises(error, match=r"^scalars\(\): " + message):
        kernels.scalars(*args)


@pytest.mark.parametrize(
    "index, value, given",
    [
        (7, 10**400, r"int 1000"),
        (8, 10**400, r"int 1000"),
        (8, -(10**400), r"int -1000"),
    ],
    ids=["f32", "f64", "f64-negative"],
)
def test_out_of_range_integer_for_a_float_names_the_argument(kernels, index, value, given):
    args = [True, 1, 1, 1, 1, 1, 1.0, 1.0, 1.0]
    args[index] = value
    expected = ["f32", "f64"][index - 7]
    with pytest.raises(
        ValueError,
        match=rf"^scalars\(\): argument {index} expects {expected} \(a real number\), "
        rf"got {given}.*out of range for {expected}",
    ):
        kernels.scalars(*args)


@pytest.mark.skipif(
    np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
    reason="np.longdouble is float64 here: nothing is out of f64's range",
)
def test_long_double_beyond_f64_is_refused_not_made_infinite(kernels):
    with pytest.raises(
        ValueError,
        match=r"^negate\(\): argument 0 expects f64 \(a real number\), "
        r"got longdouble .*out of range for f64",
    ):
        kernels.negate(np.longdouble("1e4000"))
    assert kernels.negate(np.longdouble("2.5")) == -2.5
    assert kernels.negate(np.longdouble("inf")) == -np.inf  # infinity itself is a value of f64
    assert kernels.negate(float("-inf")) == np.inf


@pytest.mark.parametrize(
    "value, given",
    [
        (10**400, r"int 1000"),
        (complex(1e300, 1.0), r"complex \(1e\+300\+1j\)"),
        (complex(1.0, -1e300), r"complex \(1-1e\+300j\)"),
    ],
    ids=["huge-int", "huge-real", "huge-imaginary"],
)
def test_out_of_range_complex_names_the_value_given(kernels, value, given):
    with pytest.raises(
        ValueError,
        match=rf"^cmul\(\): argument 1 expects complex<f32> \(a complex number\), "
        rf"got {given}.*out of range for complex<f32>",
    ):
        kernels.cmul(1j, value)
    with pytest.raises(
        ValueError,
        match=r"^cneg\(\): argument 0 expects complex<f64> \(a complex number\), "
        r"got int 1000.*out of range for complex<f64>",
    ):
        kernels.cneg(10**400)
    assert kernels.cneg(complex(np.inf, 1)) == complex(-np.inf, -1)


def test_single_scalar_and_complex_results(kernels):
    assert kernels.negate(2.5) == -2.5 and type(kernels.negate(1)) is float
    a, b = 1 + 2j, np.complex64(0.5 - 1j)
    r, s = kernels.cmul(a, b)
    assert r == a * a and s == complex(b + b)
    assert kernels.cneg(3 - 4j) == -(3 - 4j)
    assert kernels.cneg(2.0) == -2.0 + 0j  # a real number is a complex number


# --- memref results and who owns them ---------------------------------------------------


def test_jit_allocated_result_owns_and_frees_its_memory(kernels):
    r = kernels.alloc_fill(5, 1.25)
    np.testing.assert_array_equal(r, np.full(5, 1.25, np.float32))
    assert r.dtype == np.float32 and r.flags.writeable
    owner = r.base.owner
    assert isinstance(owner, NativeAllocation)
    alive = weakref.ref(owner)
    view = r[1:3]
    del r, owner
    gc.collect()
    assert alive() is not None  # a view of the result keeps the memory
    np.testing.assert_array_equal(view, np.full(2, 1.25, np.float32))
    del view
    gc.collect()
    assert alive() is None


def test_unranked_result(kernels):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    u = kernels.unranked_result(a)
    assert u.shape == (2, 3) and u.base.owner is a
    np.testing.assert_array_equal(u, a)


def test_several_results_share_one_owner_per_buffer(kernels):
    a = np.ones(3, np.float32)
    m, x, same_a, m_again = kernels.pair(4, a)
    np.testing.assert_array_equal(m, np.full(4, 7, np.int32))
    assert x == 2.5 and same_a.base.owner is a
    assert m.base.owner is m_again.base.owner  # returned twice, freed once
    assert isinstance(m.base.owner, NativeAllocation)


# --- sources and the module -------------------------------------------------------------


def test_sources_text_path_and_module(tmp_path):
    from mlir.ir import Context, Module

    src = "func.func @twice(%x: i32) -> i32 {\n %r = arith.addi %x, %x : i32\n return %r : i32\n}\n"
    path = tmp_path / "twice.mlir"
    path.write_text(src)
    assert JitModule(path).twice(21) == 42
    assert JitModule(str(path)).twice(-4) == -8
    with Context():
        module = Module.parse(src)
        before = str(module)
        assert JitModule(module).twice(5) == 10
        assert str(module) == before  # not mutated: no emit_c_interface, not lowered
    with pytest.raises(TypeError, match="source: expected MLIR text, a path or an ir.Module, got int"):
        JitModule(42)


def test_signatures_are_read_before_lowering(kernels):
    sig = kernels.signatures["row"]
    assert str(sig) == "@row(memref<?x?xf32>, index) -> memref<?xf32, strided<[1], offset: ?>>"
    assert kernels.signatures["helper"].public is False
    assert kernels.add.signature.inputs[0].mlir == "memref<?xf32>"
    assert "llvm.emit_c_interface" in str(kernels.module)


def test_unsupported_parameter_type_is_named():
    jit = JitModule(
        "func.func @v(%x: vector<4xf32>) -> f32 {\n"
        " %r = vector.reduction <add>, %x : vector<4xf32> into f32\n return %r : f32\n}\n"
    )
    with pytest.raises(TypeError, match=r"v\(\): argument 0 has type vector<4xf32>, which JitModule cannot pass"):
        jit.v(np.zeros(4, np.float32))


UNSUPPORTED_ELEMENTS = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
func.func @nib(%a: memref<?xi4>) {
  return
}
func.func @nib_result(%n: index) -> memref<?xi4> {
  %m = memref.alloc(%n) : memref<?xi4>
  return %m : memref<?xi4>
}
func.func @vec(%a: tensor<4xvector<4xf32>>) {
  return
}
"""


def test_unsupported_element_types_name_the_function_and_argument():
    jit = JitModule(UNSUPPORTED_ELEMENTS)  # loads: only the functions using them cannot be called
    with pytest.raises(
        TypeError,
        match=r"^nib\(\): argument 0 has type memref<\?xi4>, which JitModule cannot "
        r"pass: .*element type i4",
    ):
        jit.nib(np.zeros(4, np.int8))
    with pytest.raises(
        TypeError,
        match=r"^nib_result\(\): result 0 has type memref<\?xi4>, which JitModule "
        r"cannot pass: .*element type i4",
    ):
        jit.call("nib_result", 4)
    with pytest.raises(
        TypeError,
        match=r"^vec\(\): argument 0 has type tensor<4xvector<4xf32>>, which JitModule "
        r"cannot pass: .*element type vector<4xf32>",
    ):
        jit.vec(np.zeros(4))
    a = np.arange(3, dtype=np.float32)
    out = np.zeros(3, np.float32)
    jit.add(a, a, out)
    np.testing.assert_array_equal(out, 2 * a)


def _ones_of_rank(rank: int) -> str:
    return "memref<" + "1x" * rank + "f32>"


def test_unranked_result_beyond_numpys_rank_limit_is_a_clear_error():
    from memref_runtime.descriptors import MAX_RANK

    rank = MAX_RANK + 1
    ranked = _ones_of_rank(rank)
    jit = JitModule(f"""
func.func @deep() -> memref<*xf32> {{
  %m = memref.alloc() : {ranked}
  %u = memref.cast %m : {ranked} to memref<*xf32>
  return %u : memref<*xf32>
}}
func.func @ok() -> memref<*xf32> {{
  %m = memref.alloc() : {_ones_of_rank(MAX_RANK)}
  %u = memref.cast %m : {_ones_of_rank(MAX_RANK)} to memref<*xf32>
  return %u : memref<*xf32>
}}
""")
    with pytest.raises(ValueError, match=rf"^deep\(\): result 0 .*rank {rank}.* at most {MAX_RANK}"):
        jit.deep()
    assert jit.ok().shape == (1,) * MAX_RANK


def test_ranked_types_beyond_numpys_rank_limit_are_unsupported():
    from memref_runtime.descriptors import MAX_RANK

    ranked = _ones_of_rank(MAX_RANK + 1)
    jit = JitModule(f"func.func @deep(%a: {ranked}) {{\n return\n}}\n")
    with pytest.raises(
        TypeError,
        match=rf"^deep\(\): argument 0 has type {ranked}, which JitModule cannot pass: "
        rf".*rank {MAX_RANK + 1}.*{MAX_RANK}",
    ):
        jit.deep(np.zeros((1,) * MAX_RANK, np.float32))


ATTRIBUTE_NAMES = r"""
func.func @engine(%x: i64) -> i64 {
  return %x : i64
}
func.func @pipeline(%x: i64) -> i64 {
  %c = arith.constant 1 : i64
  %y = arith.addi %x, %c : i64
  return %y : i64
}
func.func @signatures(%x: i64) -> i64 {
  return %x : i64
}
func.func @call(%x: i64) -> i64 {
  return %x : i64
}
func.func @_lock(%x: i64) -> i64 {
  return %x : i64
}
func.func @_broken(%x: i64) -> i64 {
  return %x : i64
}
func.func @plain(%x: i64) -> i64 {
  return %x : i64
}
"""


def test_functions_named_like_module_attributes_leave_them_alone():
    from mlir.execution_engine import ExecutionEngine

    jit = JitModule(ATTRIBUTE_NAMES)
    engine, pipeline, lock = jit.engine, jit.pipeline, jit._lock
    assert jit.call("engine", 5) == 5
    assert jit.call("pipeline", 5) == 6
    assert jit.call("signatures", 3) == 3 and jit.call("call", 4) == 4 and jit.call("_lock", 2) == 2
    assert jit.call("_broken", 1) == 1
    gc.collect()
    assert jit.engine is engine and isinstance(jit.engine, ExecutionEngine)
    assert jit.pipeline is pipeline and jit._lock is lock and jit._broken is None
    assert set(jit.signatures) == {"engine", "pipeline", "signatures", "call", "_lock", "_broken", "plain"}
    assert jit.call("engine", 7) == 7 and jit.call("pipeline", 7) == 8  # the engine is still there
    assert jit.plain(9) == 9 and jit.plain is jit._invokers["plain"]  # other names are cached as usual


# --- threads ----------------------------------------------------------------------------


def test_concurrent_calls_from_several_threads(kernels):
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(300):
                n = int(rng.integers(1, 64))
                a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
                c = np.empty(n, np.float32)
                kernels.add(a, b, c)
                np.testing.assert_array_equal(c, a + b)
                r = kernels.alloc_fill(n, float(seed))
                np.testing.assert_array_equal(r, np.full(n, seed, np.float32))
                assert kernels.negate(float(seed)) == -seed
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_stderr_capture_is_one_at_a_time():
    import os
    import time

    from memref_runtime.jit.module import _captured_stderr

    before = os.fstat(2)
    original = os.dup(2)
    entered, errors = threading.Event(), []

    def first():
        try:
            with _captured_stderr([]):
                entered.set()
                time.sleep(0.2)  # the second capture starts meanwhile...
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            entered.set()

    def second():
        try:
            entered.wait()
            with _captured_stderr([]):
                time.sleep(0.4)  # and ends after the first one
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after = os.fstat(2)
    finally:
        os.dup2(original, 2)  # whatever happened, the rest of the run keeps its stderr
        os.close(original)
    assert not errors, errors
    assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino), "fd 2 left pointing elsewhere"


def test_modules_compiled_in_several_threads_keep_stderr():
    import os

    src = "func.func @f(%x: i64) -> i64 {\n return %x : i64\n}\n" + "".join(
        f"func.func @g{i}(%x: f64) -> f64 {{\n %y = math.sin %x : f64\n return %y : f64\n}}\n" for i in range(50)
    )
    before = os.fstat(2)
    original = os.dup(2)
    try:
        for _ in range(3):
            modules = [JitModule(src) for _ in range(3)]
            barrier = threading.Barrier(len(modules))
            results = []

            def first_call(m, barrier=barrier, results=results):
                barrier.wait()
                results.append(m.f(1))

            threads = [threading.Thread(target=first_call, args=(m,)) for m in modules]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert results == [1] * len(modules)
            after = os.fstat(2)
            assert (after.st_dev, after.st_ino) == (before.st_dev, before.st_ino), "fd 2 left pointing elsewhere"
    finally:
        os.dup2(original, 2)
        os.close(original)


# --- bound calls: checked and packed once, called many times ------------------------------


def test_bound_call_reads_the_arrays_current_contents(kernels):
    a, b = np.arange(5, dtype=np.float32), np.full(5, 10, np.float32)
    c = np.zeros(5, np.float32)
    add = kernels.add.bind(a, b, c)
    assert add() is None
    np.testing.assert_array_equal(c, a + b)
    a *= 3  # in place: the bound descriptors still point at these buffers
    add()
    np.testing.assert_array_equal(c, np.arange(5, dtype=np.float32) * 3 + 10)
    assert add.args[0] is a


def test_bind_checks_arguments_like_a_call(kernels):
    ok = np.zeros(4, np.float32)
    with pytest.raises(TypeError, match=r"add\(\): argument 1 expects memref<\?xf32>.*float64"):
        kernels.add.bind(ok, np.zeros(4), ok)
    with pytest.raises(TypeError, match=r"add\(\) takes 3 arguments"):
        kernels.add.bind(ok, ok)
    with pytest.raises(ValueError, match="read-only"):
        kernels.add.bind(ok, ok, np.broadcast_to(np.float32(1), (4,)))


def test_bound_call_returns_results_and_keeps_its_arguments_alive(kernels):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    row = kernels.row.bind(a, 2)
    alive = weakref.ref(a)
    del a
    gc.collect()
    assert alive() is not None  # the bound call holds it
    first, second = row(), row()
    np.testing.assert_array_equal(first, [8, 9, 10, 11])
    assert first.base.owner is alive() and second.base.owner is alive()
    negate = kernels.negate.bind(2.5)
    assert negate() == -2.5 and negate() == -2.5


def test_bind_before_and_after_the_first_call():
    fresh = JitModule(KERNELS)
    a = np.ones(3, np.float32)
    c = np.zeros(3, np.float32)
    before = fresh.add.bind(a, a, c)  # jit.add is still the JitFunction here
    before()
    np.testing.assert_array_equal(c, [2, 2, 2])
    fresh.add(a, c, c)  # now jit.add is the compiled function itself
    after = fresh.add.bind(c, c, c)
    after()
    np.testing.assert_array_equal(c, [6, 6, 6])
