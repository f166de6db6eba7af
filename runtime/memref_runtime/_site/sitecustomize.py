# lit puts this folder on PYTHONPATH: the environment says which module aliases to install.
# aliases.py is loaded by path, so that nothing else of memref_runtime (numpy, ml_dtypes) is
# imported before the test itself runs.
import importlib.util
import os
import sys

_bindings = os.environ.get("MEMREF_RUNTIME_BINDINGS", "mlir")
_runtime = os.environ.get("MEMREF_RUNTIME_MLIR_RUNTIME", "upstream")
if _bindings != "mlir" or _runtime == "memref_runtime":
    _path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "aliases.py")
    _spec = importlib.util.spec_from_file_location("_memref_runtime_aliases", _path)
    _aliases = importlib.util.module_from_spec(_spec)
    sys.modules[_spec.name] = _aliases
    _spec.loader.exec_module(_aliases)
    _aliases.alias_mlir_bindings(_bindings)
    if _runtime == "memref_runtime":
        _aliases.alias_mlir_runtime()
