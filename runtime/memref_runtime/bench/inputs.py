"""memref-bench's inputs: random arguments drawn from a function's MLIR signature at a size N.

Every dynamic size of a memref is N and every static size is kept (memref<?x16xf32> at N = 256
is 256 x 16); memrefs are C-contiguous, which also fits a `strided<[?, ?], offset: ?>` layout.
Index and integer scalars are N too (a trip count, most often), float and complex scalars and
the elements are drawn uniformly from [-1, 1) (integers from [0, 10), so that a kernel that
uses them as indices stays small), i1 scalars are true. `--arg I=VALUE` fixes scalar I.
"""

from __future__ import annotations

import math

import numpy as np

from ..element_types import is_numpy_native
from ..jit.signatures import (
    DYNAMIC,
    FunctionSignature,
    MemRefSpec,
    ScalarSpec,
    UnsupportedSpec,
)
from ..testing.differential_inputs import scalar_dtype

MAX_ARGUMENT_BYTES = 4 << 30  # one argument larger than this is refused, before allocating it


class InputError(ValueError):
    """An argument memref-bench cannot make; the message names it."""


def takes_size(sig: FunctionSignature) -> bool:
    """Whether anything in the signature depends on N (a dynamic size, an integer scalar)."""
    return any(
        (isinstance(s, MemRefSpec) and s.shape is not None and DYNAMIC in s.shape)
        or (isinstance(s, ScalarSpec) and scalar_dtype(s).kind in "iu")
        for s in sig.inputs
    )


def _values(rng: np.random.Generator, dtype: np.dtype, shape: tuple) -> np.ndarray:
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0, 10, size=shape).astype(dtype)
    if dtype.kind == "c":
        part = np.float32 if dtype.itemsize == 8 else np.float64
        return (rng.uniform(-1, 1, shape).astype(part) + 1j * rng.uniform(-1, 1, shape).astype(part)).astype(dtype)
    if is_numpy_native(dtype):
        return rng.uniform(-1, 1, shape).astype(dtype)
    return rng.uniform(-1, 1, shape).astype(np.float32).astype(dtype)  # bf16 and the f8 types


def _scalar(spec: ScalarSpec, size: int | None, rng: np.random.Generator, where: str):
    dtype = scalar_dtype(spec)
    if dtype.kind == "b":
        return True
    if dtype.kind in "iu":
        if size is None:
            raise InputError(f"{where} ({spec.mlir}) is set from the size: give --sizes, or --arg")
        return int(min(size, np.iinfo(dtype).max))
    return _values(rng, dtype, ()).item()


def make_inputs(sig: FunctionSignature, size: int | None, *, seed: int = 0, fixed: dict | None = None) -> tuple:
    """The arguments of `sig` at size `size` (None: no dynamic size may occur); `fixed` maps a
    scalar's index to its value. InputError naming the argument it cannot make."""
    rng = np.random.default_rng(seed)
    fixed = fixed or {}
    for i in fixed:
        if not 0 <= i < len(sig.inputs) or not isinstance(sig.inputs[i], ScalarSpec):
            raise InputError(
                f"--arg {i}=...: @{sig.name} has no scalar argument {i} "
                f"(its arguments: {', '.join(s.mlir for s in sig.inputs) or 'none'})"
            )
    args = []
    for i, spec in enumerate(sig.inputs):
        where = f"@{sig.name} argument {i}"
        if isinstance(spec, UnsupportedSpec):
            raise InputError(f"{where} has type {spec.mlir}, which JitModule cannot pass: {spec.reason}")
        if isinstance(spec, ScalarSpec):
            args.append(fixed[i] if i in fixed else _scalar(spec, size, rng, where))
            continue
        if spec.shape is None:
            raise InputError(
                f"{where} is {spec.mlir}, whose rank the signature does not say; memref-bench needs ranked memrefs"
            )
        shape = spec.shape
        if DYNAMIC in shape:
            if size is None:
                raise InputError(f"{where} ({spec.mlir}) has dynamic sizes: give --sizes")
            shape = tuple(size if d is DYNAMIC else d for d in shape)
        dtype = scalar_dtype(spec)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > MAX_ARGUMENT_BYTES:
            raise InputError(
                f"{where} ({spec.mlir}) would be {shape}, {nbytes / 2**30:.1f} GiB, at size {size}: "
                f"over memref-bench's {MAX_ARGUMENT_BYTES >> 30} GiB per argument"
            )
        args.append(_values(rng, dtype, shape))
    return tuple(args)
