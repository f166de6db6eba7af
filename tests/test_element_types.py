"""Element types: NumPy dtype <-> ctypes type <-> MLIR element type, with and without ml_dtypes."""

import ctypes
import importlib
import sys
import textwrap

import numpy as np
import pytest
from support.arrays import sample_values, supported_element_types
from support.subprocesses import run_python

from memref_runtime import element_types
from memref_runtime.element_types import (
    ElementType,
    as_ctype,
    element_type_for_ctype,
    element_type_for_dtype,
    element_type_for_mlir,
    to_numpy,
)

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    ml_dtypes = None
needs_ml_dtypes = pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")

ELEMENT_TYPES = supported_element_types()
IDS = [dtype.name for _, dtype in ELEMENT_TYPES]
# (MLIR name, ml_dtypes attribute, ctypes class name) of the types that need ml_dtypes.
ML_DTYPES_TYPES = [
    ("bf16", "bfloat16", "BF16"),
    ("f8E5M2", "float8_e5m2", "F8E5M2"),
    ("f8E4M3", "float8_e4m3", "F8E4M3"),
    ("f8E3M4", "float8_e3m4", "F8E3M4"),
    ("f8E4M3FN", "float8_e4m3fn", "F8E4M3FN"),
]


@pytest.mark.parametrize("mlir_name, dtype", ELEMENT_TYPES, ids=IDS)
def test_dtype_maps_to_mlir_name_and_a_ctype_of_the_same_size(mlir_name, dtype):
    et = element_type_for_dtype(dtype)
    assert isinstance(et, ElementType)
    assert et.mlir == mlir_name
    assert et.dtype == dtype
    assert ctypes.sizeof(et.ctype) == dtype.itemsize
    assert ctypes.alignment(et.ctype) == dtype.alignment
    assert as_ctype(dtype) is et.ctype
    # ... and back: the ctype names the same dtype.
    assert element_type_for_ctype(et.ctype).dtype == dtype


@pytest.mark.parametrize("mlir_name, dtype", ELEMENT_TYPES, ids=IDS)
def test_mlir_name_maps_to_a_dtype_of_that_width(mlir_name, dtype):
    et = element_type_for_mlir(mlir_name)
    assert et.mlir == mlir_name
    assert et.dtype.itemsize == dtype.itemsize
    if dtype.kind != "u":  # signless integer names mean the signed dtype
        assert et.dtype == dtype


def test_bool_is_i1_stored_in_one_byte():
    et = element_type_for_dtype(np.dtype(np.bool_))
    assert (et.mlir, et.ctype) == ("i1", ctypes.c_bool)
    assert ctypes.sizeof(ctypes.c_bool) == np.dtype(np.bool_).itemsize == 1
    assert element_type_for_mlir("i1").dtype == np.bool_


@pytest.mark.parametrize(
    "alias, dtype",
    [
        ("index", np.int64),
        ("si8", np.int8),
        ("si16", np.int16),
        ("si32", np.int32),
        ("si64", np.int64),
        ("ui8", np.uint8),
        ("ui16", np.uint16),
        ("ui32", np.uint32),
        ("ui64", np.uint64),
    ],
)
def test_index_and_signed_unsigned_spellings(alias, dtype):
    et = element_type_for_mlir(alias)
    assert et.dtype == np.dtype(dtype)
    assert et.mlir == alias
    assert ctypes.sizeof(et.ctype) == np.dtype(dtype).itemsize


@pytest.mark.parametrize(
    "ctype, dtype",
    [
        (ctypes.c_long, np.dtype(ctypes.c_long)),
        (ctypes.c_longlong, np.dtype(ctypes.c_longlong)),
        (ctypes.c_int, np.dtype(ctypes.c_int)),
        (ctypes.c_ubyte, np.uint8),
        (ctypes.c_byte, np.int8),
        (ctypes.c_ushort, np.uint16),
    ],
)
def test_platform_ctype_spellings(ctype, dtype):
    assert element_type_for_ctype(ctype).dtype == np.dtype(dtype)


@needs_ml_dtypes
def test_mlir_ir_types_are_accepted():
    ir = pytest.importorskip("mlir.ir")
    with ir.Context():
        cases = [
            (ir.IntegerType.get_signless(1), np.bool_),
            (ir.IntegerType.get_signless(16), np.int16),
            (ir.IntegerType.get_unsigned(32), np.uint32),
            (ir.IndexType.get(), np.int64),
            (ir.F16Type.get(), np.float16),
            (ir.F64Type.get(), np.float64),
            (ir.ComplexType.get(ir.F32Type.get()), np.complex64),
            (ir.BF16Type.get(), ml_dtypes.bfloat16),
            (ir.Float8E4M3FNType.get(), ml_dtypes.float8_e4m3fn),
            (ir.Float8E5M2Type.get(), ml_dtypes.float8_e5m2),
        ]
        for mlir_type, dtype in cases:
            assert element_type_for_mlir(mlir_type).dtype == np.dtype(dtype), str(mlir_type)


@pytest.mark.parametrize("name", ["f128", "i4", "tf32", "complex<i32>", "vector<4xf32>"])
def test_unknown_mlir_names_raise_type_error_naming_them(name):
    with pytest.raises(TypeError, match=name.replace("<", r"\<").replace(">", r"\>")):
        element_type_for_mlir(name)


@pytest.mark.parametrize(
    "dtype", ["float128", "object", "U3", "M8[s]", "m8[ms]", "V4", "S2", [("a", "<f4"), ("b", "u1")]], ids=str
)
def test_unsupported_dtypes_raise_type_error_naming_them(dtype):
    if dtype == "float128" and not hasattr(np, "float128"):
        pytest.skip("no float128 on this platform")
    dtype = np.dtype(dtype)
    with pytest.raises(TypeError, match=r"dtype .*" + dtype.name.replace("[", r"\[").replace("]", r"\]")):
        element_type_for_dtype(dtype)
    with pytest.raises(TypeError):
        as_ctype(dtype)


class _Pair(ctypes.Structure):
    _fields_ = [("a", ctypes.c_float), ("b", ctypes.c_int8)]


@pytest.mark.parametrize("ctype", [ctypes.c_char_p, ctypes.c_wchar, _Pair])
def test_unsupported_ctypes_raise_type_error(ctype):
    with pytest.raises(TypeError, match="not an MLIR element type"):
        element_type_for_ctype(ctype)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.float16, np.uint16])
def test_non_native_byte_order_raises_value_error(dtype):
    swapped = np.dtype(dtype).newbyteorder("S")
    assert not swapped.isnative
    with pytest.raises(ValueError, match="native byte order"):
        element_type_for_dtype(swapped)
    with pytest.raises(ValueError, match="native byte order"):
        as_ctype(swapped)


def test_element_type_error_names_the_argument():
    with pytest.raises(TypeError, match="^weights: "):
        element_type_for_dtype(np.dtype(object), argument="weights")


@pytest.mark.parametrize("mlir_name, dtype", ELEMENT_TYPES, ids=IDS)
def test_to_numpy_views_ctypes_struct_arrays_as_the_real_dtype(mlir_name, dtype):
    values = sample_values(dtype, 6)
    ctype = element_type_for_dtype(dtype).ctype
    # What np.ctypeslib.as_array makes of a ctypes buffer of this element type.
    raw = np.ctypeslib.as_array((ctype * 6).from_buffer(values.view(np.uint8)))
    converted = to_numpy(raw)
    assert converted.dtype == dtype
    assert converted.tobytes() == values.tobytes()
    assert np.shares_memory(converted, values)


# --- without ml_dtypes --------------------------------------------------------------------


@pytest.fixture
def element_types_without_ml_dtypes(monkeypatch):
    """element_types re-imported with `import ml_dtypes` failing; restored exactly afterwards."""
    saved = dict(element_types.__dict__)
    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # makes `import ml_dtypes` fail
    try:
        yield importlib.reload(element_types)
    finally:
        element_types.__dict__.clear()
        element_types.__dict__.update(saved)


@pytest.mark.parametrize("mlir_name, attr, ctype_name", ML_DTYPES_TYPES)
def test_without_ml_dtypes_types_raise_import_error_saying_install(
    element_types_without_ml_dtypes, mlir_name, attr, ctype_name
):
    et = element_types_without_ml_dtypes
    assert et.ml_dtypes is None
    # pytest.raises(ImportError) also proves it is not an AssertionError (gone under -O).
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        et.element_type_for_mlir(mlir_name)
    ctype = getattr(et, ctype_name)
    with pytest.raises(ImportError, match="pip install ml_dtypes"):
        et.element_type_for_ctype(ctype)
    with pytest.raises(ImportError, match=f"{attr}.*pip install ml_dtypes"):
        et.to_numpy(np.zeros(3, dtype=ctype))


def test_without_ml_dtypes_other_types_still_work(element_types_without_ml_dtypes):
    et = element_types_without_ml_dtypes
    assert et.element_type_for_mlir("f32").dtype == np.float32
    assert et.element_type_for_dtype(np.dtype(np.complex64)).ctype is et.C64
    values = np.arange(4, dtype=np.float16)
    assert et.to_numpy(np.ctypeslib.as_array((et.F16 * 4).from_buffer(values))).dtype == np.float16


@needs_ml_dtypes
def test_reload_fixture_restored_the_module():
    # Runs after the tests above: the original tables (with ml_dtypes) are back.
    assert element_types.ml_dtypes is ml_dtypes
    assert element_type_for_mlir("bf16").dtype == ml_dtypes.bfloat16
    assert element_types.BF16 is __import__("memref_runtime.np_to_memref").np_to_memref.BF16


def test_without_ml_dtypes_whole_package_in_a_fresh_interpreter():
    code = textwrap.dedent("""
        import ctypes, sys
        sys.modules["ml_dtypes"] = None  # as if not installed
        import numpy as np
        import memref_runtime
        from memref_runtime.np_to_memref import *
        assert ml_dtypes is None

        # Everything NumPy has on its own keeps working.
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        assert (ranked_memref_to_numpy(get_ranked_memref_descriptor(a)) == a).all()

        def expect_install_hint(f, *args):
            try:
                f(*args)
            except ImportError as e:
                assert "pip install ml_dtypes" in str(e), str(e)
            else:
                raise SystemExit(f"no ImportError from {f.__name__}{args}")

        for ctype in (BF16, F8E5M2, F8E4M3, F8E3M4, memref_runtime.F8E4M3FN):
            expect_install_hint(to_numpy, np.zeros(2, dtype=ctype))
            desc = make_nd_memref_descriptor(1, ctype)()
            expect_install_hint(ranked_memref_to_numpy, ctypes.pointer(desc))
            unranked = UnrankedMemRefDescriptor(1, ctypes.addressof(desc))
            expect_install_hint(unranked_memref_to_numpy, ctypes.pointer(unranked), ctype)
        for name in ("bf16", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FN"):
            expect_install_hint(memref_runtime.element_type_for_mlir, name)
        print("OK")
    """)
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK"


# Each way in to a type of ml_dtypes, taken first thing in a fresh interpreter (so it is the one
# that imports ml_dtypes), and what it must give.
FIRST_USES = {
    "mlir name": "assert element_type_for_mlir('bf16').dtype == np.dtype('bfloat16')",
    "ctype": "assert element_type_for_ctype(memref_runtime.F8E4M3FN).mlir == 'f8E4M3FN'",
    "dlpack": "assert element_type_for_dlpack(4, 16).mlir == 'bf16'",
    "struct array": "assert str(to_numpy(np.zeros(2, dtype=memref_runtime.F8E5M2)).dtype) == 'float8_e5m2'",
    "np_to_memref": "from memref_runtime.np_to_memref import ml_dtypes as m; assert m.bfloat16.__name__ == 'bfloat16'",
    # What upstream-style tests do: the star import binds ml_dtypes, imported on first use.
    "star import": "assert ml_dtypes.__name__ == 'ml_dtypes' and np.dtype(ml_dtypes.float8_e5m2).itemsize == 1",
    "array": (
        "import ml_dtypes\n"
        "a = np.arange(4, dtype=np.float32).astype(ml_dtypes.bfloat16)\n"
        "assert memref_runtime.element_type_for_dtype(a.dtype).ctype is memref_runtime.BF16\n"
        "assert (memref_runtime.ranked_memref_to_numpy(memref_runtime.get_ranked_memref_descriptor(a)) == a).all()"
    ),
}


@needs_ml_dtypes
@pytest.mark.parametrize("first_use", FIRST_USES.values(), ids=FIRST_USES.keys())
def test_ml_dtypes_is_imported_on_first_need_only(first_use):
    """Importing the package, star-importing np_to_memref and making a JitModule leave ml_dtypes
    unimported (its import costs more CPU than NumPy's and MLIR's together, in every lit test's
    process); the first use of one of its types imports it, and that use works."""
    code = "\n".join(
        [
            "import sys, numpy as np, memref_runtime",
            "from memref_runtime import JitModule",
            "from memref_runtime.element_types import element_type_for_ctype, element_type_for_dlpack,"
            " element_type_for_mlir, to_numpy",
            "JitModule('func.func @f() { return }')",
            "from memref_runtime.np_to_memref import *",
            "assert 'ml_dtypes' not in sys.modules, 'imported before first use'",
            first_use,
            "assert 'ml_dtypes' in sys.modules",
            "print('OK')",
        ]
    )
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "OK"


@pytest.mark.parametrize(
    "spelling, dtype",
    [
        (np.float32, np.float32),
        ("f4", np.float32),
        ("float64", np.float64),
        (np.bool_, np.bool_),
        (np.complex64, np.complex64),
        ("uint16", np.uint16),
        (np.dtype(np.int8), np.int8),
    ],
)
def test_dtype_spellings_are_accepted(spelling, dtype):
    assert element_type_for_dtype(spelling).dtype == np.dtype(dtype)
