"""The command that finds the culprit of a check_against failure, printed with the failure.

check_against saves the example's module and inputs (differential.py); here they become a
memref-reduce command line that bisects nothing and reduces the module and the inputs with the
same comparison (`--function`, `--reference`, `--inputs`), when the reference can be imported by
name. The test itself as the check: `memref-reduce <test>` under lit, `pytest --mlir-reduce
<node id>` under pytest, which also bisect the pipeline.
"""

from __future__ import annotations

import os
import shlex
import sys

import numpy as np

from .. import environment
from ..element_types import is_numpy_native


def _importable(reference) -> str | None:
    """`module:qualname` of a reference that another process can import, else None."""
    module, qualname = getattr(reference, "__module__", None), getattr(reference, "__qualname__", "")
    if not module or module == "__main__" or "<" in qualname:
        return None
    return f"{module}:{qualname}"


def _import_root(target: str) -> str | None:
    """The folder from which `module` of `module:qualname` is imported (for PYTHONPATH)."""
    name = target.split(":", 1)[0]
    path = getattr(sys.modules.get(name), "__file__", None)
    if not path:
        return None
    root = os.path.dirname(os.path.abspath(path))
    for _ in range(name.count(".") + (os.path.basename(path) == "__init__.py")):
        root = os.path.dirname(root)
    return root


def _save_inputs(folder: str, inputs: list) -> str | None:
    """The inputs, in order, as `inputs.npz` (as memref-reduce --inputs reads them); None for an
    element type NumPy cannot keep there (bf16, the f8 types)."""
    arrays = [np.asarray(a) for a in inputs]
    if not all(is_numpy_native(a.dtype) for a in arrays):
        return None
    path = os.path.join(folder, "inputs.npz")
    np.savez(path, *arrays)
    return path


def _test_itself() -> str | None:
    """The command that reruns the running test as the check: lit's or pytest's."""
    node = os.environ.get(environment.PYTEST_CURRENT_TEST)
    if node:
        return f"pytest --mlir-reduce {shlex.quote(node.rsplit(' ', 1)[0])}"
    script = sys.argv[0] if sys.argv else ""
    if os.environ.get(environment.LIT_CURRENT_TESTCASE) and os.path.isfile(script):
        return f"memref-reduce {shlex.quote(os.path.abspath(script))}"
    return None


def reduce_commands(folder: str, name: str, module, inputs: list, reference, rtol, atol) -> list[str]:
    """The lines of a failure report that say how to find the culprit."""
    lines = []
    target = _importable(reference)
    saved = _save_inputs(folder, inputs) if target else None
    if target and saved:
        root = _import_root(target)
        words = ([f"PYTHONPATH={root}"] if root else []) + [
            "memref-reduce",
            os.path.join(folder, "module.mlir"),
            f"--function={name}",
            f"--reference={target}",
            f"--inputs={saved}",
            f"--pass-pipeline={module.pipeline}",
            f"--opt-level={module.opt_level}",
        ]
        words += [f"--{k}={v!r}" for k, v in (("rtol", rtol), ("atol", atol)) if v is not None]
        words += ["-o", os.path.join(folder, "reduced.mlir"), f"--write-test={os.path.join(folder, 'test_reduced.py')}"]
        lines.append(f"  reduce the module and the inputs: {shlex.join(words)}")
    elif target is None:
        lines.append(
            f"  (memref-reduce --reference=MODULE:FUNCTION needs a reference importable by name; "
            f"{getattr(reference, '__qualname__', reference)!r} is not)"
        )
    itself = _test_itself()
    if itself:
        lines.append(f"  bisect and reduce with this test as the check: {itself}")
    return lines
