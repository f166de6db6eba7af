"""What a test prints: one stream (stderr), flushed at once, so the output keeps the order of events."""

from __future__ import annotations

import sys


def log(*args: object) -> None:
    """Prints `args` to stderr and flushes, so that the output keeps the order of events."""
    print(*args, file=sys.stderr, flush=True)
