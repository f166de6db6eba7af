"""check_against: a JIT-compiled function against a NumPy reference, on inputs Hypothesis draws
from the function's MLIR signature.

    jit = JitModule(MLIR)
    def reference(a, b, out):
        out[...] = a + b
    check_against(jit.add, reference, outputs=[2])

The reference may be written in torch or JAX (`reference_framework="torch"` / `"jax"`): it gets
the memref arguments as that framework's arrays (torch shares the memory, JAX, immutable, gets
copies and returns what it would write) and may return any array.

Every example calls the function on drawn arrays and the reference on copies laid out the same
way (same shapes, strides and offsets over a copy of the same buffer); then each result and
each memref argument must agree under `check_close`'s rules. The first disagreement, as
Hypothesis minimised it, raises DifferentialError: the example's shapes, strides, offsets and
dtypes, the differing elements, and a folder with the inputs (`.npy`) and a `replay.py` that
repeats the call, and the memref-reduce command that finds the culprit (reduce_command.py).
The JitModule is compiled once, by the caller: no example re-JITs it.
"""

from __future__ import annotations

import os
import random
import tempfile
import textwrap
from collections import Counter
from typing import NamedTuple

import numpy as np

from ..element_types import is_numpy_native
from ..interop import FRAMEWORKS, as_ndarray, is_array_like, to_framework
from ..jit.signatures import MemRefSpec
from .differential_inputs import (
    ArgumentPlan,
    example_strategy,
    hypothesis_modules,
    make_plans,
    scalar_dtype,
)
from .numerics import compare
from .reduce_command import reduce_commands

__all__ = ["check_against", "DifferentialError", "Summary"]

_SHOWN_VALUES = 24  # an input with at most this many elements is shown in the report


class Summary(NamedTuple):
    """What check_against tried: how many examples, and how many had each kind of memref layout."""

    examples: int
    layouts: dict  # "negative stride", "zero stride", "offset", "gap", "transposed", "empty" -> examples


def _has_gap(shape: tuple, strides: tuple) -> bool:
    """Whether the elements of a view leave holes: its axes, innermost first, are not dense."""
    dense = 1
    for stride, n in sorted((abs(s), n) for s, n in zip(strides, shape) if n > 1 and s != 0):
        if stride != dense:
            return True
        dense *= n
    return False


def _layout_kinds(plans: list[ArgumentPlan], drawn: list) -> set[str]:
    """The kinds of layout among the memrefs of one example."""
    kinds = set()
    for plan, d in zip(plans, drawn):
        if not isinstance(plan.spec, MemRefSpec):
            continue
        layout = d[0]
        if 0 in layout.shape:
            kinds.add("empty")
            continue
        if layout.contiguous:
            continue
        moving = [abs(s) for s, n in zip(layout.strides, layout.shape) if n > 1 and s != 0]
        found = {
            "negative stride": any(s < 0 for s, n in zip(layout.strides, layout.shape) if n > 1),
            "zero stride": any(s == 0 for s, n in zip(layout.strides, layout.shape) if n > 1),
            "offset": layout.offset > 0,
            "transposed": moving != sorted(moving, reverse=True),
            "gap": _has_gap(layout.shape, layout.strides),
        }
        kinds.update(k for k, present in found.items() if present)
    return kinds


class DifferentialError(AssertionError):
    """The function and the reference disagree; `.folder` holds the inputs and replay.py, `.inputs`
    the arguments of the failing call as it got them (arrays laid out as drawn; scalars)."""

    def __init__(self, message: str, folder: str | None, inputs: list | None = None):
        super().__init__(message)
        self.folder, self.inputs = folder, inputs


class _Disagreement(AssertionError):
    """One example's failure, carrying what the report and the reproducer need."""

    def __init__(self, details: list[str], drawn: list, expected_results=None, expected_args=None):
        super().__init__("\n".join(details))
        self.details, self.drawn = details, drawn
        self.expected_results, self.expected_args = expected_results, expected_args


def _build(plans: list[ArgumentPlan], drawn: list) -> list:
    """The call's arguments: views over a private copy of each drawn buffer, scalars as drawn."""
    return [d[0].view(d[1].copy()) if isinstance(p.spec, MemRefSpec) else d for p, d in zip(plans, drawn)]


def _as_results(value, count: int, what: str) -> list:
    if count == 0:
        if value is not None:
            raise TypeError(
                f"{what} returned {type(value).__name__}, but the function has no results; "
                "a reference writes into its array arguments and returns None"
            )
        return []
    if count == 1:
        return [value]
    if not isinstance(value, (tuple, list)) or len(value) != count:
        raise TypeError(f"{what} must return {count} results (a tuple), got {type(value).__name__}")
    return list(value)


def _call_reference(reference, framework: str, plans: list[ArgumentPlan], expected_args: list, count: int) -> list:
    """The reference's results on `expected_args`, in `framework`'s arrays; what it writes into
    its arguments reaches `expected_args` (torch shares their memory or is copied back; a JAX
    reference returns the new values of the outputs after its results)."""
    given, copied = [], []
    for plan, value in zip(plans, expected_args):
        if isinstance(plan.spec, MemRefSpec):
            value, copy = to_framework(value, framework)
            copied.append(copy)
        else:
            copied.append(False)
        given.append(value)
    outputs = [p.index for p in plans if p.output] if framework == "jax" else []
    who = "the reference" if framework == "numpy" else f"the {framework} reference"
    returned = _as_results(
        reference(*given),
        count + len(outputs),
        who
        + (
            f" (JAX arrays are immutable: it returns its {count} results, then the new values of the "
            f"arguments it writes, {outputs})"
            if outputs
            else ""
        ),
    )
    returned = [as_ndarray(r, "the reference's result") if is_array_like(r) else r for r in returned]
    for i, value in zip(outputs, returned[count:]):
        np.copyto(expected_args[i], np.asarray(value, expected_args[i].dtype))
    if framework == "torch":  # torch's copies of negative-stride views, which torch lacks
        for i, (value, copy) in enumerate(zip(given, copied)):
            if copy:
                np.copyto(expected_args[i], as_ndarray(value, f"argument {i}"))
    return returned[:count]


def _differences(sig, plans, args, expected_args, results, expected_results, rtol, atol) -> list[str]:
    """check_close's message for every result and memref argument that differs."""
    found = []
    for i, (spec, got, want) in enumerate(zip(sig.results, results, expected_results)):
        dtype = scalar_dtype(spec)
        want = np.asarray(want)
        if want.dtype != dtype:  # the reference may compute in another precision: compare in the result's
            want = want.astype(dtype)
        found.append(
            compare(
                f"result {i} ({spec.mlir})",
                np.asarray(got, dtype) if np.isscalar(got) else got,
                want,
                rtol=rtol,
                atol=atol,
            )
        )
    for plan, got, want in zip(plans, args, expected_args):
        if isinstance(plan.spec, MemRefSpec):
            found.append(
                compare(f"argument {plan.index} ({plan.spec.mlir}) after the call", got, want, rtol=rtol, atol=atol)
            )
    return [f for f in found if f]


def _describe(plans: list[ArgumentPlan], drawn: list) -> list[str]:
    lines = []
    for plan, d in zip(plans, drawn):
        if isinstance(plan.spec, MemRefSpec):
            layout, flat = d
            view = layout.view(flat)
            values = (
                ""
                if view.size > _SHOWN_VALUES
                else " = " + np.array2string(view, separator=", ", threshold=_SHOWN_VALUES).replace("\n", "")
            )
            lines.append(f"  argument {plan.index} ({plan.spec.mlir}): {plan.dtype.name}, {layout.describe()}{values}")
        else:
            lines.append(f"  argument {plan.index} ({plan.spec.mlir}): {d!r}")
    return lines


def _function_parts(function):
    """(signature, JitModule or None, name) of a JitFunction or of the plain function it becomes."""
    sig = getattr(function, "signature", None)
    if sig is None or not callable(function):
        raise TypeError(
            f"check_against: expected a function of a JitModule (jit.<name>), got {type(function).__name__}"
        )
    module = getattr(function, "owner", None)
    return sig, module, sig.name


def check_against(
    function,
    reference,
    *,
    max_examples: int = 100,
    min_size: int = 0,
    max_size: int = 5,
    shapes: dict | None = None,
    tie_dims: bool = True,
    ranks: dict | None = None,
    outputs=None,
    bounds=None,
    strategies: dict | None = None,
    rtol: float | None = None,
    atol: float | None = None,
    seed: int | None = 0,
    save_to: str | None = None,
    reference_framework: str = "numpy",
) -> Summary:
    """Checks `function` (`jit.<name>`) against `reference` on up to `max_examples` drawn inputs.

    Dynamic sizes are drawn in [min_size, max_size]; by default the same dimension position
    has the same size in every argument (`tie_dims=False`: all independent), and
    `shapes={arg: ("m", "k")}` names sizes (the same name, the same size; an int fixes one).
    `strided<...>` memrefs get drawn layouts; zero strides only for arguments not in
    `outputs` (default: every memref of a function without results, none otherwise).
    `bounds=(lo, hi)` or `{arg: (lo, hi)}` bounds the values (default (-100, 100); index
    scalars (0, max_size)); `strategies={arg: strategy}` draws an argument your way;
    `ranks={arg: n}` gives an unranked memref's rank. `seed=None` draws a new seed each run.
    `reference_framework="torch"` or `"jax"` hands the reference torch tensors (over the same
    memory) or JAX arrays (copies; the reference returns its results, then the new values of
    the `outputs` in order); it may return any array.
    Raises DifferentialError for the minimised failing example, with its inputs saved under
    `save_to` (default: a new temporary folder) next to a replay.py; returns a Summary (how
    many examples ran, how many had negative or zero strides, offsets, empty arrays...).
    """
    hypothesis = hypothesis_modules()[0]
    sig, module, name = _function_parts(function)
    _check_arguments(name, reference, reference_framework, min_size, max_size)
    plans = make_plans(
        sig,
        shapes=shapes or {},
        tie_dims=tie_dims,
        ranks=ranks or {},
        outputs=outputs,
        bounds=bounds,
        strategies=strategies or {},
        max_size=max_size,
    )
    seed = random.getrandbits(32) if seed is None else seed

    seen: Counter[str] = Counter()

    def one_example(drawn):
        seen["examples"] += 1
        seen.update(_layout_kinds(plans, drawn))
        _compare_once(function, reference, reference_framework, sig, plans, name, drawn, rtol, atol)

    test = hypothesis.given(example_strategy(plans, min_size, max_size))(one_example)
    try:
        _quiet_settings(hypothesis, max_examples)(hypothesis.seed(seed)(test))()
    except _Disagreement as failure:
        folder = _save(failure, plans, sig, module, save_to, rtol, atol)
        inputs = _build(plans, failure.drawn)
        reproducer = (
            [
                f"  inputs and replay script: {folder}; run: python {os.path.join(folder, 'replay.py')}",
                *reduce_commands(folder, name, module, inputs, reference, rtol, atol),
            ]
            if folder
            else ["  (no reproducer: the JitModule of the function is unknown)"]
        )
        heading = (
            f"check_against(@{name}): the function and the reference differ on this example "
            f"(minimised by Hypothesis; seed {seed}, up to {max_examples} examples)"
        )
        lines = [heading, *_describe(plans, failure.drawn), *(textwrap.indent(d, "  ") for d in failure.details)]
        raise DifferentialError("\n".join(lines + reproducer), folder, inputs) from failure.__cause__
    examples = seen.pop("examples", 0)
    return Summary(examples, dict(seen))


def _compare_once(function, reference, framework: str, sig, plans, name: str, drawn, rtol, atol) -> None:
    """Runs `function` and `reference` on one drawn example; _Disagreement if they differ or raise."""
    args, expected_args = _build(plans, drawn), _build(plans, drawn)
    try:
        results = _as_results(function(*args), len(sig.results), f"@{name}")
    except Exception as e:  # noqa: BLE001 - reported with the example that caused it
        raise _Disagreement([f"the function raised {type(e).__name__}: {e}"], drawn) from e
    try:
        expected_results = _call_reference(reference, framework, plans, expected_args, len(sig.results))
    except Exception as e:  # noqa: BLE001
        raise _Disagreement([f"the reference raised {type(e).__name__}: {e}"], drawn) from e
    details = _differences(sig, plans, args, expected_args, results, expected_results, rtol, atol)
    if details:
        raise _Disagreement(details, drawn, expected_results, expected_args)


def _quiet_settings(hypothesis, max_examples: int):
    """Hypothesis settings for a check that reports its own failure: no database, no deadline."""
    return hypothesis.settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=hypothesis.Verbosity.quiet,
        suppress_health_check=list(hypothesis.HealthCheck),
    )


def _check_arguments(name: str, reference, reference_framework: str, min_size: int, max_size: int) -> None:
    """check_against's arguments that are wrong before anything runs, named."""
    if not callable(reference):
        raise TypeError(f"check_against(@{name}): reference must be callable, got {type(reference).__name__}")
    if reference_framework not in FRAMEWORKS:
        raise ValueError(
            f"check_against(@{name}): reference_framework must be one of {', '.join(FRAMEWORKS)}, "
            f"got {reference_framework!r}"
        )
    if not 0 <= min_size <= max_size:
        raise ValueError(f"check_against(@{name}): expected 0 <= min_size <= max_size, got {min_size}, {max_size}")


# --- the reproducer -----------------------------------------------------------------------


def _save_array(folder: str, name: str, array: np.ndarray) -> str:
    """Saves `array` as `name`.npy (bf16 and f8 as unsigned integers of their size); returns the
    expression that loads it back in replay.py."""
    array = np.ascontiguousarray(array)
    if is_numpy_native(array.dtype):
        np.save(os.path.join(folder, name + ".npy"), array)
        return f'load("{name}")'
    np.save(os.path.join(folder, name + ".npy"), array.view(f"u{array.dtype.itemsize}"))
    return f'load("{name}", "{array.dtype.name}")'


def _scalar_literal(value) -> str:
    value = np.asarray(value)
    return f"np.{value.dtype.name}({value.item()!r})"


REPLAY_HEADER = '''\
"""Replays the example on which check_against found @{name} and its reference disagree.

Run it from anywhere: python {folder}/replay.py
It calls @{name} on the saved inputs, laid out as they were, and compares what it computes
with what the reference computed (expected_*.npy), as check_against did.
"""
import os

import numpy as np

from memref_runtime import JitModule
from memref_runtime.testing import check_close

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name, dtype=None):
    array = np.load(os.path.join(HERE, name + ".npy"))
    if dtype is not None:  # bf16 and the f8 types are saved as unsigned integers of their size
        import ml_dtypes
        array = array.view(getattr(ml_dtypes, dtype))
    return array


def strided(buffer, shape, strides, offset):
    """The view of `buffer` (1-d) of `shape` and element `strides`, first element at `offset`."""
    return np.lib.stride_tricks.as_strided(buffer[offset:], shape, [s * buffer.itemsize for s in strides])


with open(os.path.join(HERE, "module.mlir")) as f:
    jit = JitModule(f.read(), pipeline={pipeline!r}, opt_level={opt_level!r},
                    shared_libs={shared_libs!r}, runner_utils=False)
args = [
{args}
]
'''


def _save(failure: _Disagreement, plans, sig, module, save_to, rtol, atol) -> str | None:
    """Writes the example's inputs, the reference's outputs, module.mlir and replay.py; returns the folder."""
    if module is None:
        return None
    if save_to:
        os.makedirs(save_to, exist_ok=True)
        folder = save_to
    else:
        folder = tempfile.mkdtemp(prefix=f"memref_runtime_differential_{sig.name}_")
    with open(os.path.join(folder, "module.mlir"), "w") as f:
        f.write(module.source)
    arg_lines = []
    for plan, d in zip(plans, failure.drawn):
        i = plan.index
        if not isinstance(plan.spec, MemRefSpec):
            arg_lines.append(f"    {_scalar_literal(d)},  # {plan.spec.mlir}")
            continue
        layout, flat = d
        received = _save_array(folder, f"arg{i}", layout.view(flat))  # what the function received
        if layout.contiguous:
            arg_lines.append(f"    {received},  # {plan.spec.mlir}")
        else:
            buffer = _save_array(folder, f"arg{i}_buffer", flat)
            arg_lines.append(
                f"    strided({buffer}, {layout.shape}, {layout.strides}, {layout.offset}),  # {plan.spec.mlir}"
            )
    tolerance = "".join(f", {k}={v!r}" for k, v in (("rtol", rtol), ("atol", atol)) if v is not None)
    checks = []
    if failure.expected_results is not None:
        checks.append(f"results = jit.call({sig.name!r}, *args)")
        if len(sig.results) == 1:
            checks.append("results = [results]")
        for i, value in enumerate(failure.expected_results):
            dtype = scalar_dtype(sig.results[i])
            loaded = _save_array(folder, f"expected_result{i}", np.asarray(value).astype(dtype))
            checks.append(
                f"check_close('result {i}', np.asarray(results[{i}], np.{dtype.name})"
                f" if np.isscalar(results[{i}]) else results[{i}], {loaded}{tolerance})"
                if is_numpy_native(dtype)
                else f"check_close('result {i}', results[{i}], {loaded}{tolerance})"
            )
        for plan, value in zip(plans, failure.expected_args):
            if isinstance(plan.spec, MemRefSpec):
                loaded = _save_array(folder, f"expected_arg{plan.index}", value)
                checks.append(
                    f"check_close('argument {plan.index} after the call', args[{plan.index}], {loaded}{tolerance})"
                )
    else:
        checks.append(f"print(jit.call({sig.name!r}, *args))  # the failure was an exception: {failure.details[0]}")
    script = (
        REPLAY_HEADER.format(
            name=sig.name,
            folder=folder,
            pipeline=module.pipeline,
            opt_level=module.opt_level,
            shared_libs=list(module.shared_libs),
            args="\n".join(arg_lines),
        )
        + "\n".join(checks)
        + "\n"
    )
    with open(os.path.join(folder, "replay.py"), "w") as f:
        f.write(script)
    return folder
