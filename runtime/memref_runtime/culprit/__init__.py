"""Find the culprit of a failing JIT test: the pass of a pipeline or the LLVM optimization that
breaks it (memref-bisect, bisect_pipeline), and the smallest module and inputs that still fail
the same way, written as a regression test (memref-reduce, reduce). One module per concern:

  tools.py        the LLVM/MLIR tools of the wheels (mlir-opt, mlir-translate, mlir-reduce, opt)
  isolation.py    one job in a forked child: a candidate that crashes or hangs ends the child only
  checks.py       the check of a candidate (a command, a Python callable, Against), "the same way"
  typed_call.py   Against: a typed call compared with a reference on fixed inputs and probes
  reading.py      reading modules here: signatures (single-threaded Contexts, for the forks)
  pipeline.py     a pipeline as steps; the module after the first k, finished by the default lowering
  llvm_level.py   LLVM IR through opt -opt-bisect-limit=N and back into the LLVM dialect
  bisect.py       bisect_pipeline: the pipeline level, then the LLVM level
  edits.py        the edits a reduction tries (erase ops, constants, canonicalize), text to text
  shrink.py       smaller inputs of a typed call that still fail the same way
  mlir_reduce.py  the wheel's mlir-reduce, driven with the same check through a callback script
  reduction.py    reduce: inputs, then rounds of edits, until nothing changes
  regression.py   the reduced case as a lit test (CHECK lines by memref-update-checks) or a pytest test
  lit_run.py      a lit test run as lit runs it, with a candidate in place of its module; how it failed
  test_module.py  the module, pipeline and opt level a failing test used
  from_test.py    memref-reduce TEST: bisect and reduce with the test as the check, its regression test
  cli.py          memref-bisect and memref-reduce

Importing this package loads neither numpy nor MLIR; the functions do, when called.
"""

from __future__ import annotations

__all__ = ["bisect_pipeline", "BisectResult", "reduce", "Reduction", "Against"]


def __getattr__(name: str):
    if name in ("bisect_pipeline", "BisectResult"):
        from . import bisect

        return getattr(bisect, name)
    if name in ("reduce", "Reduction"):
        from . import reduction

        return getattr(reduction, name)
    if name == "Against":
        from .typed_call import Against

        return Against
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
