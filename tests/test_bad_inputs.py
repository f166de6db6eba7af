"""The bad-input catalogue: one test per row of the table in docs/bad-inputs.md.

Every row is a misuse from Python. Each ends in a clear exception, whose message names the
argument, what was expected and what was given, or in the correct result: never a crash of the
interpreter, never a silently wrong answer. The last test keeps that table and this file
in step.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import mmap
import os
import re
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from support.dlpack_producer import DLPackProducer
from support.engine import HAVE_JIT, compile_mlir, memref_arg

from memref_runtime.np_to_memref import (
    get_ranked_memref_descriptor,
    get_unranked_memref_descriptor,
    ranked_memref_to_numpy,
)

CATALOGUE = Path(__file__).resolve().parent.parent / "docs" / "bad-inputs.md"

KERNELS = r"""
func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %out: memref<?xf32>) {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%out : memref<?xf32>)
  return
}
func.func @scale(%a: memref<?xf32, strided<[?], offset: ?>>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32, strided<[?], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32, strided<[?], offset: ?>>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %a[%i] : memref<?xf32, strided<[?], offset: ?>>
  }
  return
}
func.func @corner(%a: memref<2x3xf64>) -> f64 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %x = memref.load %a[%c1, %c2] : memref<2x3xf64>
  return %x : f64
}
func.func @nothing() {
  return
}
func.func private @helper() {
  return
}
"""

# Tensors are values: bufferized read-only at the boundary, so a tensor parameter is a read-only use.
TOTAL = r"""
func.func @total(%t: tensor<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %t, %c0 : tensor<?xf32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = tensor.extract %t[%i] : tensor<?xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  return %s : f32
}
"""

CALLBACKS = r"""
func.func private @visit(memref<?xf32>, f32) -> f32 attributes {llvm.emit_c_interface}
func.func private @split(f64) -> (f64, i64) attributes {llvm.emit_c_interface}
func.func @run(%a: memref<?xf32>, %s: f32) -> f32 {
  %r = call @visit(%a, %s) : (memref<?xf32>, f32) -> f32
  return %r : f32
}
func.func @run_split(%x: f64) -> (f64, i64) {
  %a, %b = call @split(%x) : (f64) -> (f64, i64)
  return %a, %b : f64, i64
}
"""

# The same callback, declared for upstream's way: a ctypes function registered with the engine.
RAW_CALLBACK = r"""
func.func private @visit(f32) -> f32 attributes {llvm.emit_c_interface}
func.func @run(%x: f32, %out: memref<f32>) attributes {llvm.emit_c_interface} {
  %r = call @visit(%x) : (f32) -> f32
  memref.store %r, %out[] : memref<f32>
  return
}
"""

needs_jit = pytest.mark.skipif(not HAVE_JIT, reason="no MLIR Python bindings with an ExecutionEngine")


@contextlib.contextmanager
def raises_exactly(error: type, message: str):
    """pytest.raises(error), and its message is exactly `message` (notes aside)."""
    with pytest.raises(error) as info:
        yield info
    assert str(info.value) == message


@pytest.fixture(scope="module")
def kernels():
    """KERNELS, compiled once for the module: the refusals come before any native code runs, at every opt level."""
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    return JitModule(KERNELS)


@pytest.fixture(scope="module")
def total():
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    return JitModule(TOTAL).total


def callbacks(**fns):
    """A fresh JitModule of CALLBACKS with `fns` registered (a module links its callbacks once)."""
    from memref_runtime import JitModule

    jit = JitModule(CALLBACKS)
    for name, fn in {"visit": lambda a, s: s, "split": lambda x: (x, 0), **fns}.items():
        jit.register_callback(name, fn)
    return jit


F32 = np.zeros(4, np.float32)
EXPECTS_F32 = "expects memref<?xf32> (a 1-d float32 array), got "


# --- arrays -----------------------------------------------------------------------------------


@pytest.mark.skipif(sys.byteorder != "little", reason="'>f4' is native here")
def test_byte_swapped_data(kernels):
    swapped = np.arange(4, dtype=">f4")
    for convert in (get_ranked_memref_descriptor, get_unranked_memref_descriptor):
        with raises_exactly(
            ValueError,
            "nparray: expected native byte order, got big-endian float32 ('>f4'); "
            "convert it first, e.g. a.astype(a.dtype.newbyteorder('='))",
        ):
            convert(swapped)
    with raises_exactly(
        ValueError,
        "add(): argument 1 " + EXPECTS_F32 + "a big-endian float32 ('>f4') array of "
        "shape (4,); convert it with a.astype(a.dtype.newbyteorder('='))",
    ):
        kernels.add(F32, swapped, F32.copy())
    out = np.zeros(4, np.float32)
    kernels.add(F32, swapped.astype(swapped.dtype.newbyteorder("=")), out)  # the conversion the message names
    np.testing.assert_array_equal(out, [0, 1, 2, 3])


def test_stride_not_a_multiple_of_the_item_size(kernels):
    field = np.zeros(4, dtype=[("a", "<f4"), ("b", "u1")])["a"]  # float32 at a 5-byte stride
    field[:] = np.arange(4)
    assert field.dtype == np.float32 and field.strides == (5,)
    problem = (
        "stride 5 bytes on axis 0 is not a multiple of the item size 4 (float32); a memref counts "
        "strides in elements. Copy the array (np.ascontiguousarray) first"
    )
    for convert in (get_ranked_memref_descriptor, get_unranked_memref_descriptor):
        with raises_exactly(ValueError, f"nparray: {problem}"):
            convert(field)
    with raises_exactly(ValueError, f"scale(): argument 0 (memref<?xf32, strided<[?], offset: ?>>): {problem}"):
        kernels.scale(field, 2.0)
    copy = np.ascontiguousarray(field)
    kernels.scale(copy, 2.0)
    np.testing.assert_array_equal(copy, [0, 2, 4, 6])


def test_non_contiguous_array_for_an_identity_layout(kernels):
    every_other = np.arange(8, dtype=np.float32)[::2]
    out = np.zeros(4, np.float32)
    with raises_exactly(
        ValueError,
        "add(): argument 0 expects memref<?xf32>, whose identity layout assumes a "
        "C-contiguous array, got a non-contiguous float32 ('<f4') array of shape (4,) "
        "and byte strides (8,); pass np.ascontiguousarray(a), or declare the parameter "
        "with a strided layout (strided<[?, ...], offset: ?>)",
    ):
        kernels.add(every_other, F32, out)
    with pytest.raises(ValueError, match=r"^add\(\): argument 2 expects memref<\?xf32>, whose identity layout"):
        kernels.add(F32, F32, np.zeros(8, np.float32)[::2])
    with pytest.raises(
        ValueError,
        match=r"^corner\(\): argument 0 expects memref<2x3xf64>, whose identity layout "
        r".* non-contiguous float64 \('<f8'\) array of shape \(2, 3\) and byte "
        r"strides \(48, 16\)",
    ):
        kernels.corner(np.zeros((2, 6))[:, ::2])
    np.testing.assert_array_equal(out, 0)
    kernels.scale(every_other, 10.0)  # a strided parameter takes the view itself
    np.testing.assert_array_equal(every_other, [0, 20, 40, 60])
    # The contrast: ExecutionEngine.invoke has no signature to check, and the identity-layout
    # kernel reads the descriptor as if it were contiguous.
    kernels.engine.invoke("add", *(memref_arg(get_ranked_memref_descriptor(x)) for x in (every_other, F32, out)))
    np.testing.assert_array_equal(out, [0, 1, 20, 3])  # every_other is [0, 20, 40, 60]: misread


def test_wrong_dtype(kernels):
    with raises_exactly(TypeError, "add(): argument 1 " + EXPECTS_F32 + "a float64 ('<f8') array of shape (4,)"):
        kernels.add(F32, np.zeros(4), F32.copy())


def test_wrong_rank(kernels):
    with raises_exactly(ValueError, "add(): argument 1 " + EXPECTS_F32 + "a float32 ('<f4') array of shape (2, 2)"):
        kernels.add(F32, np.zeros((2, 2), np.float32), F32.copy())


def test_wrong_static_dimension(kernels):
    with raises_exactly(
        ValueError,
        "corner(): argument 0 expects memref<2x3xf64> (shape (2, 3)), got a float64 ('<f8') array of shape (3, 2)",
    ):
        kernels.corner(np.zeros((3, 2)))
    assert kernels.corner(np.arange(6.0).reshape(2, 3)) == 5.0


def test_too_few_arguments(kernels):
    with raises_exactly(TypeError, "add() takes 3 arguments (memref<?xf32>, memref<?xf32>, memref<?xf32>), got 2"):
        kernels.add(F32, F32)
    with raises_exactly(TypeError, "add() takes 3 arguments (memref<?xf32>, memref<?xf32>, memref<?xf32>), got 2"):
        kernels.add.bind(F32, F32)


def test_too_many_arguments(kernels):
    with raises_exactly(TypeError, "add() takes 3 arguments (memref<?xf32>, memref<?xf32>, memref<?xf32>), got 4"):
        kernels.add(F32, F32, F32.copy(), F32)
    with raises_exactly(TypeError, "nothing() takes 0 arguments (), got 1"):
        kernels.nothing(1)


def test_unknown_function_name(kernels):
    with raises_exactly(
        AttributeError, "the module has no function @nope; public functions: add, scale, corner, nothing"
    ):
        _ = kernels.nope
    with raises_exactly(
        AttributeError, "the module has no function @nope; public functions: add, scale, corner, nothing"
    ):
        kernels.call("nope", 1)
    with raises_exactly(
        AttributeError, "the module has only a private @helper; public functions: add, scale, corner, nothing"
    ):
        kernels.call("helper")
    assert "helper" not in kernels.functions and "add" in kernels.functions


READ_ONLY = (
    "add(): argument 2 expects memref<?xf32>, got a read-only float32 ('<f4') array of shape (4,); "
    "the native code may write into it, so pass a writable copy (np.array(a))"
)


def assert_refused_for_writing_and_read_correctly(kernels, total, read_only: np.ndarray, expected_sum: float):
    """`read_only` is refused where native code may write, and read right where it only reads."""
    assert not read_only.flags.writeable
    with raises_exactly(ValueError, READ_ONLY):
        kernels.add(F32, F32, read_only)
    with raises_exactly(ValueError, READ_ONLY):
        kernels.add.bind(F32, F32, read_only)
    assert total(read_only) == expected_sum  # a tensor parameter is a read-only use
    desc = get_ranked_memref_descriptor(read_only)  # upstream's API takes it, as upstream does ...
    view = ranked_memref_to_numpy(desc)
    assert not view.flags.writeable  # ... and what comes back stays read-only
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0
    np.testing.assert_array_equal(view, read_only)


def test_read_only_array_where_native_code_may_write(kernels, total):
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    assert_refused_for_writing_and_read_correctly(kernels, total, a, 6.0)
    np.testing.assert_array_equal(a, [0, 1, 2, 3])


def test_array_over_immutable_bytes(kernels, total):
    data = np.arange(4, dtype=np.float32).tobytes()
    assert_refused_for_writing_and_read_correctly(kernels, total, np.frombuffer(data, np.float32), 6.0)
    assert data == np.arange(4, dtype=np.float32).tobytes()


def test_read_only_mmap(kernels, total):
    # Written through, a PROT_READ mapping would kill the process with SIGSEGV.
    with tempfile.TemporaryFile() as f:
        f.write(np.arange(4, dtype=np.float32).tobytes())
        f.flush()
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            assert_refused_for_writing_and_read_correctly(kernels, total, np.frombuffer(mapped, np.float32), 6.0)
        finally:
            gc.collect()  # the arrays over the mapping go first
            mapped.close()


def test_writable_false_on_a_memref_parameter_still_refuses_read_only_arrays():
    """`bufferization.writable = false` makes a tensor parameter read-only (bufferization copies
    it before writing); on a memref it means nothing to the native code, which writes here."""
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    jit = JitModule(r"""
func.func @zero_first(%m: memref<?xf32> {bufferization.writable = false}) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %m[%c0] : memref<?xf32>
  return
}
""")
    a = np.arange(1, 5, dtype=np.float32)
    a.flags.writeable = False
    with pytest.raises(ValueError, match=r"^zero_first\(\): argument 0 expects memref<\?xf32>, got a read-only "):
        jit.zero_first(a)
    np.testing.assert_array_equal(a, [1, 2, 3, 4])
    b = a.copy()
    jit.zero_first(b)
    np.testing.assert_array_equal(b, [0, 2, 3, 4])


@pytest.mark.parametrize(
    "value, type_name",
    [
        ([1.0, 2.0], "list"),
        ((1, 2), "tuple"),
        (3.5, "float"),
        (np.float32(1), "float32"),
        (None, "NoneType"),
    ],
)
def test_not_an_array(kernels, value, type_name):
    hint = "; wrap it in np.asarray(..., dtype=...)" if isinstance(value, (list, tuple)) else ""
    for convert in (get_ranked_memref_descriptor, get_unranked_memref_descriptor):
        with raises_exactly(
            TypeError,
            "nparray: expected an array (a numpy.ndarray, or an object with __dlpack__, "
            f"__array_interface__ or a buffer), got {type_name}{hint}",
        ):
            convert(value)
    with pytest.raises(TypeError, match=rf"^add\(\): argument 1 {re.escape(EXPECTS_F32)}{type_name} "):
        kernels.add(F32, value, F32.copy())


def test_object_dtype(kernels):
    objects = np.array([object(), 1, "two", None], dtype=object)
    for convert in (get_ranked_memref_descriptor, get_unranked_memref_descriptor):
        with pytest.raises(
            TypeError,
            match=r"^nparray: dtype object \('\|O'\) has no MLIR element type; "
            r"expected one of .*float32",
        ):
            convert(objects)
    with raises_exactly(TypeError, "add(): argument 1 " + EXPECTS_F32 + "an object ('|O') array of shape (4,)"):
        kernels.add(F32, objects, F32.copy())


# --- arrays of other frameworks (docs/interop.md) ---------------------------------------------


def test_array_on_a_device_that_is_not_the_host(kernels):
    on_gpu = DLPackProducer(np.zeros(4, np.float32), device=(2, 0))  # kDLCUDA
    where = (
        "on DLPack device kDLCUDA:0; memref arguments must be host (CPU) memory: copy it there first "
        "(tensor.cpu(), jax.device_put(a, jax.devices('cpu')[0]), cupy.asnumpy(a))"
    )
    with raises_exactly(
        ValueError,
        "add(): argument 0 expects memref<?xf32>, got a "
        f"support.dlpack_producer.DLPackProducer of dtype float32, shape (4,) {where}",
    ):
        kernels.add(on_gpu, F32, F32.copy())
    with raises_exactly(
        ValueError, f"nparray: got a support.dlpack_producer.DLPackProducer of dtype float32, shape (4,) {where}"
    ):
        get_ranked_memref_descriptor(on_gpu)
    assert on_gpu.capsules == []  # refused before anything was exported
    torch = pytest.importorskip("torch")
    with raises_exactly(
        ValueError,
        "add(): argument 2 expects memref<?xf32>, got a torch.Tensor of dtype "
        "torch.float32, shape (4,), device meta, whose __dlpack_device__() names no "
        "DLPack device (ValueError: Unknown device type meta for Dlpack); memref "
        "arguments must be host (CPU) memory",
    ):
        kernels.add(F32, F32, torch.empty(4, device="meta"))


def test_read_only_dlpack_export_where_native_code_may_write(kernels, total):
    a = np.arange(4, dtype=np.float32)
    read_only = DLPackProducer(a, flags=1)  # DLPACK_FLAG_BITMASK_READ_ONLY
    with raises_exactly(
        ValueError,
        "add(): argument 2 expects memref<?xf32>, got a "
        "support.dlpack_producer.DLPackProducer of dtype float32, shape (4,), device "
        "kDLCPU:0, exported read-only; the native code may write into it, so pass a "
        "writable copy (np.array(a))",
    ):
        kernels.add(F32, F32, read_only)
    assert total(read_only) == 6.0  # a tensor parameter is a read-only use
    gc.collect()
    assert read_only.deleted == len(read_only.capsules) == 2  # each import released, once


def test_jax_array_where_native_code_may_write(kernels, total):
    jnp = pytest.importorskip("jax.numpy")
    a = jnp.arange(4, dtype=jnp.float32)
    with raises_exactly(
        ValueError,
        "add(): argument 2 expects memref<?xf32>, got a jax.Array of dtype float32, "
        "shape (4,), device cpu:0, immutable; the native code may write into it, so "
        "pass a writable copy (np.array(a))",
    ):
        kernels.add(F32, F32, a)
    assert total(a) == 6.0  # a tensor parameter is a read-only use


def test_dlpack_data_type_without_an_mlir_element_type(kernels):
    e8m0 = DLPackProducer(np.zeros(4, np.uint8), dtype=(14, 8, 1))  # kDLFloat8_e8m0fnu
    with pytest.raises(
        TypeError,
        match=r"^add\(\): argument 0 expects memref<\?xf32>, got a "
        r"support\.dlpack_producer\.DLPackProducer of dtype kDLFloat8_e8m0fnu bits 8, "
        r"shape \(4,\), device kDLCPU:0: DLPack data type kDLFloat8_e8m0fnu bits 8 "
        r"has no MLIR element type here; "
        r"supported: kDLInt bits 8 \(i8\), .*kDLBfloat bits 16 \(bf16\)",
    ):
        kernels.add(e8m0, F32, F32.copy())
    gc.collect()
    assert e8m0.deleted == 1


def test_tensor_its_framework_will_not_export(kernels):
    torch = pytest.importorskip("torch")
    with raises_exactly(
        ValueError,
        "add(): argument 0 expects memref<?xf32>, got a torch.Tensor of dtype "
        "torch.float32, shape (4,), device cpu, which its __dlpack__() would not "
        "export: BufferError: Can't export tensors that require gradient, use "
        "tensor.detach()",
    ):
        kernels.add(torch.zeros(4, requires_grad=True), F32, F32.copy())
    with pytest.raises(ValueError, match="would not export: BufferError: Can't export tensors with the conjugate"):
        get_ranked_memref_descriptor(torch.zeros(4, dtype=torch.complex64).conj())


def test_other_frameworks_array_of_the_wrong_dtype_rank_or_layout(kernels):
    torch = pytest.importorskip("torch")
    with raises_exactly(
        TypeError, "add(): argument 1 " + EXPECTS_F32 + "a torch.Tensor of dtype torch.float16, shape (4,), device cpu"
    ):
        kernels.add(F32, torch.zeros(4, dtype=torch.float16), F32.copy())
    with raises_exactly(
        ValueError,
        "add(): argument 1 " + EXPECTS_F32 + "a torch.Tensor of dtype torch.float32, shape (2, 2), device cpu",
    ):
        kernels.add(F32, torch.zeros(2, 2), F32.copy())
    with raises_exactly(
        ValueError,
        "add(): argument 2 expects memref<?xf32>, whose identity layout assumes a "
        "C-contiguous array, got a torch.Tensor of dtype torch.float32, shape (4,), "
        "strides (2,), device cpu; pass a contiguous copy (t.contiguous() for torch), "
        "or declare the parameter with a strided layout (strided<[?, ...], offset: ?>)",
    ):
        kernels.add(F32, F32, torch.zeros(8)[::2])
    every_other = torch.arange(8, dtype=torch.float32)[::2]
    kernels.scale(every_other, 10.0)  # a strided parameter takes the view itself
    assert every_other.tolist() == [0, 20, 40, 60]


# --- modules and pipelines --------------------------------------------------------------------


@needs_jit
def test_malformed_mlir():
    from memref_runtime import JitModule, lower_to_llvm
    from memref_runtime.bindings import bindings

    for bad in ("func.func @f(", "func.func @f(%x: i32) -> i32 {\n  return %y : i32\n}\n"):
        for load in (JitModule, lower_to_llvm):
            with pytest.raises(
                bindings().ir.MLIRError, match=r'^Unable to parse module assembly:\nerror: "-":\d+:\d+: \w'
            ):
                load(bad)


@needs_jit
def test_unknown_pass():
    from memref_runtime import JitModule, LoweringError

    with pytest.raises(LoweringError) as info:
        JitModule("func.func @f() {\n return\n}\n", pipeline="builtin.module(no-such-pass)")
    error = info.value
    assert str(error).startswith(
        "lowering to the LLVM dialect failed\n  pipeline: builtin.module(no-such-pass)\n  error: "
    )
    assert "'no-such-pass' does not refer to a registered pass or pass pipeline" in str(error)
    assert error.pipeline == "builtin.module(no-such-pass)" and error.diagnostics
    assert f"reproducer (the input IR): {error.reproducer}" in str(error)
    assert "reproduce with: " in str(error) and "--pass-pipeline='builtin.module(no-such-pass)'" in str(error)
    os.remove(error.reproducer)


@needs_jit
def test_lowering_that_leaves_an_untranslatable_op():
    from memref_runtime import JitModule, TranslationError

    # Without math lowering, math.erf survives to the translation to LLVM IR.
    pipeline = "builtin.module(convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
    src = "func.func @f(%x: f64) -> f64 {\n %y = math.erf %x : f64\n return %y : f64\n}\n"
    with pytest.raises(
        TranslationError,
        match=r"^cannot create the ExecutionEngine: ops not lowered to the LLVM "
        r"dialect: math\.erf; add passes that lower them to the pipeline\n"
        r"  error: ",
    ) as info:
        JitModule(src, pipeline=pipeline)
    assert info.value.ops == ["math.erf"]
    assert any("math.erf" in d and "LLVM" in d for d in info.value.diagnostics)
    assert JitModule(src).f(0.5) == pytest.approx(0.5204998778130465)  # the default pipeline lowers it


# --- callbacks ----------------------------------------------------------------------------------


@needs_jit
def test_exception_raised_in_a_callback(monkeypatch):
    class Boom(Exception):
        pass

    def visit(view, s):
        if s < 0:
            raise Boom(f"bad value {s}")
        return float(view.sum() * s)

    jit = callbacks(visit=visit)
    a = np.arange(4, dtype=np.float32)
    with raises_exactly(Boom, "bad value -3.0") as info:
        jit.run(a, -3.0)
    assert info.value.__notes__ == ["raised in callback @visit (@visit(memref<?xf32>, f32) -> f32)"]
    assert jit.run(a, 2.0) == 12.0  # the module goes on working
    # Upstream's way, a ctypes function: ctypes reports the exception to sys.unraisablehook
    # ("Exception ignored on calling ctypes callback function") and the native code goes on.
    unraisable = record_unraisable_types(monkeypatch)
    raw = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(lambda x: 1 / 0)
    engine = compile_mlir(RAW_CALLBACK, {"visit": raw})
    engine.invoke(
        "run", ctypes.pointer(ctypes.c_float(1.0)), memref_arg(get_ranked_memref_descriptor(np.zeros((), np.float32)))
    )
    assert unraisable == [ZeroDivisionError]


@needs_jit
def test_callback_returning_the_wrong_type(monkeypatch):
    jit = callbacks(visit=lambda view, s: "not a number", split=lambda x: (x, 1, 2))
    with raises_exactly(TypeError, "callback @visit: result 0 expects f32 (a real number), got str 'not a number'"):
        jit.run(np.zeros(4, np.float32), 1.0)
    with raises_exactly(TypeError, "callback @split: expected 2 results (f64, i64), got (1.5, 1, 2)"):
        jit.run_split(1.5)
    jit = callbacks(split=lambda x: (x, 2.5))
    with raises_exactly(
        TypeError,
        "callback @split: result 1 expects i64 (an integer), got float 2.5; convert it explicitly, e.g. int(x)",
    ):
        jit.run_split(1.5)
    # Upstream's way: ctypes cannot convert the value, reports it to sys.unraisablehook ("Exception
    # ignored on converting result of ctypes callback function") and the native code reads an
    # undefined value. That is ctypes' doing; register_callback raises instead.
    unraisable = record_unraisable_types(monkeypatch)
    raw = ctypes.CFUNCTYPE(ctypes.c_float, ctypes.c_float)(lambda x: "not a number")
    engine = compile_mlir(RAW_CALLBACK, {"visit": raw})
    engine.invoke(
        "run", ctypes.pointer(ctypes.c_float(1.0)), memref_arg(get_ranked_memref_descriptor(np.zeros((), np.float32)))
    )
    assert unraisable == [TypeError]


def record_unraisable_types(monkeypatch) -> list:
    """The types of what reaches sys.unraisablehook from now on. Only the types: the hook's
    argument (not tracked by the garbage collector) holds the traceback, whose frames reach the
    test's and so its JitModules, which would then outlive the test."""
    types: list = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: types.append(unraisable.exc_type))
    return types


# --- the catalogue's table and this file name the same cases -----------------------------------------


def catalogue_rows() -> list[tuple[str, str, str]]:
    """(input, what happens, test name) for each row of the table in docs/bad-inputs.md."""
    text = CATALOGUE.read_text()
    section = text.split("# Bad input: the catalogue\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| input")]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", row)[1:-1]] for row in rows if not set(row) <= set("|- ")]
    return [(c[0], c[1], c[2].strip("`")) for c in cells]


def test_catalogue_rows_and_tests_match():
    rows = catalogue_rows()
    named = [test for _, _, test in rows]
    here = sorted(
        name for name in globals() if name.startswith("test_") and name != "test_catalogue_rows_and_tests_match"
    )
    assert sorted(named) == here, (
        "each row of the catalogue (docs/bad-inputs.md) is one test here, and each test here a row"
    )
    assert all(what for _, what, _ in rows)
