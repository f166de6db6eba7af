# RUN: %PYTHON %s %mlir_lib_dir %shlibext \
# RUN:   %mlir_runner_utils %mlir_c_runner_utils %mlir_async_runtime %mlir_float16_utils \
# RUN:   %mlir_apfloat_wrappers %mlir_arm_runner_utils %arm_sme_abi_shlib \
# RUN:   %native_mlir_runner_utils %native_mlir_c_runner_utils %native_mlir_arm_runner_utils \
# RUN:   %native_arm_sme_abi_shlib %llvm_shlib_dir %mlir_native_utils_lib_dir 2>&1 | FileCheck %s
# REQUIRES: runner-utils
"""Upstream's runtime-library substitutions name the toolchain's libraries, in %mlir_lib_dir.

Each library is loaded and must export a symbol that upstream's tests call through it; the
%native_* ones (Integration/lit.local.cfg, for emulated AArch64 runs) are the host's own.
"""

import os
import sys

# Upstream's pattern: helpers in tools/ next to the test, imported through the test's folder.
sys.path.append(os.path.dirname(os.path.abspath(__file__)))
from tools.libraries import describe  # noqa: E402

from memref_runtime.testing import log, run  # noqa: E402

lib_dir, shlibext, *paths = sys.argv[1:]
(
    runner,
    c_runner,
    async_runtime,
    float16,
    apfloat,
    arm_runner,
    sme_abi,
    native_runner,
    native_c_runner,
    native_arm_runner,
    native_sme_abi,
    shlib_dir,
    native_dir,
) = paths


def testRuntimeLibraries():
    for path, symbol in [
        (runner, "printMemrefF32"),
        (c_runner, "printNewline"),
        (async_runtime, "mlirAsyncRuntimeCreateToken"),
        (float16, "printF16"),
        (apfloat, "_mlir_apfloat_add"),
        (arm_runner, "setArmVLBits"),
        (sme_abi, "__arm_tpidr2_save"),
    ]:
        log(describe(path, lib_dir, shlibext, symbol))


def testNativeLibrariesAreTheHostOnes():
    for native, host in [
        (native_runner, runner),
        (native_c_runner, c_runner),
        (native_arm_runner, arm_runner),
        (native_sme_abi, sme_abi),
    ]:
        log(os.path.basename(native), os.path.samefile(native, host))


def testLibraryFolders():
    # Upstream's find_runtime() looks in llvm_shlib_dir: the same folder as %mlir_lib_dir.
    log("%llvm_shlib_dir", os.path.samefile(shlib_dir, lib_dir))
    log("%mlir_native_utils_lib_dir", os.path.samefile(native_dir, lib_dir))


run(testRuntimeLibraries)
# CHECK-LABEL: TEST: testRuntimeLibraries
# CHECK-NEXT: %mlir_lib_dir/libmlir_runner_utils%shlibext: printMemrefF32 found
# CHECK-NEXT: %mlir_lib_dir/libmlir_c_runner_utils%shlibext: printNewline found
# CHECK-NEXT: %mlir_lib_dir/libmlir_async_runtime%shlibext: mlirAsyncRuntimeCreateToken found
# CHECK-NEXT: %mlir_lib_dir/libmlir_float16_utils%shlibext: printF16 found
# CHECK-NEXT: %mlir_lib_dir/libmlir_apfloat_wrappers%shlibext: _mlir_apfloat_add found
# CHECK-NEXT: %mlir_lib_dir/libmlir_arm_runner_utils%shlibext: setArmVLBits found
# CHECK-NEXT: %mlir_lib_dir/libmlir_arm_sme_abi_stubs%shlibext: __arm_tpidr2_save found
run(testNativeLibrariesAreTheHostOnes)
# CHECK-LABEL: TEST: testNativeLibrariesAreTheHostOnes
# CHECK-NEXT: libmlir_runner_utils.so True
# CHECK-NEXT: libmlir_c_runner_utils.so True
# CHECK-NEXT: libmlir_arm_runner_utils.so True
# CHECK-NEXT: libmlir_arm_sme_abi_stubs.so True
run(testLibraryFolders)
# CHECK-LABEL: TEST: testLibraryFolders
# CHECK-NEXT: %llvm_shlib_dir True
# CHECK-NEXT: %mlir_native_utils_lib_dir True
