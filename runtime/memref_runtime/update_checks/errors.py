"""Why a file is not updated: the tool cannot handle it, lit would not run it, or its run failed."""

from __future__ import annotations


class UpdateError(Exception):
    """A file this tool cannot update; the message says why and what to do."""


class Skipped(Exception):
    """A test lit would not run here (REQUIRES, UNSUPPORTED, XFAIL): left unchanged."""


class RunFailed(UpdateError):
    """A RUN line whose run failed (or ran out of time): no CHECK lines are written from it.

    `status` is the FileResult status it gives ("failed" or "timed-out"); the message names the
    RUN line and its command, with `reason` (one line that says what went wrong) and `excerpt`
    (the part of the output that shows it)."""

    def __init__(self, status: str, line: int, command: str, reason: str, excerpt: str = ""):
        self.status = status
        where = f"RUN line {line}" if line else "a preamble command"
        text = f"{where}: {reason}; file left unchanged\n  $ {command}"
        super().__init__(text + ("\n" + excerpt if excerpt else ""))
