# RUN: %PYTHON %s lines | count 3
# RUN: not %PYTHON %s fail 2>&1 | FileCheck %s
# RUN: not --crash %PYTHON %s segfault
# UPDATE-CHECKS: hand-written: checks `count`, `not` and `not --crash`: exit statuses and a traceback, not output to regenerate
"""The tool substitutions work, and a failing or crashing test process is seen as such.

`count` counts lines, `not` inverts an exit status and `not --crash` expects a crash: a
test whose Python process raises or segfaults fails (and only that test; the suite goes on).
"""

import ctypes
import sys


def lines():
    print("one\ntwo\nthree")


def fail():
    # CHECK: Traceback
    # CHECK: AssertionError: failed on purpose
    raise AssertionError("failed on purpose")


def segfault():
    ctypes.string_at(0)


{"lines": lines, "fail": fail, "segfault": segfault}[sys.argv[1]]()
