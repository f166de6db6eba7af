"""Names for the native frames of JIT-compiled code in a crash report.

LLVM's crash handler prints a frame inside JIT-compiled code as a bare address (`#6
0x00007ff36b9dd000`): no library maps it. The test process wrote down where each JIT-compiled
function lies (jit_symbols.py, a map file of `START SIZE NAME` lines); here each frame whose
address falls inside one gets the function it belongs to and the offset into it:

    #6 0x00007ff36b9dd000 @helper + 0x0 (JIT)
    #7 0x00007ff36b9dd01d @kernel + 0x1d (JIT)
    #8 0x00007ff36b9dd047 _mlir_ciface_kernel + 0x27 (JIT: the C interface of @kernel)

Read by process/failure_report.py (lit) and the pytest plugin's isolation; imports nothing.
"""

from __future__ import annotations

import bisect
import re

_FRAME = re.compile(r"^(?P<head>\s*#\d+ 0x(?P<address>[0-9a-fA-F]+))(?P<rest>[^\n]*)$", re.MULTILINE)

# Symbols the JIT makes around an MLIR function @f, longest prefix first.
_WRAPPERS = (
    ("_mlir__mlir_ciface_", "the ExecutionEngine's packed wrapper of @{}'s C interface"),
    ("_mlir_ciface_", "the C interface of @{}"),
    ("_mlir_", "the ExecutionEngine's packed wrapper of @{}"),
)


class JitFunctions:
    """The JIT-compiled functions of one process: address -> (name, offset)."""

    def __init__(self, functions: list[tuple[int, int, str]]):
        # Where an address was reused (an engine freed, another linked there), the later line
        # wins: newest first, a function that overlaps one already taken is dropped.
        self.starts: list[int] = []
        taken: dict[int, tuple[int, str]] = {}
        self.empty: dict[int, list[str]] = {}  # functions LLVM compiled to nothing, by address
        for start, size, name in reversed(functions):
            if size == 0:
                self.empty.setdefault(start, []).append(name)
                continue
            i = bisect.bisect_right(self.starts, start)
            if i and self.starts[i - 1] + taken[self.starts[i - 1]][0] > start:
                continue
            if i < len(self.starts) and self.starts[i] < start + size:
                continue
            self.starts.insert(i, start)
            taken[start] = (size, name)
        self.spans = [(s, *taken[s]) for s in self.starts]

    def __len__(self) -> int:
        return len(self.spans) + len(self.empty)

    def containing(self, address: int) -> tuple[str, int] | None:
        """(name, offset) of the function `address` lies in, or whose end it is (a return
        address after a call that ends the function); None outside JIT-compiled code."""
        for probe in (address, address - 1):
            i = bisect.bisect_right(self.starts, probe) - 1
            if i >= 0:
                start, size, name = self.spans[i]
                if probe < start + size:
                    return name, address - start
        return None

    def empty_at(self, address: int) -> str | None:
        """The MLIR function compiled to nothing at `address` (its own name before its wrappers')."""
        names = self.empty.get(address)
        return min(names, key=lambda n: (n.startswith("_mlir_"), n)) if names else None


def read_map(path: str) -> JitFunctions:
    """The functions of map file `path` (perf's format: hexadecimal `START SIZE NAME`); none if
    there is no such file. Lines that do not parse are skipped."""
    functions = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                fields = line.split(None, 2)
                try:
                    functions.append((int(fields[0], 16), int(fields[1], 16), fields[2].strip()))
                except (IndexError, ValueError):
                    continue
    except OSError:
        pass
    return JitFunctions(functions)


def describe(name: str, offset: int) -> str:
    """`@kernel + 0x1d (JIT)`; a wrapper the JIT made around @kernel says so."""
    for prefix, what in _WRAPPERS:
        if name.startswith(prefix) and len(name) > len(prefix):
            return f"{name} + {offset:#x} (JIT: {what.format(name[len(prefix) :])})"
    return f"@{name} + {offset:#x} (JIT)"


def name_frames(text: str, functions: JitFunctions) -> str:
    """`text` with each native frame inside JIT-compiled code followed by the function's name and
    the offset into it; other lines unchanged."""
    if not functions:
        return text

    def named(match: re.Match) -> str:
        address = int(match.group("address"), 16)
        found = functions.containing(address)
        if found is not None:
            return f"{match.group('head')} {describe(*found)}{match.group('rest')}"
        empty = functions.empty_at(address)
        if empty is not None:
            return (
                f"{match.group('head')} @{empty} + 0x0 (JIT: LLVM compiled it to no code at all, as it does a body "
                f"that is undefined behaviour, such as a store to null){match.group('rest')}"
            )
        return match.group(0)

    return _FRAME.sub(named, text)
