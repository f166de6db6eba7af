#!/usr/bin/env python3
"""Whether the README's counts (its table's "without Debian's LLVM" column) are what the readme
route's two commands just ended with: `python3 .ci/readme_counts.py README.md OUTPUT`.

It prints both, and which differ. It does not fail the route: the counts hold on the machine CI
runs on (Debian's LLVM hidden, gdb, CMake and a C compiler present); a container without gdb or
CMake skips the tests that need them, and says so in pytest's summary.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def readme_counts(readme: str) -> dict:
    """Command name -> the counts the README states for a machine without Debian's LLVM."""
    counts = {}
    for command in ("lit", "pytest"):
        row = re.search(rf"^\| command \d \({command}\) \| (.+?) \|", readme, re.M)
        if row:
            counts[command] = ", ".join(re.findall(r"`([^`]+)`", row.group(1)))
    return counts


def run_counts(output: str) -> dict:
    """Command name -> the counts in the output of the README's commands."""
    counts = {}
    words = ("Total Discovered Tests", "Unsupported", "Passed")
    lit = [re.search(rf"^\s*{word}\s*:\s*(\d+)", output, re.M) for word in words]
    if all(lit):
        counts["lit"] = ", ".join(f"{word}: {found.group(1)}" for word, found in zip(words, lit))
    # pytest's last line: "==== 1 failed, 1454 passed, 40 skipped in 432.65s (0:07:12) ====" (no
    # "=" under -q)
    summaries = re.findall(r"^=*\s*(\d+ \w+(?:, \d+ \w+)*) in [\d.]+s\b", output, re.M)
    if summaries:
        counts["pytest"] = summaries[-1].strip()
    return counts


def main() -> int:
    readme, output = (Path(a).read_text(errors="replace") for a in sys.argv[1:3])
    stated, ended = readme_counts(readme), run_counts(output)
    for command in ("lit", "pytest"):
        said, got = stated.get(command, "(no counts in the README)"), ended.get(command)
        if got is None:  # nothing to compare: the table may well be right
            print(f"README counts, {command}: no summary in the output (the README says {said})")
            continue
        verdict = "as the README says" if said == got else f"the README says {said}: update its table"
        print(f"README counts, {command}: {got} ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
