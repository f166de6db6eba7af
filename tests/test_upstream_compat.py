"""Drop-in for upstream's `mlir.runtime`: same names, upstream's own tests pass unchanged,
and the cases upstream gets wrong, side by side."""

import ctypes
import importlib
import types
from types import SimpleNamespace

import numpy as np
import pytest

pytestmark = pytest.mark.jit

ir = pytest.importorskip("mlir.ir")
from mlir.execution_engine import ExecutionEngine  # noqa: E402
from mlir.passmanager import PassManager  # noqa: E402
from support.engine import MLIR_MAJOR  # noqa: E402

from memref_runtime.bindings import bindings  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

UPSTREAM = "mlir.runtime"
OURS = "memref_runtime.np_to_memref"


def star_import(module: str) -> dict:
    """What `from module import *` binds."""
    namespace: dict = {}
    exec(f"from {module} import *", namespace)
    namespace.pop("__builtins__", None)
    return namespace


@pytest.fixture(params=[UPSTREAM, OURS], ids=["upstream", "memref_runtime"])
def rt(request):
    """The names an upstream test gets from `from mlir.runtime import *`, from either runtime."""
    return SimpleNamespace(name=request.param, **star_import(request.param))


# --- names --------------------------------------------------------------------------------


def test_star_import_provides_every_upstream_name():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    missing = set(upstream) - set(ours)
    assert not missing, f"missing upstream names: {sorted(missing)}"
    assert ours["np"] is np and ours["ctypes"] is ctypes
    assert ours["ml_dtypes"] is upstream["ml_dtypes"]
    assert ours["np_to_memref"] is importlib.import_module(OURS)
    # Module for module, too.
    assert set(star_import("mlir.runtime.np_to_memref")) <= set(ours)


def test_upstream_names_keep_their_kind_and_layout():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    for name, theirs in upstream.items():
        mine = ours[name]
        if isinstance(theirs, type) and issubclass(theirs, ctypes.Structure):
            assert issubclass(mine, ctypes.Structure), name
            assert [(f, ctypes.sizeof(t)) for f, t in mine._fields_] == [
                (f, ctypes.sizeof(t)) for f, t in theirs._fields_
            ], name
        elif callable(theirs) and not isinstance(theirs, type):
            assert callable(mine), name
        elif isinstance(theirs, types.ModuleType) and name == "np_to_memref":
            assert mine.__name__ == OURS
        elif isinstance(theirs, types.ModuleType):
            assert mine is theirs, name  # np, ctypes, ml_dtypes


def test_package_star_import_has_the_upstream_functions_too():
    package = star_import("memref_runtime")
    upstream = star_import(UPSTREAM)
    assert {n for n in upstream if n not in ("np", "ctypes", "ml_dtypes")} <= set(package)


@pytest.mark.parametrize(
    "dtype",
    [np.float32, np.float64, np.int8, np.int32, np.int64, np.uint16, np.float16, np.complex64, np.complex128, np.bool_],
)
def test_as_ctype_agrees_with_upstream_on_size(dtype):
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    dtype = np.dtype(dtype)
    assert ctypes.sizeof(ours["as_ctype"](dtype)) == ctypes.sizeof(upstream["as_ctype"](dtype)) == dtype.itemsize


# --- upstream's execution_engine.py tests, run against both runtimes -----------------------


def lowerToLLVM(module):
    pm = PassManager.parse(
        "builtin.module(convert-complex-to-llvm,finalize-memref-to-llvm,convert-func-to-llvm,"
        "convert-arith-to-llvm,convert-cf-to-llvm,reconcile-unrealized-casts)"
    )
    pm.run(module.operation)
    return module


def test_ranked_memref_callback(rt):
    seen = []

    @ctypes.CFUNCTYPE(
        None, ctypes.POINTER(rt.make_nd_memref_descriptor(2, rt.np.ctypeslib.as_ctypes_type(rt.np.float32)))
    )
    def callback(a):
        arr = rt.ranked_memref_to_numpy(a)
        seen.append(arr.copy())

    with ir.Context():
        module = ir.Module.parse(r"""
func.func @callback_memref(%arg0: memref<2x2xf32>) attributes { llvm.emit_c_interface } {
  call @some_callback_into_python(%arg0) : (memref<2x2xf32>) -> ()
  return
}
func.func private @some_callback_into_python(memref<2x2xf32>) -> () attributes { llvm.emit_c_interface }
""")
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.register_runtime("some_callback_into_python", callback)
        inp_arr = rt.np.array([[1.0, 5.0], [6.0, 7.0]], rt.np.float32)
        execution_engine.invoke(
            "callback_memref", rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(inp_arr)))
        )
    assert len(seen) == 1 and np.array_equal(seen[0], inp_arr)


def test_unranked_memref_callback(rt):
    seen = []

    @ctypes.CFUNCTYPE(None, ctypes.POINTER(rt.UnrankedMemRefDescriptor))
    def callback(a):
        seen.append(rt.unranked_memref_to_numpy(a, rt.np.float32).copy())

    with ir.Context():
        module = ir.Module.parse(r"""
func.func @callback_memref(%arg0: memref<*xf32>) attributes { llvm.emit_c_interface } {
  call @some_callback_into_python(%arg0) : (memref<*xf32>) -> ()
  return
}
func.func private @some_callback_into_python(memref<*xf32>) -> () attributes { llvm.emit_c_interface }
""")
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.register_runtime("some_callback_into_python", callback)
        inp_arr = rt.np.array([[1.0, 2.0], [3.0, 4.0]], rt.np.float32)
        execution_engine.invoke(
            "callback_memref", rt.ctypes.pointer(rt.ctypes.pointer(rt.get_unranked_memref_descriptor(inp_arr)))
        )
        inp_arr_1 = rt.np.array([5, 6, 7], dtype=rt.np.float32)
        strided_arr = rt.np.lib.stride_tricks.as_strided(inp_arr_1, strides=(4, 0), shape=(3, 4))
        execution_engine.invoke(
            "callback_memref", rt.ctypes.pointer(rt.ctypes.pointer(rt.get_unranked_memref_descriptor(strided_arr)))
        )
    assert len(seen) == 2
    assert np.array_equal(seen[0], inp_arr)
    assert np.array_equal(seen[1], np.repeat(inp_arr_1[:, None], 4, axis=1))


OFFSET_MODULES = {
    "ranked": (
        r"""
func.func @callback_memref(%arg0: memref<5xf32>) attributes {llvm.emit_c_interface} {
  %base_buffer, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0 : memref<5xf32> -> memref<f32>, index, index, index
  %reinterpret_cast = memref.reinterpret_cast %base_buffer to offset: [3], sizes: [2], strides: [1] : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %reinterpret_cast : memref<2xf32, strided<[1], offset: 3>> to memref<?xf32, strided<[?], offset: ?>>
  call @some_callback_into_python(%cast) : (memref<?xf32, strided<[?], offset: ?>>) -> ()
  return
}
func.func private @some_callback_into_python(memref<?xf32, strided<[?], offset: ?>>) attributes {llvm.emit_c_interface}
""",
        [0, 0, 0, 1, 2],
    ),
    "unranked": (
        r"""
func.func @callback_memref(%arg0: memref<5xf32>) attributes {llvm.emit_c_interface} {
  %base_buffer, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0 : memref<5xf32> -> memref<f32>, index, index, index
  %reinterpret_cast = memref.reinterpret_cast %base_buffer to offset: [3], sizes: [2], strides: [1] : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %reinterpret_cast : memref<2xf32, strided<[1], offset: 3>> to memref<*xf32>
  call @some_callback_into_python(%cast) : (memref<*xf32>) -> ()
  return
}
func.func private @some_callback_into_python(memref<*xf32>) attributes {llvm.emit_c_interface}
""",
        [1, 2, 3, 4, 5],
    ),
}


@pytest.mark.parametrize("kind", list(OFFSET_MODULES))
def test_memref_with_offset_callback(rt, kind):
    source, values = OFFSET_MODULES[kind]
    seen = []
    if kind == "ranked":

        @ctypes.CFUNCTYPE(
            None, ctypes.POINTER(rt.make_nd_memref_descriptor(1, rt.np.ctypeslib.as_ctypes_type(rt.np.float32)))
        )
        def callback(a):
            seen.append(rt.ranked_memref_to_numpy(a).copy())
    else:

        @ctypes.CFUNCTYPE(None, ctypes.POINTER(rt.UnrankedMemRefDescriptor))
        def callback(a):
            seen.append(rt.unranked_memref_to_numpy(a, rt.np.float32).copy())

    with ir.Context():
        execution_engine = ExecutionEngine(lowerToLLVM(ir.Module.parse(source)))
        execution_engine.register_runtime("some_callback_into_python", callback)
        inp_arr = rt.np.array(values, rt.np.float32)
        execution_engine.invoke(
            "callback_memref", rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(inp_arr)))
        )
    assert len(seen) == 1 and np.array_equal(seen[0], inp_arr[3:5])


def test_memref_add(rt):
    with ir.Context():
        module = ir.Module.parse("""
    module  {
      func.func @main(%arg0: memref<1xf32>, %arg1: memref<f32>, %arg2: memref<1xf32>) attributes { llvm.emit_c_interface } {
        %0 = arith.constant 0 : index
        %1 = memref.load %arg0[%0] : memref<1xf32>
        %2 = memref.load %arg1[] : memref<f32>
        %3 = arith.addf %1, %2 : f32
        memref.store %3, %arg2[%0] : memref<1xf32>
        return
      }
    } """)
        arg1 = rt.np.array([32.5]).astype(rt.np.float32)
        arg2 = rt.np.array(6).astype(rt.np.float32)
        res = rt.np.array([0]).astype(rt.np.float32)
        arg1_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg1)))
        arg2_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg2)))
        res_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(res)))
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.invoke("main", arg1_memref_ptr, arg2_memref_ptr, res_memref_ptr)
    assert np.array_equal(res, arg1 + arg2)


def test_dynamic_memref_add_2d(rt):
    with ir.Context():
        module = ir.Module.parse("""
      module  {
        func.func @memref_add_2d(%arg0: memref<2x2xf32>, %arg1: memref<?x?xf32>, %arg2: memref<2x2xf32>) attributes {llvm.emit_c_interface} {
          %c0 = arith.constant 0 : index
          %c2 = arith.constant 2 : index
          %c1 = arith.constant 1 : index
          cf.br ^bb1(%c0 : index)
        ^bb1(%0: index):  // 2 preds: ^bb0, ^bb5
          %1 = arith.cmpi slt, %0, %c2 : index
          cf.cond_br %1, ^bb2, ^bb6
        ^bb2:  // pred: ^bb1
          %c0_0 = arith.constant 0 : index
          %c2_1 = arith.constant 2 : index
          %c1_2 = arith.constant 1 : index
          cf.br ^bb3(%c0_0 : index)
        ^bb3(%2: index):  // 2 preds: ^bb2, ^bb4
          %3 = arith.cmpi slt, %2, %c2_1 : index
          cf.cond_br %3, ^bb4, ^bb5
        ^bb4:  // pred: ^bb3
          %4 = memref.load %arg0[%0, %2] : memref<2x2xf32>
          %5 = memref.load %arg1[%0, %2] : memref<?x?xf32>
          %6 = arith.addf %4, %5 : f32
          memref.store %6, %arg2[%0, %2] : memref<2x2xf32>
          %7 = arith.addi %2, %c1_2 : index
          cf.br ^bb3(%7 : index)
        ^bb5:  // pred: ^bb3
          %8 = arith.addi %0, %c1 : index
          cf.br ^bb1(%8 : index)
        ^bb6:  // pred: ^bb1
          return
        }
      }
        """)
        rng = rt.np.random.default_rng(0)
        arg1 = rng.standard_normal((2, 2)).astype(rt.np.float32)
        arg2 = rng.standard_normal((2, 2)).astype(rt.np.float32)
        res = rng.standard_normal((2, 2)).astype(rt.np.float32)
        arg1_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg1)))
        arg2_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg2)))
        res_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(res)))
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.invoke("memref_add_2d", arg1_memref_ptr, arg2_memref_ptr, res_memref_ptr)
    assert np.array_equal(res, arg1 + arg2)  # one f32 add per element, as NumPy does


ADD_1D = """
    module  {{
      func.func @main(%arg0: memref<1x{T}>,
                      %arg1: memref<1x{T}>,
                      %arg2: memref<1x{T}>) attributes {{ llvm.emit_c_interface }} {{
        %0 = arith.constant 0 : index
        %1 = memref.load %arg0[%0] : memref<1x{T}>
        %2 = memref.load %arg1[%0] : memref<1x{T}>
        %3 = {ADD} %1, %2 : {T}
        memref.store %3, %arg2[%0] : memref<1x{T}>
        return
      }}
    }} """


@pytest.mark.parametrize(
    "mlir_type, add, dtype, a, b",
    [
        ("f16", "arith.addf", np.float16, 11.0, 22.0),
        ("complex<f64>", "complex.add", np.complex128, 1.0 + 2.0j, 3.0 + 4.0j),
    ],
    ids=["f16", "complex128"],
)
def test_memref_add_f16_and_complex(rt, mlir_type, add, dtype, a, b):
    with ir.Context():
        module = ir.Module.parse(ADD_1D.format(T=mlir_type, ADD=add))
        arg1 = rt.np.array([a]).astype(dtype)
        arg2 = rt.np.array([b]).astype(dtype)
        arg3 = rt.np.array([0.0]).astype(dtype)
        arg1_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg1)))
        arg2_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg2)))
        arg3_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg3)))
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.invoke("main", arg1_memref_ptr, arg2_memref_ptr, arg3_memref_ptr)
        # test to-numpy utility
        npout = rt.ranked_memref_to_numpy(arg3_memref_ptr[0])
    assert np.array_equal(arg3, arg1 + arg2)
    assert npout.dtype == dtype and np.array_equal(npout, arg1 + arg2)


def test_complex_unranked_memref_add(rt):
    with ir.Context():
        module = ir.Module.parse("""
    module  {
      func.func @main(%arg0: memref<*xcomplex<f32>>,
                      %arg1: memref<*xcomplex<f32>>,
                      %arg2: memref<*xcomplex<f32>>) attributes { llvm.emit_c_interface } {
        %A = memref.cast %arg0 : memref<*xcomplex<f32>> to memref<1xcomplex<f32>>
        %B = memref.cast %arg1 : memref<*xcomplex<f32>> to memref<1xcomplex<f32>>
        %C = memref.cast %arg2 : memref<*xcomplex<f32>> to memref<1xcomplex<f32>>
        %0 = arith.constant 0 : index
        %1 = memref.load %A[%0] : memref<1xcomplex<f32>>
        %2 = memref.load %B[%0] : memref<1xcomplex<f32>>
        %3 = complex.add %1, %2 : complex<f32>
        memref.store %3, %C[%0] : memref<1xcomplex<f32>>
        return
      }
    } """)
        arg1 = rt.np.array([5.0 + 6.0j]).astype(rt.np.complex64)
        arg2 = rt.np.array([7.0 + 8.0j]).astype(rt.np.complex64)
        arg3 = rt.np.array([0.0 + 0.0j]).astype(rt.np.complex64)
        arg1_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_unranked_memref_descriptor(arg1)))
        arg2_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_unranked_memref_descriptor(arg2)))
        arg3_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_unranked_memref_descriptor(arg3)))
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.invoke("main", arg1_memref_ptr, arg2_memref_ptr, arg3_memref_ptr)
        npout = rt.unranked_memref_to_numpy(arg3_memref_ptr[0], rt.np.dtype(rt.np.complex64))
    assert np.array_equal(arg3, arg1 + arg2)
    assert npout.dtype == np.complex64 and np.array_equal(npout, arg1 + arg2)


# Upstream 22.1.8 knows bf16 and f8E5M2 only (newer upstreams, as in torch-mlir, know more);
# every one of them is ours.
ML_DTYPES_CASES = [
    ("bf16", "bfloat16", True),
    ("f8E5M2", "float8_e5m2", True),
    ("f8E4M3", "float8_e4m3", False),
    ("f8E3M4", "float8_e3m4", False),
    ("f8E4M3FN", "float8_e4m3fn", False),
]


def upstream_knows(attr: str) -> bool:
    try:
        star_import(UPSTREAM)["as_ctype"](np.dtype(getattr(ml_dtypes, attr)))
        return True
    except NotImplementedError:
        return False


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")
@pytest.mark.parametrize("mlir_type, attr, upstream_has_it", ML_DTYPES_CASES, ids=[c[0] for c in ML_DTYPES_CASES])
def test_low_precision_memref_copy(rt, mlir_type, attr, upstream_has_it):
    dtype = getattr(ml_dtypes, attr)
    if rt.name == UPSTREAM and not upstream_knows(attr):
        with pytest.raises(NotImplementedError):
            rt.get_ranked_memref_descriptor(rt.np.array([0.5]).astype(dtype))
        pytest.xfail(f"upstream's as_ctype has no ctype for {attr} (NotImplementedError)")
    with ir.Context():
        module = ir.Module.parse(f"""
    module  {{
      func.func @main(%arg0: memref<1x{mlir_type}>,
                      %arg1: memref<1x{mlir_type}>) attributes {{ llvm.emit_c_interface }} {{
        %0 = arith.constant 0 : index
        %1 = memref.load %arg0[%0] : memref<1x{mlir_type}>
        memref.store %1, %arg1[%0] : memref<1x{mlir_type}>
        return
      }}
    }} """)
        arg1 = rt.np.array([0.5]).astype(dtype)
        arg2 = rt.np.array([0.0]).astype(dtype)
        arg1_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg1)))
        arg2_memref_ptr = rt.ctypes.pointer(rt.ctypes.pointer(rt.get_ranked_memref_descriptor(arg2)))
        execution_engine = ExecutionEngine(lowerToLLVM(module))
        execution_engine.invoke("main", arg1_memref_ptr, arg2_memref_ptr)
        # test to-numpy utility
        x = rt.ranked_memref_to_numpy(arg2_memref_ptr[0])
    assert len(x) == 1
    assert x[0] == 0.5
    assert x.dtype == dtype


def test_upstream_really_lacks_the_newer_f8_types():
    if ml_dtypes is None:
        pytest.skip("ml_dtypes is not installed")
    if (bindings().name, MLIR_MAJOR) != ("mlir", 22):
        pytest.skip("a fact about the upstream runtime in the MLIR 22 wheel")
    upstream = star_import(UPSTREAM)
    for _, attr, upstream_has_it in ML_DTYPES_CASES:
        if not upstream_has_it:
            with pytest.raises(NotImplementedError):
                upstream["as_ctype"](np.dtype(getattr(ml_dtypes, attr)))


# --- interoperability ---------------------------------------------------------------------


def test_descriptors_made_by_either_runtime_are_read_by_the_other():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1, 1:]
    from_upstream = ours["ranked_memref_to_numpy"](ctypes.pointer(upstream["get_ranked_memref_descriptor"](a)))
    assert np.array_equal(from_upstream, a) and np.shares_memory(from_upstream, a)
    from_ours = upstream["ranked_memref_to_numpy"](ctypes.pointer(ours["get_ranked_memref_descriptor"](a)))
    assert np.array_equal(from_ours, a) and np.shares_memory(from_ours, a)


# --- where upstream is wrong: documented contrasts ----------------------------------------


def test_contrast_rank_0_to_numpy():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    a = np.array(4.25, np.float32)
    with pytest.raises(AttributeError, match="shape"):
        upstream["ranked_memref_to_numpy"](ctypes.pointer(upstream["get_ranked_memref_descriptor"](a)))
    result = ours["ranked_memref_to_numpy"](ctypes.pointer(ours["get_ranked_memref_descriptor"](a)))
    assert result.shape == () and result == a and np.shares_memory(result, a)


def test_contrast_byte_stride_not_a_multiple_of_the_item_size():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    records = np.zeros(4, dtype=[("a", "<f4"), ("b", "u1")])
    records["a"] = [1.0, 2.0, 3.0, 4.0]
    records["b"] = 0xFF
    field = records["a"]
    assert field.strides == (5,)

    # Upstream truncates 5 // 4 == 1: the native code would read the wrong bytes, silently.
    desc = upstream["get_ranked_memref_descriptor"](field)
    assert list(desc.strides) == [1]
    misread = upstream["ranked_memref_to_numpy"](ctypes.pointer(desc))
    assert misread[0] == field[0] and not np.array_equal(misread, field)

    with pytest.raises(ValueError, match="stride 5 bytes"):
        ours["get_ranked_memref_descriptor"](field)


def test_contrast_big_endian_input():
    upstream, ours = star_import(UPSTREAM), star_import(OURS)
    swapped = np.arange(3, dtype=np.float32).astype(np.dtype(np.float32).newbyteorder("S"))
    with pytest.raises(ValueError, match="byte order"):
        ours["get_ranked_memref_descriptor"](swapped)
    # Upstream either refuses with an unrelated error or hands over byte-swapped data.
    try:
        desc = upstream["get_ranked_memref_descriptor"](swapped)
    except (TypeError, NotImplementedError, ValueError):
        return
    # What native code reads there: the bytes as native floats.
    native = np.frombuffer(ctypes.string_at(desc.allocated, swapped.nbytes), np.float32)
    assert not np.array_equal(native, np.arange(3, dtype=np.float32))
