"""Upstream MLIR folders copied whole keep loading: the site-config attributes their lit.local.cfg
files read, and a lit.local.cfg that raises fails its folder's tests instead of the whole run.

`apply()` gives the suite's config every attribute upstream's `mlir/test/lit.site.cfg.py.in`
defines (`native_target`, `host_triple`, `target_triple`, `host_arch`, `llvm_shlib_dir`,
`mlir_lib_dir`, `enable_assertions`, the GPU and emulator switches, ...) with what the toolchain
in use says or, where nothing can tell, the value of a default build (switches off, no
emulator). A value the site config or lit.cfg.py set already is kept. `config.root` of a
lit.local.cfg is this config, so `config.root.native_target` works.

`guard_local_configs()` makes lit.local.cfg files of the suite load through `GuardedConfig`: an
exception in one is reported as a lit warning and recorded on that folder's config, and a before
hook (`LocalConfigError`) fails each test there with the traceback. lit itself would stop the
whole run before any test ran. `lit_config.fatal()` in a lit.local.cfg still stops the run: that
is what its author asked for.
"""

from __future__ import annotations

import os
import platform
import shutil
import traceback

import lit.Test
import lit.TestingConfig

from .test_format import Before
from .upstream_compat import SHLIB_EXT

# LLVM_NATIVE_ARCH, the name of the host's LLVM target, by platform.machine().
NATIVE_ARCH = {"x86_64": "X86", "amd64": "X86", "i386": "X86", "i686": "X86", "aarch64": "AArch64",
               "arm64": "AArch64", "armv7l": "ARM", "riscv64": "RISCV", "ppc64le": "PowerPC",
               "ppc64": "PowerPC", "s390x": "SystemZ", "loongarch64": "LoongArch"}

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
    **dict.fromkeys((
        "lit_tools_dir", "host_c_compiler_launcher", "host_cxx_compiler_launcher", "enable_libcxx",
        "host_cmake_generator", "llvm_use_linker", "llvm_use_sanitizer", "rocm_test_chipset",
    ), ""),
    **dict.fromkeys((
        "mlir_run_arm_sve_tests", "mlir_run_arm_sme_tests", "mlir_run_x86_tests",
        "mlir_run_x86_amx_tests", "mlir_run_amx_tests", "mlir_run_x86vector_tests",
        "mlir_run_riscv_vector_tests", "enable_cuda_runner", "enable_rocm_runner",
        "enable_sycl_runner", "enable_levelzero_runner", "enable_vulkan_runner",
        "enable_spirv_cpu_runner", "run_nvptx_tests", "run_rocm_tests", "run_xevm_tests",
        "mlir_run_cuda_tensor_core_tests", "mlir_run_cuda_sm80_tests",
        "mlir_run_cuda_sm80_lt_tests", "mlir_run_cuda_sm90_tests",
    ), False),
    **dict.fromkeys((
        "arm_emulator_executable", "arm_emulator_options", "arm_emulator_lli_executable",
        "arm_emulator_mlir_runner_executable", "arm_emulator_utils_lib_dir",
        "arm_sme_abi_routines_shlib", "intel_sde_executable", "riscv_emulator_lli_executable",
        "riscv_emulator_utils_lib_dir", "riscv_vector_emulator_executable",
        "riscv_vector_emulator_options",
    ), ""),
}


def site_attributes(setup, python: str, llvm_tools_dir: str | None, mlir_opt: str | None) -> dict:
    """Every attribute of upstream's lit.site.cfg.py.in: from `setup` (upstream_compat's
    UpstreamSetup) and the tools found, else DEFAULT_BUILD's."""
    build = setup.tools_build
    mlir_tools_dir = os.path.dirname(mlir_opt) if mlir_opt else None
    prefix = os.path.dirname(mlir_tools_dir) if mlir_tools_dir else None
    cmake_dir = os.path.join(prefix, "lib", "cmake", "mlir") if prefix else None
    roots = setup.source_roots
    return {
        **DEFAULT_BUILD,
        "target_triple": build.triple, "host_triple": build.triple,
        "native_target": NATIVE_ARCH.get(platform.machine().lower(), platform.machine()),
        "host_os": platform.system(), "host_arch": platform.machine(),
        "enable_assertions": bool(build.asserts),
        "python_executable": python,
        "llvm_tools_dir": llvm_tools_dir, "mlir_tools_dir": mlir_tools_dir,
        "llvm_shlib_ext": SHLIB_EXT, "llvm_shlib_dir": setup.library_dir, "mlir_lib_dir": setup.library_dir,
        "mlir_obj_root": prefix, "mlir_cmake_dir": cmake_dir if cmake_dir and os.path.isdir(cmake_dir) else None,
        "mlir_src_root": roots.get("mlir_src_root"), "llvm_src_root": roots.get("llvm_src_root"),
        "host_cc": roots.get("host_cc", ""), "host_cxx": roots.get("host_cxx", ""),
        "host_cmake": shutil.which("cmake") or "",
    }


def apply(config, attributes: dict) -> None:
    """Sets each attribute the config does not have yet (None counts as not set)."""
    for name, value in attributes.items():
        if getattr(config, name, None) is None:
            setattr(config, name, value)


# --- lit.local.cfg files that raise -------------------------------------------------------------

CONFIG_ERROR = "memref_runtime_config_error"  # the attribute a failed lit.local.cfg leaves


class GuardedConfig(lit.TestingConfig.TestingConfig):
    """lit's TestingConfig, whose lit.local.cfg files cannot stop the whole run by raising."""

    def load_from_path(self, path, litConfig):
        if os.path.basename(path) not in litConfig.local_config_names:
            return super().load_from_path(path, litConfig)
        try:
            with open(path) as f:
                data = f.read()
        except OSError:
            litConfig.fatal(f"unable to load config file: {path!r}")
        # What lit gives a config file: its own module's globals, config, lit_config, __file__.
        cfg_globals = dict(vars(lit.TestingConfig), config=self, lit_config=litConfig, __file__=path)
        try:
            exec(compile(data, path, "exec"), cfg_globals, None)
        except SystemExit as e:
            if e.args:  # lit_config.fatal(): the author stops the run
                raise
        except Exception as e:  # noqa: BLE001 - any error of the file fails its folder's tests
            setattr(self, CONFIG_ERROR, f"memref-runtime: {path} raised {type(e).__name__}, so the tests of its "
                                        f"folder fail:\n{traceback.format_exc()}")
            litConfig.warning(f"{path} raised {type(e).__name__}: {e}; the tests of its folder fail with the "
                              "traceback (lit -v shows it)")
        self.finish(litConfig)


def guard_local_configs(config) -> None:
    """From now on the lit.local.cfg files below `config` load through GuardedConfig (lit
    deep-copies this config for each folder, class included)."""
    if type(config) is lit.TestingConfig.TestingConfig:
        config.__class__ = GuardedConfig


def local_config_error(test, lit_config):
    """Before hook: a test whose folder's lit.local.cfg raised fails, with the traceback."""
    error = getattr(test.config, CONFIG_ERROR, None)
    return Before(result=lit.Test.Result(lit.Test.FAIL, error)) if error else None
