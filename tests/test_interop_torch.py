"""PyTorch tensors as memrefs and back, zero-copy: typed calls, bind, descriptors, results.

Each case runs a torch tensor twice: as itself (torch.Tensor: `Tensor.numpy()` where NumPy has
the dtype, DLPack otherwise) and behind an object that offers only `__dlpack__` (the DLPack
structs read by hand, for every dtype). What the native code receives is reported by a
callback (pointer, shape, strides: the descriptor itself) and must be the tensor's own memory;
what a kernel computes must equal what it computes on the same layout given as NumPy.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

torch = pytest.importorskip(
    "torch",
    reason="PyTorch is not installed (pip install torch==2.13.0, the CPU build, then pip install -e '.[frameworks]')",
)
ml_dtypes = pytest.importorskip("ml_dtypes")

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support.arrays import address_of  # noqa: E402
from support.engine import HAVE_JIT  # noqa: E402

from memref_runtime import dlpack as dl  # noqa: E402
from memref_runtime.np_to_memref import get_ranked_memref_descriptor, ranked_memref_to_numpy  # noqa: E402
from memref_runtime.testing import check_against, check_close  # noqa: E402

pytestmark = pytest.mark.jit

# torch dtype -> (MLIR element type, NumPy dtype of the same bits)
DTYPES = {
    torch.float32: ("f32", np.dtype(np.float32)),
    torch.float64: ("f64", np.dtype(np.float64)),
    torch.int32: ("i32", np.dtype(np.int32)),
    torch.int64: ("i64", np.dtype(np.int64)),
    torch.bool: ("i1", np.dtype(np.bool_)),
    torch.bfloat16: ("bf16", np.dtype(ml_dtypes.bfloat16)),
    torch.complex64: ("complex<f32>", np.dtype(np.complex64)),
}
IDS = [str(d).removeprefix("torch.") for d in DTYPES]

# Per element type T: @seen_T gets what @probe_T got (unranked: any rank, any layout); @copy_T
# copies a strided 2-d memref (memrefCopy: no i1 loads, which MLIR 22 cannot lower); @twice_T
# doubles it with arithmetic (not for i1).
PROBE = r"""
func.func private @seen_{n}(memref<*x{T}>) attributes {{ llvm.emit_c_interface }}
func.func @probe_{n}(%a: memref<*x{T}>) {{
  call @seen_{n}(%a) : (memref<*x{T}>) -> ()
  return
}}
func.func @copy_{n}(%a: memref<?x?x{T}, strided<[?, ?], offset: ?>>, %out: memref<?x?x{T}>) {{
  memref.copy %a, %out : memref<?x?x{T}, strided<[?, ?], offset: ?>> to memref<?x?x{T}>
  return
}}
func.func @copy0_{n}(%a: memref<{T}, strided<[], offset: ?>>, %out: memref<{T}>) {{
  memref.copy %a, %out : memref<{T}, strided<[], offset: ?>> to memref<{T}>
  return
}}
"""
TWICE = r"""
func.func @twice_{n}(%a: memref<?x?x{T}, strided<[?, ?], offset: ?>>, %out: memref<?x?x{T}>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?x{T}, strided<[?, ?], offset: ?>>
  %cols = memref.dim %a, %c1 : memref<?x?x{T}, strided<[?, ?], offset: ?>>
  scf.for %i = %c0 to %rows step %c1 {{
    scf.for %j = %c0 to %cols step %c1 {{
      %x = memref.load %a[%i, %j] : memref<?x?x{T}, strided<[?, ?], offset: ?>>
      %y = {add} %x, %x : {T}
      memref.store %y, %out[%i, %j] : memref<?x?x{T}>
    }}
  }}
  return
}}
"""
ADD = {
    "f32": "arith.addf",
    "f64": "arith.addf",
    "bf16": "arith.addf",
    "i32": "arith.addi",
    "i64": "arith.addi",
    "complex<f32>": "complex.add",
}
# A bf16 result the JIT code allocates; the same in a constant global.
RESULTS = r"""
func.func @iota(%n: index) -> memref<?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.alloc(%n) : memref<?xbf16>
  scf.for %i = %c0 to %n step %c1 {
    %x = arith.index_cast %i : index to i64
    %f = arith.sitofp %x : i64 to bf16
    memref.store %f, %r[%i] : memref<?xbf16>
  }
  return %r : memref<?xbf16>
}
memref.global "private" constant @table : memref<3xbf16> = dense<[1.5, 2.5, 3.5]>
func.func @constants() -> memref<3xbf16> {
  %t = memref.get_global @table : memref<3xbf16>
  return %t : memref<3xbf16>
}
func.func @same(%a: memref<?xf32>) -> memref<?xf32> {
  return %a : memref<?xf32>
}
func.func @scale(%a: memref<?xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %a[%i] : memref<?xf32>
  }
  return
}
"""

SEEN: list = []


def name(element: str) -> str:
    return element.replace("<", "_").replace(">", "")


@pytest.fixture(scope="module")
def kernels():
    """The probes, copies and doublings of every element type, compiled once for the module (a large module)."""
    if not HAVE_JIT:
        pytest.skip("no MLIR Python bindings with an ExecutionEngine")
    from memref_runtime import JitModule

    source = (
        "".join(
            PROBE.format(n=name(m), T=m) + (TWICE.format(n=name(m), T=m, add=ADD[m]) if m in ADD else "")
            for m, _ in DTYPES.values()
        )
        + RESULTS
    )
    module = JitModule(source)
    for element, _ in DTYPES.values():
        # The view is valid during the callback only: keep what it says and a copy of its values.
        module.register_callback(
            f"seen_{name(element)}",
            lambda view: SEEN.append((address_of(view), view.shape, view.strides, view.dtype, view.copy())),
        )
    return module


class OnlyDLPack:
    """`tensor` behind its __dlpack__ and __dlpack_device__ alone: the DLPack route for every dtype."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, **kwargs):
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def as_numpy(t: torch.Tensor) -> np.ndarray:
    """The NumPy array over `t`'s memory, in `t`'s layout (bf16 through int16, as NumPy lacks it)."""
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return t.numpy()


def values(dtype, n: int) -> torch.Tensor:
    """`n` distinct-ish values of `dtype`, exact in every one (small integers and halves)."""
    if dtype == torch.bool:
        return torch.arange(n) % 3 == 0
    if dtype.is_complex:
        return torch.complex(torch.arange(n) * 0.5, -torch.arange(n) % 5 * 1.0).to(dtype)
    return (
        (torch.arange(n) % 31 - 7).to(dtype)
        if not dtype.is_floating_point
        else (torch.arange(n) % 31 * 0.5 - 3).to(dtype)
    )


def layouts(dtype) -> dict[str, torch.Tensor]:
    base = values(dtype, 60).reshape(6, 10)
    return {
        "contiguous": base,
        "transposed": base.T,
        "narrow (offset)": base.narrow(1, 3, 5),
        "strided": base[1::2, ::3],
        "expand (zero strides)": base[:1, :4].expand(5, 4),
        "as_strided": base.as_strided((3, 4), (7, 2), 5),
        "0-d": base[2, 3],
        "empty": base[:, 4:4],
        "1-d": base[3],
        "3-d": base.reshape(3, 4, 5).transpose(0, 2),
    }


def assert_received(seen, t: torch.Tensor, dtype: np.dtype):
    """What the callback saw is `t` itself: its memory, shape, strides and values."""
    address, shape, strides, seen_dtype, copy = seen
    assert seen_dtype == dtype and shape == tuple(t.shape)
    if t.numel():
        assert address == t.data_ptr()  # zero-copy: the producer's own pointer
        assert all(s == e * dtype.itemsize for s, e, n in zip(strides, t.stride(), t.shape) if n > 1)
    np.testing.assert_array_equal(copy, as_numpy(t))


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("route", [lambda t: t, OnlyDLPack], ids=["tensor", "dlpack"])
def test_typed_calls_receive_the_tensor_itself(kernels, dtype, route):
    element, np_dtype = DTYPES[dtype]
    for label, t in layouts(dtype).items():
        SEEN.clear()
        kernels.call(f"probe_{name(element)}", route(t))
        assert len(SEEN) == 1, label
        assert_received(SEEN[0], t, np_dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@pytest.mark.parametrize("route", [lambda t: t, OnlyDLPack], ids=["tensor", "dlpack"])
def test_typed_calls_compute_what_they_compute_on_numpy(kernels, dtype, route):
    element, np_dtype = DTYPES[dtype]
    names = [f"copy_{name(element)}"] + ([f"twice_{name(element)}"] if element in ADD else [])
    for label, t in layouts(dtype).items():
        if t.dim() not in (0, 2):
            continue
        for kernel in names if t.dim() == 2 else [f"copy0_{name(element)}"]:
            if kernel.startswith("twice") and t.dim() == 0:
                continue
            out_t = torch.zeros(t.shape, dtype=dtype)
            out_np = np.zeros(t.shape, np_dtype)
            kernels.call(kernel, route(t), route(out_t))
            kernels.call(kernel, as_numpy(t), out_np)
            np.testing.assert_array_equal(as_numpy(out_t), out_np, err_msg=f"{kernel}, {label}")
            expected = t if kernel.startswith("copy") else t + t
            assert torch.equal(out_t, expected.contiguous()), f"{kernel}, {label}"


@st.composite
def torch_layouts(draw, dtype):
    """A view of a fresh tensor: as_strided (any strides, zero included, at an offset), then a
    random chain of torch's view ops (transpose, narrow, expand)."""
    shape = draw(st.lists(st.integers(0, 4), max_size=3))
    strides = [draw(st.integers(0, 6)) for _ in shape]
    span = sum((n - 1) * s for n, s in zip(shape, strides)) + 1 if all(shape) else 0
    offset = draw(st.integers(0, 5))
    view = values(dtype, offset + span + draw(st.integers(0, 3))).as_strided(shape, strides, offset)
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["transpose", "narrow", "expand"]))
        if op == "transpose" and view.dim() >= 2:
            a, b = draw(st.permutations(range(view.dim())))[:2]
            view = view.transpose(a, b)
        elif op == "narrow" and view.dim():
            d = draw(st.integers(0, view.dim() - 1))
            start = draw(st.integers(0, view.shape[d]))
            view = view.narrow(d, start, draw(st.integers(0, view.shape[d] - start)))
        elif op == "expand" and view.dim() < 3:
            view = view.unsqueeze(0).expand(draw(st.integers(0, 3)), *view.shape)
    return view


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
@given(data=st.data())
def test_any_torch_layout_arrives_as_itself(kernels, dtype, data):
    element, np_dtype = DTYPES[dtype]
    t = data.draw(torch_layouts(dtype))
    for route in (lambda x: x, OnlyDLPack):
        SEEN.clear()
        kernels.call(f"probe_{name(element)}", route(t))
        assert_received(SEEN[0], t, np_dtype)
        desc = get_ranked_memref_descriptor(route(t))
        np.testing.assert_array_equal(ranked_memref_to_numpy(desc), as_numpy(t))
        if t.numel():
            assert desc.allocated == t.data_ptr()


def test_bind_keeps_the_tensors_and_reads_their_current_values(kernels):
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = torch.zeros(2, 3)
    bound = kernels.twice_f32.bind(a.T.contiguous().T, out)  # a temporary: only the bound call keeps it
    gc.collect()
    bound()
    assert torch.equal(out, 2 * a)
    twice_b = kernels.twice_bf16.bind(
        OnlyDLPack(a.to(torch.bfloat16)), OnlyDLPack(out_b := torch.zeros(2, 3, dtype=torch.bfloat16))
    )
    gc.collect()
    twice_b()
    assert torch.equal(out_b, 2 * a.to(torch.bfloat16))


def test_a_memref_outlives_its_producer(kernels):
    t = torch.arange(1000, dtype=torch.float64)
    alive = weakref.ref(t)
    desc = get_ranked_memref_descriptor(OnlyDLPack(t))
    del t
    gc.collect()
    assert alive() is not None  # torch's DLManagedTensor holds it until our deleter runs
    churn = [torch.full((1000,), -1.0, dtype=torch.float64) for _ in range(50)]
    np.testing.assert_array_equal(ranked_memref_to_numpy(desc), np.arange(1000.0))
    del desc, churn
    gc.collect()
    assert alive() is None  # the deleter ran: torch let go of the tensor


@pytest.mark.parametrize("route", [lambda t: t, OnlyDLPack], ids=["tensor", "dlpack"])
def test_a_result_viewing_a_torch_input_keeps_its_memory(kernels, route):
    t = torch.arange(1000, dtype=torch.float32)
    r = kernels.same(route(t))
    assert address_of(r) == t.data_ptr()
    del t
    gc.collect()
    churn = [torch.full((1000,), -1.0) for _ in range(50)]
    np.testing.assert_array_equal(r, np.arange(1000.0))
    del churn


def test_a_bf16_result_converted_by_torch_outlives_the_jit_module_and_the_result(kernels):
    from memref_runtime import JitModule

    module = JitModule(RESULTS)
    r = module.iota(1000)
    owner = weakref.ref(r.base.owner)  # the NativeAllocation that frees the JIT's malloc
    t = torch.from_dlpack(r)
    assert t.dtype == torch.bfloat16 and t.data_ptr() == address_of(r)
    del r, module
    gc.collect()
    churn = [torch.full((1000,), -1.0, dtype=torch.bfloat16) for _ in range(50)]
    assert owner() is not None
    assert torch.equal(t, torch.arange(1000).to(torch.bfloat16))
    del t, churn
    gc.collect()
    assert owner() is None  # torch called our deleter: the memory is freed


def test_a_constant_global_leaves_as_a_copy(kernels):
    r = kernels.constants()
    t = torch.from_dlpack(r)  # torch would ignore DLPack's read-only flag: it gets a copy
    assert t.data_ptr() != address_of(r)
    t.add_(1)  # into the copy; into the global's read-only memory this would kill the process
    np.testing.assert_array_equal(kernels.constants().astype(np.float32), [1.5, 2.5, 3.5])
    assert t.tolist() == [2.5, 3.5, 4.5]


def test_callback_views_leave_for_torch(kernels):
    from memref_runtime import JitModule

    module = JitModule(PROBE.format(n="bf16", T="bf16"))
    got = []
    module.register_callback("seen_bf16", lambda view: got.append(torch.from_dlpack(view).clone()))
    module.probe_bf16(torch.arange(4, dtype=torch.bfloat16))
    assert torch.equal(got[0], torch.arange(4, dtype=torch.bfloat16))


def test_results_and_tensors_compare_with_check_close(kernels):
    check_close("bf16", torch.arange(3, dtype=torch.bfloat16), kernels.iota(3))
    with pytest.raises(AssertionError, match="1 of 3 elements differ"):
        check_close("bf16", torch.tensor([0.0, 1.0, 5.0], dtype=torch.bfloat16), kernels.iota(3))


def test_check_against_a_torch_reference(kernels):
    def reference(a, out):
        assert isinstance(a, torch.Tensor) and isinstance(out, torch.Tensor)
        out.copy_(a + a)  # through the memory it shares with the arrays compared

    for kernel in (kernels.twice_f32, kernels.twice_bf16, kernels.twice_complex_f32):
        summary = check_against(kernel, reference, outputs=[1], max_examples=30, reference_framework="torch")
        assert summary.examples == 30 and summary.layouts["negative stride"]  # copies, written back

    def wrong(a, out):
        out.copy_(a + a + (a.numel() > 2))

    with pytest.raises(AssertionError, match="differ"):
        check_against(kernels.twice_f32, wrong, outputs=[1], max_examples=30, reference_framework="torch")


def test_a_writing_kernel_writes_into_the_tensor(kernels):
    t = torch.arange(4, dtype=torch.float32)
    kernels.scale(t, 3.0)
    assert t.tolist() == [0.0, 3.0, 6.0, 9.0]
    before = dl.exported_count()
    kernels.scale(OnlyDLPack(t), 0.5)
    assert t.tolist() == [0.0, 1.5, 3.0, 4.5] and dl.exported_count() == before


def test_a_tensor_with_the_negative_bit_is_refused_not_read_unnegated(kernels):
    # torch's own __dlpack__ exports such a tensor's memory as it is: its values un-negated.
    c = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64)
    for lazy in (c.conj().imag, torch._neg_view(torch.arange(2, dtype=torch.float32))):
        assert lazy.is_neg()
        with pytest.raises(ValueError, match=r"scale\(\): argument 0 expects .*negative bit set.*resolve_neg\(\)"):
            kernels.scale(lazy, 1.0)
        with pytest.raises(ValueError, match="negative bit set"):
            get_ranked_memref_descriptor(lazy)
        with pytest.raises(ValueError, match="negative bit set"):
            check_close("lazy", lazy, lazy.resolve_neg())
    resolved = c.conj().imag.resolve_neg()
    kernels.scale(resolved, 2.0)
    assert resolved.tolist() == [-4.0, 2.0]


def test_the_contiguous_tensor_shortcut_takes_only_what_tensor_numpy_would_view(kernels):
    from memref_runtime.interop import torch_quick

    quick = torch_quick(np.dtype(np.float32))
    t = torch.arange(4, dtype=torch.float32)
    assert quick(t) == (t.data_ptr(), (4,))
    assert torch_quick(np.dtype(ml_dtypes.bfloat16))(b := t.to(torch.bfloat16)) == (b.data_ptr(), (4,))
    declined = {
        "a subclass": torch.nn.Parameter(t.clone(), requires_grad=False),
        "requires grad": t.clone().requires_grad_(),
        "sparse": t.to_sparse(),
        "meta": torch.empty(4, device="meta"),
        "float64": t.double(),
        "strided": t[::2],
        "negative bit": torch._neg_view(t),
        "not a tensor": t.numpy(),
    }
    assert {k: quick(v) for k, v in declined.items()} == dict.fromkeys(declined)
    assert torch_quick(np.dtype(np.complex64))(torch.zeros(2, dtype=torch.complex64).conj()) is None
    # What it declines goes the general route: the same results and errors as before.
    p = declined["a subclass"]
    kernels.scale(p, 2.0)
    assert p.tolist() == [0.0, 2.0, 4.0, 6.0]
    for case, error, text in [
        ("requires grad", ValueError, "require gradient"),
        ("sparse", ValueError, "layout"),
        ("meta", ValueError, "device meta"),
        ("float64", TypeError, "torch.float64"),
    ]:
        with pytest.raises(error, match=rf"scale\(\): argument 0 expects memref<\?xf32>.*{text}"):
            kernels.scale(declined[case], 2.0)
    # What it takes is still checked against the parameter: rank, static sizes.
    with pytest.raises(ValueError, match=r"scale\(\): argument 0 expects memref<\?xf32> .*shape \(2, 2\)"):
        kernels.scale(torch.zeros(2, 2), 2.0)
    with pytest.raises(ValueError, match=r"copy0_f32\(\): argument 1 expects memref<f32> .*shape \(1,\)"):
        kernels.copy0_f32(torch.zeros(()), torch.zeros(1))
    from memref_runtime import JitModule

    four = JitModule("func.func @four(%a: memref<4xf32>) {\n  return\n}\n")
    four.four(torch.zeros(4))
    with pytest.raises(
        ValueError, match=r"four\(\): argument 0 expects memref<4xf32> \(shape \(4,\)\), got .*shape \(5,\)"
    ):
        four.four(torch.zeros(5))
