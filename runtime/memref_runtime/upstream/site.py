"""The site-config attributes that upstream MLIR's lit.local.cfg files read, so that folders
copied whole from upstream keep loading.

`apply()` gives the suite's config every attribute upstream's `mlir/test/lit.site.cfg.py.in`
defines (`native_target`, `host_triple`, `target_triple`, `host_arch`, `llvm_shlib_dir`,
`mlir_lib_dir`, `enable_assertions`, the GPU and emulator switches, ...) with what the toolchain
in use says or, where nothing can tell, the value of a default build (switches off, no
emulator). A value the site config or lit.cfg.py set already is kept. `config.root` of a
lit.local.cfg is this config, so `config.root.native_target` works. `apply_switches()` sets the
hardware suites that -D asks for (hardware.py), over any value; `site_features()` gives the
features upstream's site config derives from its attributes.
"""

from __future__ import annotations

import os
import platform
import shutil

from .compat import SHLIB_EXT

# LLVM_NATIVE_ARCH, the name of the host's LLVM target, by platform.machine().
NATIVE_ARCH = {
    "x86_64": "X86",
    "amd64": "X86",
    "i386": "X86",
    "i686": "X86",
    "aarch64": "AArch64",
    "arm64": "AArch64",
    "armv7l": "ARM",
    "riscv64": "RISCV",
    "ppc64le": "PowerPC",
    "ppc64": "PowerPC",
    "s390x": "SystemZ",
    "loongarch64": "LoongArch",
}

# What a default build writes where the toolchain in use cannot tell: no GPU runner, no
# hardware-specific tests, no emulator, no sanitizer. Integration tests are on: running them
# is what this harness is for (upstream's default is off, which marks them unsupported).
DEFAULT_BUILD = {
    "mlir_include_integration_tests": True,
    "enable_bindings_python": True,
    "expensive_checks": False,
    "spirv_tools_tests": False,
    "build_examples": False,
    "llvm_shared_libs_build": False,
    "enable_python_stable_abi": False,
    "gpu_compilation_format": "fatbin",
    "cmake_build_type": "Release",
    **dict.fromkeys(
        (
            "lit_tools_dir",
            "host_c_compiler_launcher",
            "host_cxx_compiler_launcher",
            "enable_libcxx",
            "host_cmake_generator",
            "llvm_use_linker",
            "llvm_use_sanitizer",
            "rocm_test_chipset",
        ),
        "",
    ),
    **dict.fromkeys(
        (
            "mlir_run_arm_sve_tests",
            "mlir_run_arm_sme_tests",
            "mlir_run_x86_tests",
            "mlir_run_x86_amx_tests",
            "mlir_run_amx_tests",
            "mlir_run_x86vector_tests",
            "mlir_run_riscv_vector_tests",
            "enable_cuda_runner",
            "enable_rocm_runner",
            "enable_sycl_runner",
            "enable_levelzero_runner",
            "enable_vulkan_runner",
            "enable_spirv_cpu_runner",
            "run_nvptx_tests",
            "run_rocm_tests",
            "run_xevm_tests",
            "mlir_run_cuda_tensor_core_tests",
            "mlir_run_cuda_sm80_tests",
            "mlir_run_cuda_sm80_lt_tests",
            "mlir_run_cuda_sm90_tests",
        ),
        False,
    ),
    **dict.fromkeys(
        (
            "arm_emulator_executable",
            "arm_emulator_options",
            "arm_emulator_lli_executable",
            "arm_emulator_mlir_runner_executable",
            "arm_emulator_utils_lib_dir",
            "arm_sme_abi_routines_shlib",
            "intel_sde_executable",
            "riscv_emulator_lli_executable",
            "riscv_emulator_utils_lib_dir",
            "riscv_vector_emulator_executable",
            "riscv_vector_emulator_options",
        ),
        "",
    ),
}


def site_attributes(setup, python: str, llvm_tools_dir: str | None, mlir_opt: str | None) -> dict:
    """Every attribute of upstream's lit.site.cfg.py.in: from `setup` (upstream_compat's
    UpstreamSetup) and the tools found, else DEFAULT_BUILD's."""
    build = setup.tools_build
    # What CMake derives from the targets LLVM was built with (capabilities.py probed them).
    gpu = {
        "run_nvptx_tests": "host-supports-nvptx" in setup.tools_features,
        "run_rocm_tests": "host-supports-amdgpu" in setup.tools_features,
    }
    # The SPIR-V CPU runner's tests need its runtime library and -test-spirv-cpu-runner-pipeline
    # (provided from public passes where the suite's mlir-opt lacks it).
    spirv_cpu = "%mlir_spirv_cpu_runtime" not in setup.missing
    mlir_tools_dir = os.path.dirname(mlir_opt) if mlir_opt else None
    prefix = os.path.dirname(mlir_tools_dir) if mlir_tools_dir else None
    cmake_dir = os.path.join(prefix, "lib", "cmake", "mlir") if prefix else None
    roots = setup.source_roots
    return {
        **DEFAULT_BUILD,
        "target_triple": build.triple,
        "host_triple": build.triple,
        "native_target": NATIVE_ARCH.get(platform.machine().lower(), platform.machine()),
        "host_os": platform.system(),
        "host_arch": platform.machine(),
        "enable_assertions": bool(build.asserts),
        "python_executable": python,
        "llvm_tools_dir": llvm_tools_dir,
        "mlir_tools_dir": mlir_tools_dir,
        "llvm_shlib_ext": SHLIB_EXT,
        "llvm_shlib_dir": setup.library_dir,
        "mlir_lib_dir": setup.library_dir,
        "mlir_obj_root": prefix,
        "mlir_cmake_dir": cmake_dir if cmake_dir and os.path.isdir(cmake_dir) else None,
        "mlir_src_root": roots.get("mlir_src_root") or roots.get("mlir_src_dir"),
        "llvm_src_root": roots.get("llvm_src_root"),
        "host_cc": roots.get("host_cc") or "",
        "host_cxx": roots.get("host_cxx") or "",
        "host_cmake": shutil.which("cmake") or "",
        **gpu,
        "enable_spirv_cpu_runner": spirv_cpu and mlir_opt is not None,
    }


def apply(config, attributes: dict) -> None:
    """Sets each attribute the config does not have yet (None counts as not set)."""
    for name, value in attributes.items():
        if getattr(config, name, None) is None:
            setattr(config, name, value)


def apply_switches(config, switches: dict) -> None:
    """Sets the hardware suites' switches -D asked for (hardware.switches), over any value."""
    for name, on in switches.items():
        setattr(config, name, on)


def site_features(config) -> set:
    """What upstream's lit.site.cfg.py and lit.cfg.py add from the site attributes."""
    emulator = bool(getattr(config, "arm_emulator_executable", ""))
    flags = {
        "mlir_arm_sve_tests": bool(getattr(config, "mlir_run_arm_sve_tests", False)),
        "arm-emulator": emulator,
        "mlir_arm_emulator": emulator,
        "expensive_checks": bool(getattr(config, "expensive_checks", False)),
    }
    return {feature for feature, on in flags.items() if on}
