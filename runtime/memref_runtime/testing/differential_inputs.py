"""Inputs for differential testing, drawn by Hypothesis from a function's MLIR signature.

One `ArgumentPlan` per parameter says how to draw it: a scalar within bounds, or a memref of
the declared element type and rank whose dynamic sizes come from shared size symbols and
whose layout, for a `strided<...>` memref, is drawn too (axis order, gaps, negative and zero
strides, a margin before the first element). Each drawn memref lives in a flat buffer of its
own, so the same example can be rebuilt over a copy for the reference, saved and replayed.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any, NamedTuple

import numpy as np

from ..element_types import element_type_for_mlir, is_numpy_native
from ..jit.signatures import (
    DYNAMIC,
    FunctionSignature,
    MemRefSpec,
    ScalarSpec,
    UnsupportedSpec,
)

DEFAULT_BOUNDS = (-100, 100)


def hypothesis_modules() -> tuple[Any, Any, Any]:
    """(hypothesis, strategies, extra.numpy), or an ImportError that says how to get them."""
    try:
        import hypothesis
        import hypothesis.extra.numpy as hnp
        import hypothesis.strategies as st
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "memref_runtime.differential draws its inputs with Hypothesis, which is not "
            f"installed ({e}); install it with: pip install hypothesis"
        ) from e
    return hypothesis, st, hnp


class Layout(NamedTuple):
    """Where a memref's elements sit in its flat buffer."""

    shape: tuple
    strides: tuple  # in elements
    offset: int  # of the first element, in elements
    size: int  # of the flat buffer, in elements
    contiguous: bool  # C-contiguous, offset 0 (an identity layout)

    def view(self, flat: np.ndarray) -> np.ndarray:
        """The memref as a view of `flat`."""
        if self.contiguous:
            return flat.reshape(self.shape)
        item = flat.itemsize
        return np.lib.stride_tricks.as_strided(flat[self.offset :], self.shape, [s * item for s in self.strides])

    def describe(self) -> str:
        if self.contiguous:
            return f"shape {self.shape}, C-contiguous"
        return (
            f"shape {self.shape}, element strides {self.strides}, offset {self.offset} "
            f"in a buffer of {self.size} elements"
        )


class ArgumentPlan(NamedTuple):
    """How one parameter is drawn."""

    index: int  # type: ignore[assignment]  # the argument's position (a field named like tuple.index)
    spec: MemRefSpec | ScalarSpec
    dtype: np.dtype
    dims: tuple  # memrefs: per dimension, a static size or a size symbol (str)
    strided: bool  # a layout is drawn (strided<...>); else C-contiguous
    output: bool  # written by the function: no zero strides
    bounds: tuple
    strategy: object  # a Hypothesis strategy given by the caller, or None


def _element_strategy(st, dtype: np.dtype, bounds: tuple):
    """Values of `dtype` within `bounds` (for complex: real and imaginary parts)."""
    lo, hi = bounds
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        low, high = max(int(math.ceil(lo)), int(info.min)), min(int(math.floor(hi)), int(info.max))
        if low > high:
            raise ValueError(f"bounds {bounds}: no {dtype.name} value lies between them")
        return st.integers(low, high)
    if dtype.kind == "c":
        part = _element_strategy(st, np.dtype(np.float32 if dtype.itemsize == 8 else np.float64), bounds)
        return st.builds(complex, part, part)
    if is_numpy_native(dtype):
        top = float(np.finfo(dtype).max)
        return st.floats(max(lo, -top), min(hi, top), width=dtype.itemsize * 8, allow_nan=False, allow_infinity=False)
    # bf16 and the f8 types: float32 values rounded to the type (exact once converted).
    import ml_dtypes

    top = float(ml_dtypes.finfo(dtype).max)
    floats = st.floats(max(lo, -top), min(hi, top), width=32, allow_nan=False, allow_infinity=False)
    return floats.map(lambda x: float(np.array(x, np.float32).astype(dtype).astype(np.float32)))


def scalar_dtype(spec: ScalarSpec | MemRefSpec) -> np.dtype:
    """The NumPy dtype of a scalar or memref element type."""
    return element_type_for_mlir(spec.element if isinstance(spec, MemRefSpec) else spec.mlir).dtype


def make_plans(
    sig: FunctionSignature,
    *,
    shapes: dict,
    tie_dims: bool,
    ranks: dict,
    outputs: Collection[int] | None,
    bounds: tuple | dict | None,
    strategies: dict,
    max_size: int,
) -> list[ArgumentPlan]:
    """The plan of every parameter of `sig`; TypeError/ValueError naming an argument it cannot draw."""
    where = f"check_against(@{sig.name})"
    n = len(sig.inputs)
    for name, keyed in (
        ("shapes", shapes),
        ("ranks", ranks),
        ("strategies", strategies),
        ("bounds", bounds if isinstance(bounds, dict) else {}),
    ):
        for i in keyed:
            if not isinstance(i, int) or not 0 <= i < n:
                raise ValueError(f"{where}: {name} names argument {i!r}; @{sig.name} has arguments 0 to {n - 1}")
    if outputs is None:  # a function without results writes into (some of) its memrefs
        outputs = () if sig.results else [i for i, s in enumerate(sig.inputs) if isinstance(s, MemRefSpec)]
    plans: list[ArgumentPlan] = []
    static_at: dict[int, int] = {}  # dimension -> the first static size there
    for i, spec in enumerate(sig.inputs):
        given_bounds = bounds.get(i) if isinstance(bounds, dict) else bounds
        if isinstance(spec, UnsupportedSpec):
            raise TypeError(f"{where}: argument {i} has type {spec.mlir}, which JitModule cannot pass: {spec.reason}")
        if isinstance(spec, ScalarSpec):
            default = (0, max_size) if spec.mlir == "index" else DEFAULT_BOUNDS
            plans.append(
                ArgumentPlan(
                    i, spec, scalar_dtype(spec), (), False, False, tuple(given_bounds or default), strategies.get(i)
                )
            )
            continue
        shape = spec.shape
        if shape is None:
            if i not in ranks and i not in strategies:
                raise TypeError(
                    f"{where}: argument {i} is {spec.mlir}, whose rank the signature does not "
                    f"say; pass ranks={{{i}: <rank>}} (it is drawn C-contiguous)"
                )
            shape = (DYNAMIC,) * ranks.get(i, 0)
        named = shapes.get(i)
        if named is not None and len(named) != len(shape):
            raise ValueError(
                f"{where}: shapes[{i}] has {len(named)} entries, argument {i} ({spec.mlir}) has rank {len(shape)}"
            )
        dims = []
        for d, size in enumerate(shape):
            if named is not None and named[d] is not None:
                dims.append(named[d])
            elif size is not DYNAMIC:
                dims.append(size)
                static_at.setdefault(d, size)
            else:
                dims.append(f"dim {d}" if tie_dims else f"argument {i} dim {d}")
        plans.append(
            ArgumentPlan(
                i,
                spec,
                scalar_dtype(spec),
                tuple(dims),
                spec.strides is not None,
                i in outputs,
                tuple(given_bounds or DEFAULT_BOUNDS),
                strategies.get(i),
            )
        )
    # Tied by position, a dynamic size meets the static size another argument declares there.
    if tie_dims:
        plans = [
            p._replace(dims=tuple(static_at.get(d, s) if s == f"dim {d}" else s for d, s in enumerate(p.dims)))
            for p in plans
        ]
    return plans


class _LayoutStrategies:
    """The strategies _layout draws from, built once per example strategy."""

    def __init__(self, st):
        self.st = st
        self.kinds = {False: st.sampled_from(("unit", "gap", "zero")), True: st.sampled_from(("unit", "gap"))}
        self.sign = st.sampled_from((1, -1))
        self.small = st.integers(0, 3)


def _layout(draw, strategies: _LayoutStrategies, plan: ArgumentPlan, shape: tuple) -> Layout:
    """A layout for `shape`: C-contiguous, or for a strided memref one drawn with the static
    strides kept (axis order, gaps of 1 or 2, either sign, zero strides for inputs, margins)."""
    count = math.prod(shape)
    if not plan.strided:
        return Layout(shape, (), 0, count, True)
    rank = len(shape)
    assert isinstance(plan.spec, MemRefSpec) and plan.spec.strides is not None  # strided: a memref's layout
    static = plan.spec.strides
    innermost_first = list(reversed(range(rank)))
    if all(s is DYNAMIC for s in static) and rank > 1:
        innermost_first = draw(strategies.st.permutations(innermost_first))
    strides, covered = [0] * rank, 1
    kinds = strategies.kinds[plan.output]  # no zero strides for outputs
    for axis in innermost_first:
        if static[axis] is not DYNAMIC:
            stride = static[axis]
        else:
            kind = draw(kinds)
            sign = draw(strategies.sign)
            stride = {"unit": 1, "gap": 2, "zero": 0}[kind] * sign * covered
        strides[axis] = stride
        covered = max(covered, abs(stride) * max(shape[axis], 1))
    if count == 0:
        low = high = 0
    else:
        low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
        high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
    margin = draw(strategies.small)
    offset = margin - low
    # Room after the view for a kernel that misreads it as contiguous from its first element.
    size = max(offset + high + 1 + draw(strategies.small), offset + count)
    return Layout(shape, tuple(strides), offset, size, False)


def example_strategy(plans: list[ArgumentPlan], min_size: int, max_size: int) -> Any:
    """A Hypothesis strategy of whole examples: per argument, (layout, flat buffer) or a scalar."""
    _, st, hnp = hypothesis_modules()
    symbols = sorted({s for p in plans for s in p.dims if isinstance(s, str)})

    # Sizes shrink towards the smallest non-empty size; the empty one is drawn about one time
    # in 2 * max_size per symbol, as an empty array seldom shows anything but stays covered.
    nonempty = list(range(max(min_size, 1), max_size + 1))
    size_strategy = (
        st.sampled_from(nonempty * 2 + [0]) if min_size == 0 and nonempty else st.integers(min_size, max_size)
    )

    # Built once: a strategy made inside a draw is validated and analysed again at every example.
    element_strategies = [_element_strategy(st, p.dtype, p.bounds) if p.strategy is None else None for p in plans]
    layout_strategies = _LayoutStrategies(st)

    @st.composite
    def examples(draw):
        sizes = {s: draw(size_strategy, label=s) for s in symbols}
        drawn = []
        for plan, elements in zip(plans, element_strategies):
            if plan.strategy is not None:
                value = draw(plan.strategy)
                if isinstance(plan.spec, MemRefSpec):
                    value = np.asarray(value)
                    flat = np.ascontiguousarray(value).reshape(-1)
                    drawn.append((Layout(value.shape, (), 0, value.size, True), flat))
                else:
                    drawn.append(value)
                continue
            if isinstance(plan.spec, ScalarSpec):
                drawn.append(plan.dtype.type(draw(elements)))
                continue
            shape = tuple(sizes[d] if isinstance(d, str) else d for d in plan.dims)
            layout = _layout(draw, layout_strategies, plan, shape)
            small_float = not is_numpy_native(plan.dtype)
            flat = draw(hnp.arrays(np.float32 if small_float else plan.dtype, layout.size, elements=elements))
            drawn.append((layout, flat.astype(plan.dtype) if small_float else flat))
        return drawn

    return examples()
