"""Pass pipelines as text: `builtin.module(a,b{x=1,2},c(d))` and its top-level passes."""

from __future__ import annotations

HEAD, TAIL = "builtin.module(", ")"


def top_level_passes(pipeline: str) -> list[str] | None:
    """The passes of `builtin.module(a,b{x=1,2},c(d))` as written (`a`, `b{x=1,2}`, `c(d)`), or
    None for a pipeline of another shape."""
    text = pipeline.strip()
    if not (text.startswith(HEAD) and text.endswith(TAIL)):
        return None
    passes: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text[len(HEAD) : -len(TAIL)]:
        depth += (ch in "({") - (ch in ")}")
        if depth < 0:
            return None
        if ch == "," and depth == 0:
            passes.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    passes.append("".join(current).strip())
    return None if depth or not all(passes) else passes


def pass_name(step: str) -> str:
    """The name of one pass as written: `b` of `b{x=1}`, `c` of `c(d)`."""
    return step.split("{", 1)[0].split("(", 1)[0].strip()


def module_pipeline(passes: list[str]) -> str:
    """`builtin.module(<passes>)`."""
    return HEAD + ",".join(passes) + TAIL
