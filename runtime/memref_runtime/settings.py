"""Suite-wide defaults that lit passes to every test process through the environment.

`lit -D opt_level=N` and `lit -D runtime_verification=1` set these variables (lit.cfg.py owns
the spelling); every JitModule and every lowering that `memref_runtime.testing` makes reads its
default from here, so one switch changes the whole suite. An explicit argument always wins.
"""

from __future__ import annotations

import os

from . import environment

OPT_LEVEL_ENV = environment.OPT_LEVEL
RUNTIME_VERIFICATION_ENV = environment.RUNTIME_VERIFICATION

OPT_LEVELS = (0, 1, 2, 3)
DEFAULT_OPT_LEVEL = 2  # the ExecutionEngine's own default
_TRUE, _FALSE = ("1", "true", "on", "yes"), ("", "0", "false", "off", "no")


def parse_opt_level(text: str, origin: str = OPT_LEVEL_ENV) -> int:
    """`text` as an opt level 0-3; ValueError naming `origin` otherwise."""
    try:
        level = int(text)
    except ValueError:
        level = None
    if level not in OPT_LEVELS:
        raise ValueError(f"{origin}: expected an opt level 0, 1, 2 or 3, got {text!r}")
    return level


def seconds_or_none(text: str) -> float | None:
    """`text` as a number of seconds >= 0, or None if it is not one (NaN and negatives included)."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value >= 0 else None


def parse_flag(text: str, origin: str) -> bool:
    """`text` as a boolean switch (1/0, true/false, on/off, yes/no); ValueError otherwise."""
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{origin}: expected 1 or 0 (true/false, on/off), got {text!r}")


def default_opt_level() -> int:
    """The opt level a JitModule or engine gets when none is given (`lit -D opt_level=N`)."""
    text = os.environ.get(OPT_LEVEL_ENV)
    return DEFAULT_OPT_LEVEL if text in (None, "") else parse_opt_level(text)


def resolve_opt_level(opt_level: int | None) -> int:
    """`opt_level` (0-3), or the default for None; ValueError for anything else."""
    if opt_level is None:
        return default_opt_level()
    if isinstance(opt_level, bool) or opt_level not in OPT_LEVELS:
        raise ValueError(
            f"opt_level: expected 0, 1, 2, 3 or None (the default, {default_opt_level()} here), got {opt_level!r}"
        )
    return int(opt_level)


def default_runtime_verification() -> bool:
    """Whether lowerings add MLIR's runtime verification when not told (`lit -D runtime_verification=1`)."""
    return parse_flag(os.environ.get(RUNTIME_VERIFICATION_ENV, ""), RUNTIME_VERIFICATION_ENV)
