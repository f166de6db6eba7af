"""Upstream MLIR's own tests as two lit suites, and what lit says of them: shared by the CI route
(.ci/upstream_route.py) and the side-by-side run (benchmarks/upstream_tests.py).

- the harness's suite: what a downstream project writes, a folder with a two-line `lit.cfg.py`
  (`memref_runtime.lit.configure(config, lit_config)`) and upstream's `Integration/`,
  `mlir-runner/` and `python/` folders unchanged under `test/`;
- the reference: upstream's own `mlir/test/lit.cfg.py`, loaded by a `lit.site.cfg.py` made from
  upstream's `lit.site.cfg.py.in` with the values an LLVM build configured like Debian's
  installed LLVM (`/usr/lib/llvm-NN`, packages llvm-NN-dev, mlir-NN-tools) would write, and the
  MLIR Python bindings of the interpreter that runs the tests.

The archive (LLVM's `mlir/test` of one release) is read, never copied into the project. The
standard library only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

FOLDERS = ("Integration", "mlir-runner", "python")
HARNESS_LIT_CFG = "import memref_runtime.lit\nmemref_runtime.lit.configure(config, lit_config)\n"
# Nothing is required after the name: lit's stderr (a warning) can land on the same line, before
# its newline, when both streams go to one file. The rest of the line (" (12 of 502)", such a
# warning) is read with it: it is not the test's output, whose first line is an UNSUPPORTED reason.
RESULT_LINE = re.compile(
    r"^(PASS|FAIL|XFAIL|XPASS|UNSUPPORTED|UNRESOLVED|TIMEOUT|SKIPPED|EXCLUDED): (.+?) :: (\S+)[^\n]*",
    re.M,
)
# What the harness's report adds to a failure that a known defect of the toolchain explains.
TOOLCHAIN_MARKER = "memref-runtime: a known failure of the toolchain in use"


def _members(archive: tarfile.TarFile, prefix: str) -> list:
    return [m for m in archive.getmembers() if m.name == prefix.rstrip("/") or m.name.startswith(prefix)]


def unpack_harness_suite(archive_path: Path, suite: Path) -> Path:
    """`suite/lit.cfg.py` (two lines) and `suite/test/<folder>` for upstream's three folders."""
    suite.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive_path) as archive:
        for folder in FOLDERS:
            for member in _members(archive, f"mlir/test/{folder}/"):
                member.name = "test/" + member.name[len("mlir/test/") :]
                archive.extract(member, suite, filter="data")
    (suite / "lit.cfg.py").write_text(HARNESS_LIT_CFG)
    return suite


@dataclass(frozen=True)
class LLVMInstall:
    """An installed LLVM/MLIR (Debian's /usr/lib/llvm-NN) as upstream's site config needs it."""

    prefix: Path

    @property
    def bin(self) -> Path:
        return self.prefix / "bin"

    def config(self, *args: str) -> str:
        return subprocess.run([str(self.bin / "llvm-config"), *args], capture_output=True, text=True).stdout.strip()

    def has_target(self, name: str) -> bool:
        return name in self.config("--targets-built").split()


def site_values(install: LLVMInstall, source: Path, build: Path, python: str, bindings_targets: set) -> dict:
    """@NAME@ -> value in upstream's lit.site.cfg.py.in, for an LLVM build configured as `install`
    (its tools, libraries, triple, assertions), whose Python tests run `python`'s bindings (they
    decide the GPU conversions that Python tests exercise: `bindings_targets`)."""
    on = {True: "1", False: "0"}
    cc, cxx = shutil.which("cc") or "", shutil.which("c++") or ""
    return {
        "LLVM_TARGET_TRIPLE": install.config("--host-target"),
        "LLVM_SOURCE_DIR": str(source / "llvm"),
        "LLVM_TOOLS_DIR": str(install.bin),
        "LLVM_LIT_TOOLS_DIR": "",
        "LLVM_INCLUDE_SPIRV_TOOLS_TESTS": "0",
        "SHLIBEXT": ".so",
        "SHLIBDIR": str(install.prefix / "lib"),
        "Python3_EXECUTABLE": python,
        "ENABLE_ASSERTIONS": on[install.config("--assertion-mode") == "ON"],
        "EXPENSIVE_CHECKS": "",
        "LLVM_NATIVE_ARCH": {"x86_64": "X86", "aarch64": "AArch64"}.get(os.uname().machine, os.uname().machine),
        "HOST_OS": os.uname().sysname,
        "HOST_CC": cc,
        "HOST_CXX": cxx,
        "CMAKE_C_COMPILER_LAUNCHER": "",
        "CMAKE_CXX_COMPILER_LAUNCHER": "",
        "LLVM_ENABLE_LIBCXX": "",
        "CMAKE_COMMAND": shutil.which("cmake") or "",
        "CMAKE_GENERATOR": "Ninja",
        "CMAKE_BUILD_TYPE": "Release",
        "LLVM_USE_LINKER": "",
        "LLVM_USE_SANITIZER": "",
        "HOST_ARCH": os.uname().machine,
        "MLIR_SOURCE_DIR": str(source / "mlir"),
        "MLIR_BINARY_DIR": str(build),
        "MLIR_TOOLS_DIR": str(install.bin),
        "MLIR_CMAKE_DIR": str(install.prefix / "lib" / "cmake" / "mlir"),
        "MLIR_LIB_DIR": str(install.prefix / "lib"),
        "LLVM_BUILD_EXAMPLES": "0",
        "LLVM_HAS_NVPTX_TARGET": on[install.has_target("NVPTX")],
        "MLIR_ENABLE_ROCM_CONVERSIONS": on[install.has_target("AMDGPU") and "host-supports-amdgpu" in bindings_targets],
        "MLIR_GPU_COMPILATION_TEST_FORMAT": "fatbin",
        "ROCM_TEST_CHIPSET": "",
        "MLIR_ENABLE_BINDINGS_PYTHON": "1",
        "MLIR_INCLUDE_INTEGRATION_TESTS": "1",
        "BUILD_SHARED_LIBS": "0",
        "MLIR_RUN_RISCV_VECTOR_TESTS": "",
        # No GPU runner, hardware suite or emulator: a default build's.
        **dict.fromkeys(
            (
                "MLIR_ENABLE_CUDA_RUNNER",
                "MLIR_ENABLE_ROCM_RUNNER",
                "MLIR_ENABLE_XEVM_CONVERSIONS",
                "MLIR_ENABLE_SYCL_RUNNER",
                "MLIR_ENABLE_LEVELZERO_RUNNER",
                "MLIR_ENABLE_SPIRV_CPU_RUNNER",
                "MLIR_ENABLE_VULKAN_RUNNER",
                "MLIR_RUN_AMX_TESTS",
                "MLIR_RUN_ARM_SVE_TESTS",
                "MLIR_RUN_ARM_SME_TESTS",
                "MLIR_RUN_X86VECTOR_TESTS",
                "MLIR_RUN_CUDA_TENSOR_CORE_TESTS",
                "MLIR_RUN_CUDA_SM80_TESTS",
                "MLIR_RUN_CUDA_SM80_LT_TESTS",
                "MLIR_RUN_CUDA_SM90_TESTS",
            ),
            "0",
        ),
        **dict.fromkeys(
            (
                "INTEL_SDE_EXECUTABLE",
                "ARM_EMULATOR_EXECUTABLE",
                "ARM_EMULATOR_OPTIONS",
                "ARM_EMULATOR_MLIR_RUNNER_EXECUTABLE",
                "ARM_EMULATOR_LLI_EXECUTABLE",
                "ARM_EMULATOR_UTILS_LIB_DIR",
                "ARM_SME_ABI_ROUTINES_SHLIB",
                "RISCV_VECTOR_EMULATOR_EXECUTABLE",
                "RISCV_VECTOR_EMULATOR_OPTIONS",
                "RISCV_EMULATOR_LLI_EXECUTABLE",
                "RISCV_EMULATOR_UTILS_LIB_DIR",
            ),
            "",
        ),
    }


# What CMake's configure_lit_site_cfg puts first (LIT_SITE_CFG_IN_HEADER): the path() helper.
SITE_HEADER = """# Made by memref-runtime's benchmarks/upstream_suites.py from upstream's lit.site.cfg.py.in.
import os


def path(p):
    return os.path.abspath(p) if p else ""
"""


def unpack_reference(archive_path: Path, work: Path, install: LLVMInstall, python: str, bindings_targets: set) -> Path:
    """Upstream's tree under `work/src/mlir`, and `work/build/test/lit.site.cfg.py` for it; returns
    the build's test folder, where lit is pointed (`<it>/Integration`, ...)."""
    source, build = work / "src", work / "build"
    with tarfile.open(archive_path) as archive:
        archive.extractall(source, members=_members(archive, "mlir/"), filter="data")
    template = (source / "mlir" / "test" / "lit.site.cfg.py.in").read_text()
    values = site_values(install, source, build, python, bindings_targets)
    values["LIT_SITE_CFG_IN_HEADER"] = SITE_HEADER
    missing = sorted(set(re.findall(r"@(\w+)@", template)) - set(values))
    if missing:
        raise SystemExit(f"upstream's lit.site.cfg.py.in names values this script does not know: {missing}")
    tests = build / "test"
    for folder in FOLDERS:
        (tests / folder).mkdir(parents=True, exist_ok=True)
    (tests / "lit.site.cfg.py").write_text(re.sub(r"@(\w+)@", lambda m: values[m.group(1)], template))
    return tests


@dataclass
class Result:
    """One test: its result word and what lit printed for it (lit -a)."""

    code: str
    output: str = ""

    @property
    def toolchain_failure(self) -> bool:
        return self.code == "FAIL" and TOOLCHAIN_MARKER in self.output


def parse(text: str, strip: str = "") -> dict:
    """Test name (without the `strip` prefix) -> Result, from `lit -a` output."""
    results = {}
    matches = list(RESULT_LINE.finditer(text))
    for match, following in zip(matches, matches[1:] + [None]):
        end = following.start() if following else len(text)
        name = match.group(3)
        name = name[len(strip) :] if strip and name.startswith(strip) else name
        results[name] = Result(match.group(1), text[match.end() : end])
    return results


def folder_of(name: str) -> str:
    return name.split("/", 1)[0]


def counts(results: dict) -> dict:
    """Folder -> Counter of result words."""
    table: dict = defaultdict(Counter)
    for name, result in results.items():
        table[folder_of(name)][result.code] += 1
    return table


def unsupported_reason(name: str, result: Result, root: Path | None) -> str:
    """The reason of an UNSUPPORTED test, grouped: lit's missing features, the harness's reason
    (its first words), or the folder whose lit.local.cfg turned the test off."""
    body = [line.strip() for line in result.output.splitlines() if line.strip() and not line.startswith("*****")]
    first = body[0] if body else ""
    if first.startswith("Test requires the following unavailable features:"):
        return "requires " + first.split(":", 1)[1].strip()
    if first and first != "Test is unsupported":
        return re.sub(r"\s*\(.*", "", first)[:110]
    folder = Path(name).parent
    while root is not None and folder != Path(".") and not (root / folder / "lit.local.cfg").exists():
        folder = folder.parent
    return f"off in {folder}/lit.local.cfg"


@dataclass
class Comparison:
    """Two runs of the same tests: the reference's and the harness's results."""

    reference: dict
    harness: dict
    named: list = field(default_factory=list)

    def lost(self) -> list:
        """Tests the reference passes and the harness does not (named toolchain failures apart)."""
        return sorted(
            n
            for n, r in self.reference.items()
            if r.code == "PASS"
            and n in self.harness
            and self.harness[n].code != "PASS"
            and not self.harness[n].toolchain_failure
        )

    def both_run(self) -> list:
        skipped = ("UNSUPPORTED", "SKIPPED", "EXCLUDED")
        return sorted(
            n
            for n, r in self.reference.items()
            if r.code not in skipped and n in self.harness and self.harness[n].code not in skipped
        )
