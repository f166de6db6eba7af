"""Running a test process and saying how it ended, for lit and pytest alike.

  _site/               the site hook every test process imports first (sitecustomize.py)
  report.py            the test process's side of the failure report: crash handlers, the copy
                       of its output, how it ended
  failure_report.py    reading that back: what each Python process printed, how it ended
  native_stack.py      LLVM's symbolized native stack on a crash
  jit_symbols.py       where each JIT-compiled function lies, written down before a crash
  jit_frames.py        the native frames of a crash in JIT-compiled code, named with it
  callback_exceptions.py  exceptions raised in ctypes callbacks fail the test
  ending.py            a child that dies with its parent; ending as a child ended
  timing.py            where a test process's time goes (-D timing=DIR)

Nothing here imports numpy or MLIR: the site hook runs in every test process.
"""

from __future__ import annotations

import os

# The folder of the site hook (_site/sitecustomize.py) that every test process imports first:
# first on the PYTHONPATH of lit's tests, and of a pytest session's processes for another provider.
SITE_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")
