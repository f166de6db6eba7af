# The site hook of a test process: memref_runtime.lit.configure (and the pytest plugin, for another
# provider) puts this folder first on the tests' PYTHONPATH, so Python imports this file at
# start-up, before the test. The environment
# says what to install: module aliases (-D mlir_python, -D mlir_runtime), timing (-D timing),
# and the failure report's per-process set-up. It imports nothing of numpy or MLIR. The
# sitecustomize this one shadows, if any (a venv's, coverage's), runs after it.
import importlib
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))


def _module(name: str, what: str):
    """memref_runtime's module `name`, or None (and a warning saying what is off) without it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        sys.stderr.write(
            f"memref-runtime site hook ({__file__}): {what} is off: {e}; this interpreter "
            f"({sys.executable}) must import memref_runtime (pip install memref-runtime)\n"
        )
        return None


_env = _module("memref_runtime.environment", "everything the harness set up")
_bindings = os.environ.get(_env.BINDINGS, "mlir") if _env else "mlir"
_runtime = os.environ.get(_env.MLIR_RUNTIME, "upstream") if _env else "upstream"
if _bindings != "mlir" or _runtime == "memref_runtime":
    _aliases = _module("memref_runtime.aliases", "the module alias of mlir")
    if _aliases is not None:
        _aliases.alias_mlir_bindings(_bindings)
        if _runtime == "memref_runtime":
            _aliases.alias_mlir_runtime(_bindings)
# benchmarks/suite.py: `lit -D timing=DIR` records where each test process's time goes.
if _env and os.environ.get(_env.TIMING):
    _timing = _module("memref_runtime.process.timing", "timing")
    if _timing is not None:
        _timing.install()


def setup_process() -> None:
    """Per-process set-up of a test process: under lit's failure report (MEMREF_RUNTIME_REPORT,
    see memref_runtime/process/report.py) the crash handlers, callback exceptions that fail
    the process, and the copy of fds 1 and 2 into the report; nothing otherwise.

    A fresh interpreter runs it at start-up; a process forked from a pre-started interpreter
    (one that imported this module already) must call it itself, after it has taken the test's
    environment, sys.argv and standard streams (fds 0-2, no other copies of 1 and 2 left open).
    In a test process it forks: it returns in the child, which runs the test, while the process
    that called it copies the output and ends with the child's status, never returning.
    """
    if _env and os.environ.get(_env.REPORT):
        report = _module("memref_runtime.process.report", "the failure report")
        if report is not None:
            report.setup_process()


setup_process()

# The sitecustomize this one shadows, if any: the next one on sys.path, loaded by its path (the
# only module of memref_runtime loaded that way: it has no package name of its own).
for _entry in sys.path:
    _candidate = os.path.join(_entry or os.getcwd(), "sitecustomize.py")
    if os.path.abspath(_entry or os.getcwd()) != _here and os.path.isfile(_candidate):
        import importlib.util

        _spec = importlib.util.spec_from_file_location("_memref_runtime_next_sitecustomize", _candidate)
        assert _spec is not None and _spec.loader is not None  # a .py path always gets a source loader
        _next = importlib.util.module_from_spec(_spec)
        sys.modules[_spec.name] = _next
        _spec.loader.exec_module(_next)
        break
