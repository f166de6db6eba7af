"""What one check run said about a candidate (Outcome), and how a failure is keyed, so that
"fails the same way" compares keys: the exception's type and its message with what changes from
candidate to candidate masked, or how a child process ended."""

from __future__ import annotations

import re
import tempfile
from typing import NamedTuple


class Outcome(NamedTuple):
    """What one check run said about a candidate."""

    failing: bool
    key: str  # how it failed, normalized ("" when it passed): equal keys mean the same failure
    summary: str  # one line for the report


PASSED = Outcome(False, "", "passes")
_MASKS = (
    (re.compile(re.escape(tempfile.gettempdir()) + r"/[^\s'\"]*"), "<tmp>"),
    (re.compile(r"0x[0-9a-fA-F]+"), "0x?"),
    (re.compile(r"loc\((?:[^()]|\([^()]*\))*\)"), "loc(?)"),
    (re.compile(r"\"[^\"\n]*\":\d+:\d+"), "<location>"),
    (re.compile(r"%[\w.$-]+"), "%?"),
)


def mask_volatile(text: str) -> str:
    """`text` with what changes from candidate to candidate masked: temporary paths, addresses,
    MLIR locations, SSA names."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return text


def first_line(text: str, limit: int = 200) -> str:
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")
    return line if len(line) <= limit else line[: limit - 3] + "..."


def exception_outcome(error: BaseException) -> Outcome:
    """A check that raised `error`: failing, keyed by its type and masked message."""
    kind = type(error)
    name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
    return Outcome(True, f"{name}: {mask_volatile(str(error))}", f"{kind.__name__}: {first_line(str(error))}")


def ended_outcome(ended) -> Outcome:
    """A child that crashed or hung: failing, keyed by how it ended."""
    tail = first_line(ended.output.splitlines()[-1] if ended.output.strip() else "")
    key = "timeout" if ended.how == "timeout" else ended.description
    return Outcome(True, key, ended.description + (f" (last output: {tail})" if tail else ""))
