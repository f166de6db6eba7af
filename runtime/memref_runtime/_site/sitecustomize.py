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
    """Per-process set-up of a test process (crash reporting and the like).

    A fresh interpreter runs it at start-up; a process forked from a pre-started interpreter
    (one that imported this module already) must call it itself, after it has taken the test's
    environment and standard streams.
    """


setup_process()

# The sitecustomize this one shadows, if any: the next one on sys.path.
for _entry in sys.path:
    _candidate = os.path.join(_entry or os.getcwd(), "sitecustomize.py")
    if os.path.abspath(_entry or os.getcwd()) != _here and os.path.isfile(_candidate):
        _load("_memref_runtime_next_sitecustomize", _candidate)
        break
