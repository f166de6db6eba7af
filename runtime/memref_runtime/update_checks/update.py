"""Updating test files: run a test, generate its CHECK lines, rewrite the file (or only compare),
and say what was written."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from .checks import generate_blocks
from .errors import RunFailed, Skipped, UpdateError
from .rewrite import comment_marker, rewrite, used_prefixes
from .running import (
    DEFAULT_TIMEOUT,
    discover,
    make_lit_config,
    run_checks,
    run_to_run_masks,
)

STATUSES = ("unchanged", "updated", "out-of-date", "hand-written", "skipped", "failed", "timed-out", "error")
# A file with one of these was not updated for a reason the user must act on (exit status 2).
ERROR_STATUSES = ("failed", "timed-out", "error")


@dataclass
class FileResult:
    """What happened to one file: `status` is one of STATUSES, `message` says more; `new_test`:
    the file had no CHECK lines of its RUN lines' prefixes before."""

    path: str
    status: str
    message: str = ""
    old_text: str = ""
    new_text: str = ""
    warnings: list[str] = field(default_factory=list)
    new_test: bool = False


def _marker_reason(name: str, text: str) -> str | None:
    """The reason given by an `UPDATE-CHECKS: <name>: <reason>` comment, None without one."""
    m = re.search(rf"^[ \t]*(?:#|//|;)[ \t]*UPDATE-CHECKS:[ \t]*{re.escape(name)}:(?P<reason>.*)$", text, re.M)
    if not m:
        return None
    if not m.group("reason").strip():
        raise UpdateError(f"`UPDATE-CHECKS: {name}:` needs a reason after the colon")
    return m.group("reason").strip()


def update_file(path: str, test: Any, lit_config: Any, timeout: float = DEFAULT_TIMEOUT) -> FileResult:
    """The new text of test file `path` (a FileResult with old_text and new_text set); raises
    RunFailed for a run that failed, UpdateError for a file the tool cannot update."""
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    result = FileResult(path, "unchanged", old_text=text, new_text=text)
    hand = _marker_reason("hand-written", text)
    if hand is not None:
        result.status, result.message = "hand-written", hand
        return result
    allow_traceback = _marker_reason("allow-traceback", text) is not None
    comment_marker(text)
    runs = run_checks(test, lit_config, timeout=timeout, allow_traceback=allow_traceback)
    # run_checks keeps the steps that pipe into FileCheck: each has its prefixes.
    prefixes = [p for run, _ in runs for p in run.prefixes or ()]
    blocks = generate_blocks(runs, run_to_run_masks(test).pattern(), prefixes)
    result.new_text = rewrite(text, blocks, prefixes)
    result.new_test = not used_prefixes(text, prefixes)
    used = used_prefixes(result.new_text, prefixes)
    for run, _ in runs:
        run_prefixes = run.prefixes or []
        unused = [p for p in run_prefixes if p not in used]
        if len(unused) == len(run_prefixes):
            raise UpdateError(f"RUN line {run.line}: the command prints nothing to check")
        if unused:
            result.warnings.append(
                f"RUN line {run.line}: prefix {', '.join(unused)} has no CHECK lines (every section is the same "
                f"under another prefix); LLVM's FileCheck rejects an unused prefix: drop it from the RUN line"
            )
    return result


def update_test(
    path: str, test: Any, lit_config: Any, check: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> FileResult:
    """Updates (with `check`, only compares) one lit test; a file whose run failed is left as it is."""
    try:
        result = update_file(test.getSourcePath(), test, lit_config, timeout=timeout)
    except Skipped as e:
        return FileResult(path, "skipped", str(e))
    except RunFailed as e:
        return FileResult(path, e.status, str(e))
    except UpdateError as e:
        return FileResult(path, "error", str(e))
    result.path = path
    if result.status == "unchanged" and result.new_text != result.old_text:
        result.status = "out-of-date" if check else "updated"
        if not check:
            with open(test.getSourcePath(), "w", encoding="utf-8", newline="") as f:
                f.write(result.new_text)
    return result


def update_files(
    inputs: list[str], params: dict[str, str] | None = None, check: bool = False, timeout: float = DEFAULT_TIMEOUT
) -> list[FileResult]:
    """Updates (or with `check`, only compares) the CHECK lines of the tests named by `inputs`."""
    lit_config = make_lit_config(params or {})
    results = []
    for path, test in discover(inputs, lit_config):
        if isinstance(test, UpdateError):
            results.append(FileResult(path, "error", str(test)))
        elif isinstance(test, Skipped):
            results.append(FileResult(path, "skipped", str(test)))
        else:
            results.append(update_test(path, test, lit_config, check=check, timeout=timeout))
    return results


def written_lines(result: FileResult) -> list[tuple[int, str]]:
    """(line number, text) of each line the new text adds to the old one."""
    old, new = result.old_text.splitlines(), result.new_text.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [
        (j + 1, new[j])
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("insert", "replace")
        for j in range(j1, j2)
    ]


def report(result: FileResult) -> str:
    """What an update wrote (or `--check` would write): the CHECK lines of a new test, with their
    line numbers, else a unified diff."""
    if result.new_test:
        lines = written_lines(result)
        width = len(str(lines[-1][0])) if lines else 1
        return "".join(f"  {number:>{width}} | {text}\n" for number, text in lines)
    return "".join(
        difflib.unified_diff(
            result.old_text.splitlines(keepends=True),
            result.new_text.splitlines(keepends=True),
            fromfile=f"a/{result.path}",
            tofile=f"b/{result.path}",
        )
    )


def headline(result: FileResult) -> str:
    """One line about a file: `updated: <path>: 4 CHECK lines written (a new test)` and the like."""
    text = f"{result.status}: {result.path}"
    if result.status in ("updated", "out-of-date"):
        if result.new_test:
            verb = "written" if result.status == "updated" else "to write"
            text += f": {len(written_lines(result))} CHECK lines {verb} (a new test)"
    elif result.message:
        text += f": {result.message}"
    return text
