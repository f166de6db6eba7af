"""What configuring a suite learns by running programs (the test interpreter, the tools' --version and
--help), kept on disk while the files it came from are unchanged.

Configuring the suite ran a dozen programs (~0.55 s) on every lit run, and memref-update-checks
and the harness's own tests configure it again and again. An answer is stored with the stamps
(size, mtime, inode) of the files and folders it depends on: a tool's executable; for the
interpreter, the interpreter, the folders it imports MLIR and LLVM from and the runtime's
sources. A stamp that differs, a missing or unreadable file, and MEMREF_RUNTIME_PROBE_CACHE=0
all mean running the program again. The standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from typing import Any

from . import environment

ENV_VAR = environment.PROBE_CACHE


def cache_dir() -> str | None:
    """The folder of the answers (MEMREF_RUNTIME_PROBE_CACHE, else the user's cache), or None
    when caching is off."""
    setting = os.environ.get(ENV_VAR, "")
    if setting.strip().lower() in ("0", "off", "false", "no"):
        return None
    if setting and setting not in ("1", "on", "true", "yes"):
        return setting
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        base = tempfile.gettempdir()
    return os.path.join(base, "memref-runtime", "probes")


def stamp(path: str) -> list | None:
    """What changes when `path` (a file or a folder) is replaced or its entries change."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def cached(kind: str, key: dict, compute: Callable[[], Any], depends_on: Callable[[Any], Iterable[str]]) -> Any:
    """`compute()` (a JSON-able dict), or the answer stored for `kind` and `key` while the stamps
    of `depends_on(answer)` (paths) are what they were when it was stored. A None answer (the
    program could not tell) is returned but not stored."""
    folder = cache_dir()
    if folder is None:
        return compute()
    digest = hashlib.sha256(json.dumps([kind, key], sort_keys=True).encode()).hexdigest()[:32]
    path = os.path.join(folder, f"{kind}-{digest}.json")
    try:
        with open(path) as f:
            stored = json.load(f)
        if all(stamp(p) == s for p, s in stored["stamps"].items()):
            return stored["answer"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    answer = compute()
    if answer is None:
        return None
    stamps = {p: stamp(p) for p in depends_on(answer)}
    try:
        os.makedirs(folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{kind}-")
        with os.fdopen(fd, "w") as f:
            json.dump({"key": key, "stamps": stamps, "answer": answer}, f)
        os.replace(temporary, path)  # whole or not at all, for lit runs in parallel
    except OSError:
        pass  # a read-only cache only costs the time
    return answer


# Answers given in this process, by tool and its stamp: configuring the suite asks some tools
# the same question twice or three times (mlir-opt's and llvm-config's --version, ...), which
# ran them again each time on a cold or switched-off cache.
_answered: dict = {}


def tool_output(args: list, timeout: int = 60, stdin: str | None = None) -> str:
    """stdout + stderr of `args` (a tool's --version or --help, or what it makes of `stdin`), ""
    if it cannot run; cached while the tool's executable is unchanged, and asked once per process."""
    tool = os.path.realpath(args[0])
    key = (tool, str(stamp(tool)), stdin, *args[1:])
    if key not in _answered:
        answer = _tool_output(tool, args, timeout, stdin)
        if answer is None:
            return ""  # timed out: not remembered
        _answered[key] = answer
    return _answered[key]


def _tool_output(tool: str, args: list, timeout: int, stdin: str | None) -> str | None:
    """What the disk cache holds (or running `args` gives) for `tool`, args[0] resolved; None
    when the tool ran out of time."""

    def run() -> dict | None:
        try:
            out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, input=stdin)
        except subprocess.TimeoutExpired:
            return None  # a busy machine, not an answer: ask again next time
        except OSError:
            return {"output": ""}
        return {"output": out.stdout + out.stderr}

    key: dict = {"args": [tool] + list(args[1:])}
    if stdin is not None:
        key["stdin"] = stdin
    answer = cached("tool", key, run, lambda answer: [tool])
    return answer["output"] if answer else None


def filecheck_kind(command: str) -> str:
    """`llvm` or `python`: LLVM's FileCheck names LLVM in its --version output."""
    args = shlex.split(command, posix=os.name != "nt")
    return "llvm" if "LLVM" in tool_output(args + ["--version"], timeout=30) else "python"
