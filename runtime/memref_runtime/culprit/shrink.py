"""Smaller inputs for a typed call that still fails the same way (the same outputs differ from the
reference), in Hypothesis's order: sizes first, then values.

Dynamic sizes of equal length are cut together (a kernel that loops over one array's length
usually indexes the others with it): to each single element, else to the first half, and so on.
Then each element of a small array goes to 0, then a float to its integer part. Every try
calls the module (compiled once, in this process) in a forked child, so an input that makes it
read out of bounds and crash is just not taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..jit.signatures import DYNAMIC, MemRefSpec
from .isolation import run_forked

MAX_ELEMENTS = 64  # arrays with more elements keep their values


def _dynamic_axes(signature, args: Sequence) -> dict[int, list[tuple[int, int]]]:
    """size -> the (argument, axis) pairs of dynamic dimensions that have it."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for i, spec in enumerate(signature.inputs):
        if isinstance(spec, MemRefSpec) and spec.shape is not None:
            for axis, size in enumerate(spec.shape):
                if size is DYNAMIC and args[i].shape[axis] > 1:
                    groups.setdefault(args[i].shape[axis], []).append((i, axis))
    return groups


def _cut(args: Sequence, members: list[tuple[int, int]], start: int, size: int) -> list:
    import numpy as np

    out = list(args)
    for i, axis in members:
        out[i] = np.ascontiguousarray(np.take(out[i], np.arange(start, start + size), axis=axis))
    return out


def _windows(n: int) -> list[tuple[int, int]]:
    """(start, size) to try instead of n elements, smallest first: each single element, then the
    first half, quarter... up to n - 1 (sizes only grow, so the first that fails is kept)."""
    sizes, size = [], n // 2
    while size > 1:
        sizes.append(size)
        size //= 2
    sizes = sorted(set(sizes)) + ([n - 1] if n - 1 > max(sizes + [1]) else [])
    return [(start, 1) for start in range(n)] + [(0, size) for size in sizes]


class Shrinker:
    """Shrinks the inputs of `runner`'s typed call on a compiled `jit`, keeping `labels` failing."""

    def __init__(self, runner, jit, labels: list[str], timeout: float):
        self.runner, self.jit, self.labels, self.timeout = runner, jit, labels, timeout
        self.tries = 0

    def still_fails(self, args: list) -> bool:
        self.tries += 1
        ended = run_forked(lambda: self.runner.failing_labels(self.jit, args), self.timeout)
        return ended.how == "ok" and ended.value == self.labels

    def sizes(self, args: list) -> list:
        for n, members in sorted(_dynamic_axes(self.runner.signature, args).items(), reverse=True):
            for start, size in _windows(n):
                candidate = _cut(args, members, start, size)
                if self.still_fails(candidate):
                    args = candidate
                    break
        return args

    def values(self, args: list) -> list:
        import numpy as np

        for i in self.runner.memref_positions():
            if args[i].size > MAX_ELEMENTS or args[i].dtype.kind not in "biufc":
                continue
            for j in range(args[i].size):
                flat = args[i].reshape(-1)
                simpler = [0] + ([np.trunc(flat[j])] if flat[j].dtype.kind == "f" and np.isfinite(flat[j]) else [])
                for value in simpler:
                    if flat[j] == value:
                        break
                    candidate = list(args)
                    candidate[i] = args[i].copy()
                    candidate[i].reshape(-1)[j] = value
                    if self.still_fails(candidate):
                        args = candidate
                        break
        return args


def shrink_inputs(runner, jit, args: list, labels: list[str], timeout: float) -> tuple[list, int]:
    """(smaller args on which `labels` still differ, the number of tries)."""
    shrinker = Shrinker(runner, jit, labels, timeout)
    args = shrinker.values(shrinker.sizes(list(args)))
    return args, shrinker.tries


def random_like(args: Sequence, seed: int) -> list:
    """Arguments of the same shapes and dtypes with other small values (scalars kept: they may be
    sizes or indices)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    out = []
    for a in args:
        if not isinstance(a, np.ndarray) or a.dtype.kind not in "biufc":
            out.append(a)
        elif a.dtype.kind == "b":
            out.append(rng.integers(0, 2, a.shape).astype(bool))
        else:
            low = 0 if a.dtype.kind == "u" else -9
            values = rng.integers(low, 10, a.shape)
            if a.dtype.kind == "c":
                values = values + 1j * rng.integers(-9, 10, a.shape)
            out.append(values.astype(a.dtype))
    return out
