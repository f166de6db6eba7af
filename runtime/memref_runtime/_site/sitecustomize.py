# lit puts this folder first on PYTHONPATH: the environment says which module aliases to install.
# aliases.py is loaded by path, so that nothing else of memref_runtime (numpy, ml_dtypes) is
# imported before the test itself runs. Any other sitecustomize (a venv's, coverage's) runs after.
import importlib.util
import os
import sys


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_here = os.path.dirname(os.path.abspath(__file__))
_bindings = os.environ.get("MEMREF_RUNTIME_BINDINGS", "mlir")
_runtime = os.environ.get("MEMREF_RUNTIME_MLIR_RUNTIME", "upstream")
if _bindings != "mlir" or _runtime == "memref_runtime":
    _aliases = _load("_memref_runtime_aliases", os.path.join(os.path.dirname(_here), "aliases.py"))
    _aliases.alias_mlir_bindings(_bindings)
    if _runtime == "memref_runtime":
        _aliases.alias_mlir_runtime()
# benchmarks/suite.py: `lit -D timing=DIR` records where each test process's time goes.
if os.environ.get("MEMREF_RUNTIME_TIMING"):
    _load("_memref_runtime_timing", os.path.join(os.path.dirname(_here), "timing.py")).install()



def setup_process() -> None:
    """Per-process set-up of a test process: under lit's failure report (MEMREF_RUNTIME_REPORT,
    see process_report.py) the crash handlers, callback exceptions that fail the process, and
    the copy of fds 1 and 2 into the report; nothing otherwise.

    A fresh interpreter runs it at start-up; a process forked from a pre-started interpreter
    (one that imported this module already) must call it itself, after it has taken the test's
    environment, sys.argv and standard streams (fds 0-2, no other copies of 1 and 2 left open).
    In a test process it forks: it returns in the child, which runs the test, while the process
    that called it copies the output and ends with the child's status, never returning.
    """
    if os.environ.get("MEMREF_RUNTIME_REPORT"):
        report = sys.modules.get("_memref_runtime_process_report") or _load(
            "_memref_runtime_process_report", os.path.join(os.path.dirname(_here), "process_report.py"))
        report.setup_process()


setup_process()

# The sitecustomize this one shadows, if any: the next one on sys.path.
for _entry in sys.path:
    _candidate = os.path.join(_entry or os.getcwd(), "sitecustomize.py")
    if os.path.abspath(_entry or os.getcwd()) != _here and os.path.isfile(_candidate):
        _load("_memref_runtime_next_sitecustomize", _candidate)
        break
