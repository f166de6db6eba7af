"""`Against`: a check that calls one function of the candidate on given inputs and compares what
it computes with a reference, as check_against does, on inputs that stay fixed.

Fixed inputs make "the same mismatch" exact: the outputs that were wrong are wrong with the
same values (bit for bit). A reduction keeps only those outputs (the others are no longer
compared, so the code computing them can go), and calls on a few probes: the failing inputs and
two more of the same shapes, whose outputs must not change either, so that a value computed from
the inputs cannot be replaced by the constant it happens to be on one input.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .outcome import Outcome, exception_outcome, first_line

EXTRA_PROBES = 2


@dataclass
class Against:
    """Calls `function` of the candidate on `inputs` and compares its results and memref arguments
    after the call with what `reference` computes on copies of them (check_against's convention:
    the reference writes into its array arguments and returns the function's results).

    Without `inputs`, check_against draws them from the signature (Hypothesis, `seed` 0) and its
    minimised failing example is used. `rtol`/`atol` as check_close takes them."""

    function: str
    reference: Callable
    inputs: Sequence | None = None
    rtol: float | None = None
    atol: float | None = None
    runner: TypedCall = field(init=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.function, str) or not callable(self.reference):
            raise TypeError(
                f"Against(function, reference): expected a function name and a callable, got "
                f"{type(self.function).__name__} and {type(self.reference).__name__}"
            )
        self.runner = TypedCall(self)


def copy_args(args: Sequence) -> list:
    """Fresh copies of the arrays among `args` (laid out alike), scalars as they are."""
    import numpy as np

    return [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]


def _digest(value) -> str:
    import numpy as np

    a = np.ascontiguousarray(np.asarray(value))
    return hashlib.sha1(f"{a.dtype.str}{a.shape}".encode() + a.tobytes()).hexdigest()[:16]


class TypedCall:
    """The state of an Against check: its probes, their expected outputs, the outputs compared."""

    def __init__(self, against: Against):
        self.against = against
        self.signature: Any = None  # the FunctionSignature of the function, read from the first module
        self.probes: list[list] = []
        self.expected: list[dict] = []
        self.tracked: frozenset | None = None  # the output labels compared; None: all

    # --- in this process --------------------------------------------------------------------

    def set_signature(self, signature) -> None:
        """Takes the function's signature; the inputs given must fit its number of parameters."""
        import numpy as np

        from ..jit.signatures import MemRefSpec

        self.signature = signature
        given = self.against.inputs
        if given is not None and len(given) != len(signature.inputs):
            raise ValueError(
                f"Against({self.against.function!r}).inputs: {signature} takes "
                f"{len(signature.inputs)} arguments, got {len(given)}"
            )
        if given is not None:  # a 0-d array for a scalar parameter (as .npz files keep them): the scalar
            self.against.inputs = [
                a[()] if isinstance(a, np.ndarray) and a.ndim == 0 and not isinstance(spec, MemRefSpec) else a
                for a, spec in zip(given, signature.inputs)
            ]

    def memref_positions(self) -> list[int]:
        from ..jit.signatures import MemRefSpec

        return [i for i, spec in enumerate(self.signature.inputs) if isinstance(spec, MemRefSpec)]

    def expected_of(self, args: Sequence) -> dict:
        """What the reference computes on copies of `args`: `result i` and `argument i` (memrefs after the call)."""
        import numpy as np

        copies = copy_args(args)
        returned = self.against.reference(*copies)
        count = len(self.signature.results)
        results = [] if count == 0 else [returned] if count == 1 else list(returned)
        if len(results) != count:
            raise TypeError(f"the reference returned {len(results)} results, @{self.against.function} has {count}")
        out = {f"result {i}": np.asarray(r) for i, r in enumerate(results)}
        out.update({f"argument {i}": copies[i] for i in self.memref_positions()})
        return out

    def set_probes(self, probes: list[list]) -> None:
        """Calls the reference on each probe once: what the candidates are compared with."""
        self.probes = [list(p) for p in probes]
        self.expected = [self.expected_of(p) for p in self.probes]

    # --- in the child that runs the candidate ------------------------------------------------

    def observe(self, jit, args: Sequence) -> dict:
        """The function's outputs on copies of `args`, labelled as `expected_of` labels them."""
        import numpy as np

        copies = copy_args(args)
        returned = jit.call(self.against.function, *copies)
        count = len(self.signature.results)
        results = [] if count == 0 else [returned] if count == 1 else list(returned)
        out = {f"result {i}": np.asarray(r) for i, r in enumerate(results)}
        out.update({f"argument {i}": copies[i] for i in self.memref_positions()})
        return out

    def mismatches(self, got: dict, expected: dict) -> dict:
        """label -> check_close's report, for the compared outputs that differ."""
        import numpy as np

        from ..testing.numerics import compare

        found = {}
        for label, want in expected.items():
            if self.tracked is not None and label not in self.tracked:
                continue
            have = got[label]
            if label.startswith("result") and want.dtype != np.asarray(have).dtype:
                want = want.astype(np.asarray(have).dtype)  # a reference may compute in another precision
            report = compare(
                f"{label} of @{self.against.function}", have, want, rtol=self.against.rtol, atol=self.against.atol
            )
            if report:
                found[label] = report
        return found

    def outcome(self, jit) -> Outcome:
        """Failing when a compared output differs on a probe; the key holds which outputs differ on
        each probe and the values of every compared output."""
        key: list = []
        reports: list[str] = []
        for probe, expected in zip(self.probes, self.expected):
            got = self.observe(jit, probe)
            wrong = self.mismatches(got, expected)
            reports.extend(wrong.values())
            labels = sorted(expected if self.tracked is None else self.tracked)
            key.append((sorted(wrong), [(label, _digest(got[label])) for label in labels]))
        if not reports:
            return Outcome(False, "", "passes")
        return Outcome(True, repr(key), first_line(reports[0], 300))

    def failing_labels(self, jit, args: Sequence) -> list[str] | Outcome:
        """The outputs that differ on `args` (the reference called here), or the Outcome of an exception."""
        try:
            return sorted(self.mismatches(self.observe(jit, args), self.expected_of(args)))
        except Exception as e:  # noqa: BLE001
            return exception_outcome(e)


def draw_failing_inputs(
    source: str, lowered: str | None, opt_level: int, against: Against, pipeline: str | None = None
) -> list | Outcome:
    """check_against's minimised failing example for `against`'s function on `source` (lowered by
    `pipeline`, or given `lowered`), to run in a child; the Outcome when it found none."""
    from ..jit.module import JitModule
    from ..testing.differential import DifferentialError, check_against

    try:
        jit = JitModule(source, pipeline=pipeline, opt_level=opt_level, lowered=lowered)
        check_against(getattr(jit, against.function), against.reference, rtol=against.rtol, atol=against.atol)
    except DifferentialError as e:
        if e.inputs is None or "the function raised" in str(e):
            return exception_outcome(e)
        return copy_args(e.inputs)
    except Exception as e:  # noqa: BLE001
        return exception_outcome(e)
    return Outcome(False, "", "check_against found no failing example")
