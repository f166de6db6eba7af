"""Known defects of a toolchain, named in the report of a test they fail.

Such a test fails as it must (no XFAIL lists): what it tests does not work with that toolchain.
Its failure report says which known defect it met, and which toolchain runs the test instead,
so that nobody hunts for a bug of their own. A defect is recognised by what the failed test
printed (an assertion of the toolchain) or, where the toolchain fails silently, by what the
test asks of it together with a probe of the toolchain (capabilities.py); the second kind says
"most likely". Nothing here names a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The xtc wheels' MLIR lowers memrefs of sub-byte integers its own way (MemRefToLLVM.cpp): an
# assertion aborts on some element types (i1 from bufferized tensors, sparse masks), the others
# are packed several to a byte, where upstream's 22.1.8 stores one element per byte.
SUB_BYTE_ABORT = re.compile(r"integralElementType\.getWidth\(\) >= 8")
# A memref type whose element type is i1 to i7: memref<4x?xi4>, memref<i1>, memref<8xi1, strided<[1]>>.
SUB_BYTE_MEMREF = re.compile(r"memref<(?:[\d?]+x)*i[1-7][,>]")
MARKER = "memref-runtime: a known failure of the toolchain in use"


@dataclass(frozen=True)
class Failure:
    """What a failed test tells: its output, its source, the mlir-opt that ran its RUN lines
    (or None), whether that is the suite's own and whether it packs sub-byte memref elements,
    and whether the test asked for a test-only pass."""

    output: str
    source: str
    mlir_opt: str | None
    suites_own: bool
    packs_sub_byte: bool
    uses_test_passes: bool
    llvm_version: str = "22.1.8"


def sub_byte_defect(failure: Failure) -> str | None:
    """The wheel's sub-byte memref lowering: its abort, or (most likely) its packing."""
    if SUB_BYTE_ABORT.search(failure.output):
        what = (
            "it aborted on the known assertion `integralElementType.getWidth() >= 8` (MemRefToLLVM.cpp): "
            "the wheels' MLIR refuses memref loads and stores of some sub-byte integer types (i1 ...) that "
            "upstream's 22.1.8 lowers"
        )
    elif failure.suites_own and failure.packs_sub_byte and SUB_BYTE_MEMREF.search(failure.source):
        what = (
            "most likely: the test stores into memrefs of sub-byte integers (i1 to i7), which this mlir-opt "
            f"({failure.mlir_opt}) packs several to a byte where upstream's 22.1.8 gives each element a byte "
            "of its own, so code that reads those bytes sees other values"
        )
    else:
        return None
    version = failure.llvm_version
    major = version.split(".")[0]
    prefix = f"/usr/lib/llvm-{major}"
    cmake = f"the CMake route (docs/cmake.md: -DMLIR_DIR={prefix}/lib/cmake/mlir)"
    if failure.uses_test_passes:
        instead = (
            f"lit -D test_pass_mlir_opt={prefix}/bin/mlir-opt runs this test's mlir-opt commands with it, "
            f"or {cmake} runs the whole suite with it"
        )
    else:
        instead = f"{cmake} runs the suite with it"
    return (
        f"{MARKER}, not of this test: {what}. Debian's {version} mlir-opt (package mlir-{major}-tools) "
        f"runs it as upstream's does: {instead}."
    )


# Each takes a Failure and returns the note for its report, or None.
KNOWN_DEFECTS = (sub_byte_defect,)


def explain(failure: Failure) -> str | None:
    """The note of the first known defect that `failure` shows, or None."""
    return next((note for note in (defect(failure) for defect in KNOWN_DEFECTS) if note), None)
