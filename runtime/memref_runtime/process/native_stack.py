"""The native stack of a crash, printed by LLVM's own signal handlers.

The LLVM library that the MLIR bindings load (the `llvm` wheel's libLLVM.so, or the one
torch-mlir links into libTorchMLIRAggregateCAPI.so) exports
`llvm::sys::PrintStackTraceOnErrorSignal(StringRef argv0, bool)`. Called once, it makes a fatal
signal print a symbolized native stack to file descriptor 2 (with llvm-symbolizer found next to
`argv0`, through LLVM_SYMBOLIZER_PATH or on PATH), then die by the same signal.

It also takes SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/2 and a few more, which it would turn
into plain deaths (Ctrl-C would no longer raise KeyboardInterrupt): every signal but the fatal
ones gets its earlier action back, so nothing else about the process changes.

Imported by process_report.py once the MLIR bindings are loaded in a test process: imports
nothing of numpy or MLIR itself.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

_SYMBOL = "_ZN4llvm3sys28PrintStackTraceOnErrorSignalENS_9StringRefEb"
# The signals whose native stack is worth printing; LLVM keeps these.
FATAL_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT})
_SIGACTION_SIZE = 512  # larger than struct sigaction on every libc: the bytes are only copied back


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_char_p), ("size", ctypes.c_size_t)]


_installed_from: str | None = None  # the library whose handlers are installed (kept across fork)
_argv0: bytes = b""  # LLVM keeps a StringRef to these bytes, not a copy: they must live forever


def loaded_libraries() -> list[str]:
    """Paths of the shared libraries mapped into this process, LLVM's own names first."""
    paths: list[str] = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split(None, 5)
                if len(fields) == 6 and ".so" in fields[5]:
                    paths.append(fields[5].strip())
    except OSError:  # no /proc (macOS): nothing to search, so no native stack
        pass
    paths = list(dict.fromkeys(paths))
    return sorted(paths, key=lambda p: "LLVM" not in os.path.basename(p))


def _find_handler(candidates: list[str]):
    """(library path, the exported function) of the first already loaded library that has it."""
    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    for path in candidates:
        try:
            library = ctypes.CDLL(path, mode=mode)  # NOLOAD: never runs a library's initializers
            return path, getattr(library, _SYMBOL)
        except (OSError, AttributeError):
            continue
    return None, None


def _symbolizer_argv0(library: str) -> str:
    """An argv0 whose folder holds llvm-symbolizer (the wheel's bin/ next to lib/), which LLVM
    looks at before PATH; else the interpreter."""
    for folder in (os.path.dirname(library), os.path.join(os.path.dirname(library), os.pardir, "bin")):
        if os.access(os.path.join(folder, "llvm-symbolizer"), os.X_OK):
            return os.path.join(os.path.abspath(folder), "python")
    return sys.executable or "python"


def _actions(libc, signals) -> dict:
    """The current sigaction of each signal, as raw bytes."""
    saved = {}
    for number in signals:
        buffer = ctypes.create_string_buffer(_SIGACTION_SIZE)
        if libc.sigaction(number, None, buffer) == 0:
            saved[number] = buffer
    return saved


def install() -> str:
    """Installs LLVM's handlers for fatal signals, once per process; returns the library used.

    Raises RuntimeError naming why when no loaded library exports them (the caller reports
    "native stack unavailable: ...").
    """
    global _installed_from, _argv0
    if _installed_from:
        return _installed_from
    path, function = _find_handler(loaded_libraries())
    if function is None:
        raise RuntimeError(f"no loaded library exports llvm::sys::PrintStackTraceOnErrorSignal ({_SYMBOL})")
    libc = ctypes.CDLL(None, use_errno=True)
    others = [s for s in range(1, signal.NSIG) if s not in FATAL_SIGNALS]
    before = _actions(libc, others)
    _argv0 = _symbolizer_argv0(path).encode()
    function.argtypes, function.restype = [_StringRef, ctypes.c_bool], None
    function(_StringRef(_argv0, len(_argv0)), False)
    after = _actions(libc, others)
    for number, action in before.items():  # hand back what LLVM took besides the fatal signals
        if after.get(number) is not None and after[number].raw != action.raw:
            libc.sigaction(number, action, None)
    _installed_from = path
    return path
