"""A mkdocs hook: `<!-- ci-routes -->` in a page becomes the table of CI routes, read from what
`.ci/run --list` prints, so the page, .ci/run and the workflow's matrix share one list."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

MARKER = "<!-- ci-routes -->"
ROOT = Path(__file__).resolve().parents[2]


def routes_table() -> str:
    """`.ci/run --list` as a Markdown table: one row per route (its lane, what it shows)."""
    listed = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run"), "--list"], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    rows = [line.split(None, 2) for line in listed.splitlines() if line.strip()]
    if not rows or any(len(row) != 3 for row in rows):
        raise ValueError(f".ci/run --list printed no route table: {listed!r}")
    body = [f"| `{name}` | {lane} | {what.replace('|', '&#124;')} |" for name, lane, what in rows]
    return "\n".join(["| route | lane | what it shows |", "| --- | --- | --- |", *body])


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return markdown.replace(MARKER, routes_table()) if MARKER in markdown else markdown
