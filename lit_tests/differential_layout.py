# RUN: rm -rf %t && %PYTHON %s %t 2>&1 | FileCheck %s
# REQUIRES: host-supports-jit
"""check_against finds a kernel that ignores its strided layout: @add_ignoring_layout reads its
arguments as contiguous from offset 0 (an identity-layout cast), which is right only for
contiguous views; differential_add.py has the right kernel and the off-by-one one."""

import os
import re
import sys

from memref_runtime import JitModule
from memref_runtime.differential import DifferentialError, check_against
from memref_runtime.testing import log, mlir_inputs, run


def reference(a, b, out):
    out[...] = a + b


LAYOUT = re.compile(
    r"^  argument (\d) .*: \w+, shape \((\d+), (\d+)\), element strides \((-?\d+), (-?\d+)\), offset (\d+) "
)


def is_c_contiguous_from_0(rows, cols, row_stride, col_stride, offset):
    return offset == 0 and (rows * cols == 0 or ((rows == 1 or row_stride == cols) and (cols == 1 or col_stride == 1)))


# CHECK-LABEL: TEST: testIgnoredLayoutIsFound
# CHECK-NEXT: check_against(@add_ignoring_layout): the function and the reference differ on this example (minimised by Hypothesis; seed 0, up to 100 examples)
# CHECK-NEXT: differs: ['argument 2 (memref<?x?xf32, strided<[?, ?], offset: ?>>)']
# CHECK-NEXT: inputs laid out as the kernel assumes: [False, True]
def testIgnoredLayoutIsFound():
    jit = JitModule(os.path.join(mlir_inputs(), "differential_add.mlir"))
    try:
        check_against(jit.add_ignoring_layout, reference, outputs=[2], save_to=sys.argv[1])
    except DifferentialError as e:
        lines = str(e).splitlines()
        log(lines[0])
        log("differs:", [line.split(" after the call:")[0].strip() for line in lines if "after the call:" in line])
        # What the kernel misreads: an input that is not a C-contiguous array from offset 0.
        layouts = {int(m[1]): [int(x) for x in m.groups()[1:]] for m in map(LAYOUT.match, lines) if m}
        log("inputs laid out as the kernel assumes:", [is_c_contiguous_from_0(*layouts[i]) for i in (0, 1)])
    else:
        log("add_ignoring_layout passed, which it must not")


run(testIgnoredLayoutIsFound)
