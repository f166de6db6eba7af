"""JAX arrays as memrefs, zero-copy and read-only (JAX arrays are immutable), and results out
to JAX through DLPack. What the native code receives is reported by a callback (the tensor
parameter's buffer: pointer, shape, values) and must be the JAX array's own buffer."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

jax = pytest.importorskip(
    "jax", reason="JAX is not installed (pip install jax jaxlib, or pip install -e '.[frameworks]')"
)
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)  # float64 and int64 arrays stay what they are
ml_dtypes = pytest.importorskip("ml_dtypes")

from support.arrays import address_of  # noqa: E402
from support.engine import HAVE_JIT  # noqa: E402

from memref_runtime.np_to_memref import get_ranked_memref_descriptor, ranked_memref_to_numpy  # noqa: E402
from memref_runtime.testing import check_against  # noqa: E402

pytestmark = pytest.mark.jit

DTYPES = {  # MLIR element type -> dtype (JAX's are NumPy's and ml_dtypes')
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "i1": np.dtype(np.bool_),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "complex<f32>": np.dtype(np.complex64),
}

# Per element type: @seen_T gets the buffer of @probe_T's tensor (any rank, read-only: no
# copy), @copy_T writes the tensor into a memref (memrefCopy: no i1 loads, which MLIR 22 cannot
# lower).
KERNELS = r"""
func.func private @seen_{n}(memref<*x{T}>) attributes {{ llvm.emit_c_interface }}
func.func @probe_{n}(%t: tensor<*x{T}>) {{
  %m = bufferization.to_buffer %t read_only : tensor<*x{T}> to memref<*x{T}>
  call @seen_{n}(%m) : (memref<*x{T}>) -> ()
  return
}}
func.func @copy_{n}(%t: tensor<?x?x{T}>, %out: memref<?x?x{T}>) {{
  bufferization.materialize_in_destination %t in restrict writable %out : (tensor<?x?x{T}>, memref<?x?x{T}>) -> ()
  return
}}
"""
RESULTS = r"""
func.func @twice(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = arith.addf %t, %t : tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}
func.func @fill(%n: index, %x: f32) -> memref<?xf32> {
  %r = memref.alloc(%n) {alignment = 64} : memref<?xf32>
  linalg.fill ins(%x : f32) outs(%r : memref<?xf32>)
  return %r : memref<?xf32>
}
"""

SEEN: list = []


def name(element: str) -> str:
    return element.replace("<", "_").replace(">", "")


@pytest.fixture(scope="module")
def kernels():
    """The probes and copies of every element type, compiled once for the module (a large module)."""
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    module = JitModule("".join(KERNELS.format(n=name(m), T=m) for m in DTYPES) + RESULTS)
    for element in DTYPES:
        module.register_callback(
            f"seen_{name(element)}", lambda view: SEEN.append((address_of(view), view.shape, view.copy()))
        )
    return module


def arrays(dtype: np.dtype) -> dict:
    numbers = np.arange(24) % 7
    base = (
        (numbers % 3 == 0)
        if dtype.kind == "b"
        else (numbers * 0.5 - 1).astype(dtype)
        if dtype.kind in "fcV"
        else numbers.astype(dtype)
    )
    return {
        "2-d": jnp.asarray(base.reshape(4, 6)),
        "transposed": jnp.asarray(base.reshape(4, 6)).T,
        "0-d": jnp.asarray(base[3]),
        "empty": jnp.asarray(base[:0].reshape(0, 6)),
        "3-d": jnp.asarray(base.reshape(2, 3, 4)),
    }


@pytest.mark.parametrize("element", DTYPES)
def test_typed_calls_receive_the_jax_buffer_itself(kernels, element):
    for label, a in arrays(DTYPES[element]).items():
        SEEN.clear()
        kernels.call(f"probe_{name(element)}", a)
        address, shape, values = SEEN[0]
        assert shape == a.shape, label
        if a.size:
            assert address == a.unsafe_buffer_pointer(), label  # zero-copy
        np.testing.assert_array_equal(values, np.asarray(a), err_msg=label)
        desc = get_ranked_memref_descriptor(a)
        if a.size:
            assert desc.allocated == a.unsafe_buffer_pointer(), label
        view = ranked_memref_to_numpy(desc)
        assert not view.flags.writeable, label  # JAX arrays are immutable
        np.testing.assert_array_equal(view, np.asarray(a), err_msg=label)


@pytest.mark.parametrize("element", DTYPES)
def test_typed_calls_compute_what_they_compute_on_numpy(kernels, element):
    for label, a in arrays(DTYPES[element]).items():
        if a.ndim != 2:
            continue
        from_jax, from_numpy = np.zeros(a.shape, DTYPES[element]), np.zeros(a.shape, DTYPES[element])
        kernels.call(f"copy_{name(element)}", a, from_jax)
        kernels.call(f"copy_{name(element)}", np.asarray(a), from_numpy)
        np.testing.assert_array_equal(from_jax, from_numpy, err_msg=label)
        np.testing.assert_array_equal(from_jax, np.asarray(a), err_msg=label)
    x = jnp.arange(6.0, dtype=jnp.float32).reshape(2, 3)
    np.testing.assert_array_equal(kernels.twice(x), kernels.twice(np.asarray(x)))


def test_a_memref_outlives_its_jax_array(kernels):
    a = jnp.arange(1000.0, dtype=jnp.float32)
    desc = get_ranked_memref_descriptor(a)
    del a
    gc.collect()
    churn = [jnp.full(1000, -1.0, dtype=jnp.float32) for _ in range(50)]
    np.testing.assert_array_equal(ranked_memref_to_numpy(desc), np.arange(1000.0))
    del churn


def test_a_result_leaves_for_jax_zero_copy_and_outlives_the_module(kernels):
    from memref_runtime import JitModule

    module = JitModule(RESULTS)
    r = module.fill(1000, 2.5)
    assert address_of(r) % 64 == 0  # what XLA's CPU client needs to take memory without a copy
    owner = weakref.ref(r.base.owner)
    a = jax.dlpack.from_dlpack(r)
    assert a.unsafe_buffer_pointer() == address_of(r)
    del r, module
    gc.collect()
    assert owner() is not None
    churn = [np.full(1000, -1.0, np.float32) for _ in range(50)]
    np.testing.assert_array_equal(np.asarray(a), np.full(1000, 2.5, np.float32))
    del a, churn
    gc.collect()
    assert owner() is None


def test_bf16_callback_views_leave_for_jax(kernels):
    from memref_runtime import JitModule

    module = JitModule(KERNELS.format(n="bf16", T="bf16"))
    got = []
    module.register_callback("seen_bf16", lambda view: got.append(jax.dlpack.from_dlpack(view)))
    x = jnp.arange(4, dtype=jnp.bfloat16)
    module.probe_bf16(x)
    # JAX -> memref -> JAX without a copy (XLA takes 64-byte aligned memory as it is). A
    # callback's view owns nothing: `x` must outlive what was made of it (docs/interop.md).
    assert got[0].dtype == jnp.bfloat16 and got[0].unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
    assert got[0].tolist() == [0, 1, 2, 3]


def test_check_against_a_jax_reference(kernels):
    def reference(t, out):
        assert isinstance(t, jax.Array)
        return t  # JAX arrays are immutable: the new value of `out`, argument 1

    summary = check_against(kernels.copy_f32, reference, outputs=[1], max_examples=30, reference_framework="jax")
    assert summary.examples == 30

    def twice(t):
        return t + t

    assert check_against(kernels.twice, twice, max_examples=20, reference_framework="jax").examples == 20
    with pytest.raises(AssertionError, match="differ"):
        check_against(kernels.twice, lambda t: t * 3, max_examples=20, reference_framework="jax")
