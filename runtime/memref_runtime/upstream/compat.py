"""Upstream MLIR's lit conventions for the suite: substitutions, features, test-only passes.

Runs in lit's own interpreter (nothing here imports numpy or MLIR). `configure()` runs once per
lit run: it probes the LLVM builds in use, adds upstream's substitutions and features to the
config (add_substitutions, add_features, pass_environment, find_test_passes) and returns an
`UpstreamSetup`, the plain data that the before hook of lit/upstream_hook.py reads for each
test. docs/upstream-compat.md is the user's view of the same tables.

The spellings follow upstream's mlir/test/lit.cfg.py and the lit.local.cfg files of
mlir/test/Integration (LLVM 22).
"""

from __future__ import annotations

import errno
import os
import platform
import re
import shutil
import sys
from dataclasses import dataclass, field
from types import SimpleNamespace

from .. import environment
from ..probe_cache import (
    tool_output as run_tool,  # --version/--help, kept while the tool is unchanged
)
from . import capabilities, hardware, source_tree

SHLIB_EXT = {"win32": ".dll", "darwin": ".dylib"}.get(sys.platform, ".so")
SHLIB_PREFIX = "" if sys.platform == "win32" else "lib"

# Substitution -> runtime library (upstream's add_runtime()/find_runtime() names). The
# %native_* ones are what Integration/lit.local.cfg defines for emulated AArch64 runs; without
# an emulator they are the host's libraries.
RUNTIME_LIBRARIES = {
    "%mlir_runner_utils": "mlir_runner_utils",
    "%mlir_c_runner_utils": "mlir_c_runner_utils",
    "%mlir_async_runtime": "mlir_async_runtime",
    "%mlir_float16_utils": "mlir_float16_utils",
    "%mlir_apfloat_wrappers": "mlir_apfloat_wrappers",
    "%mlir_arm_runner_utils": "mlir_arm_runner_utils",
    "%arm_sme_abi_shlib": "mlir_arm_sme_abi_stubs",
    "%native_mlir_runner_utils": "mlir_runner_utils",
    "%native_mlir_c_runner_utils": "mlir_c_runner_utils",
    "%native_mlir_arm_runner_utils": "mlir_arm_runner_utils",
    "%native_arm_sme_abi_shlib": "mlir_arm_sme_abi_stubs",
    "%mlir_cuda_runtime": "mlir_cuda_runtime",
    "%mlir_rocm_runtime": "mlir_rocm_runtime",
    "%mlir_sycl_runtime": "mlir_sycl_runtime",
    "%mlir_levelzero_runtime": "mlir_levelzero_runtime",
    "%mlir_vulkan_runtime": "mlir_vulkan_runtime",
    "%mlir_spirv_cpu_runtime": "mlir_spirv_cpu_runtime",
}

# Substitution -> the folder it names. Upstream's find_runtime() looks in llvm_shlib_dir, so
# that is where the runtime libraries are, as %mlir_lib_dir is.
LIBRARY_DIR_SUBSTITUTIONS = ("%mlir_lib_dir", "%llvm_shlib_dir", "%mlir_native_utils_lib_dir")

# Substitution -> fixed text: what upstream's Integration lit.local.cfg files define on a host
# without Arm SVE/SME hardware or emulator (SparseTensor's VLA switches).
FIXED_SUBSTITUTIONS = {
    "%shlibext": SHLIB_EXT,
    "%ENABLE_VLA": "false",
    "%VLA_ARCH_ATTR_OPTIONS": "",
}

# Substitution -> tool it runs (lit.local.cfg files of LLVMIR/CPU, Vector/CPU/X86, the Arm
# folders; %mcr_aarch64_cmd is mlir-runner when no AArch64 emulator is configured).
TOOL_SUBSTITUTIONS = {"%lli": "lli", "%mcr_aarch64_cmd": "mlir-runner"}

# Substitution -> lit parameter that gives it: paths into an llvm-project checkout, which no
# installed toolchain knows (%mlir_src_dir has a default: source_tree.py), and the compilers
# LLVM was built with (the system's by default; a test that needs one where there is none is
# UNSUPPORTED, not failed).
PARAMETER_SUBSTITUTIONS = {
    "%mlir_src_root": "mlir_src_root",
    "%mlir_src_dir": "mlir_src_dir",
    "%llvm_src_root": "llvm_src_root",
    "%host_cxx": "host_cxx",
    "%host_cc": "host_cc",
}
COMPILERS = {"host_cc": "a C compiler", "host_cxx": "a C++ compiler"}
# lit.llvm's use_default_substitutions(): lit's own interpreter and the system's error messages.
ERRC_SUBSTITUTIONS = {
    "%errc_ENOENT": errno.ENOENT,
    "%errc_EISDIR": errno.EISDIR,
    "%errc_EINVAL": errno.EINVAL,
    "%errc_EACCES": errno.EACCES,
}

# Environment switches of LLVM/MLIR that change what a test does, passed from lit's own
# environment to the tests (lit passes FILECHECK_OPTS itself; listed so that it stays so).
# HOME, INCLUDE, LIB, TMP and TEMP: what MLIR's lit.cfg.py passes with with_system_environment().
PASSED_ENVIRONMENT = (
    environment.FILECHECK_OPTS,
    "LLVM_SYMBOLIZER_PATH",
    "LLVM_PROFILE_FILE",
    environment.MLIR_LIT_PYTHONPATH,
    "HOME",
    "INCLUDE",
    "LIB",
    "TMP",
    "TEMP",
)
# What MLIR's own lit.cfg.py sets when the environment does not: FileCheck scopes variables
# to a CHECK-LABEL block, and a --check-prefixes entry no line uses is an error.
MLIR_FILECHECK_OPTS = "-enable-var-scope --allow-unused-prefixes=false"
# Environment variable -> what MLIR's lit.cfg.py adds to every mlir-opt and FileCheck command
# (the first one set wins, as there).
TOOL_FLAGS_BY_ENVIRONMENT = (
    (environment.MLIR_OPT_CHECK_IR_ROUNDTRIP, " --verify-roundtrip", ""),
    (
        environment.MLIR_GENERATE_PATTERN_CATALOG,
        " --debug-only=pattern-logging-listener --mlir-disable-threading",
        " --dump-input=always",
    ),
)

# A same-version mlir-opt with MLIR's test passes (registerTestPasses) lists this one.
TEST_PASS_MARKER = "test-lower-to-llvm"
# Where an mlir-opt with test passes is looked for, after -D test_pass_mlir_opt=PATH.
TEST_PASS_MLIR_OPT_CANDIDATES = ("/usr/lib/llvm-{major}/bin/mlir-opt", "mlir-opt-{major}")

LLVM_VERSION = re.compile(r"LLVM version (\S+)")
DEFAULT_TARGET = re.compile(r"Default target: (\S+)")


@dataclass(frozen=True)
class LLVMBuild:
    """One LLVM build as its tools report it: version, assertions, target triple."""

    tool: str | None
    version: str | None = None
    asserts: bool | None = None
    triple: str | None = None
    triple_from: str = "unknown"

    def describe(self) -> str:
        asserts = {True: "with assertions", False: "no assertions", None: "assertions unknown"}[self.asserts]
        return f"LLVM {self.version or '?'} ({asserts}, {self.triple} from {self.triple_from}) of {self.tool}"


@dataclass(frozen=True)
class MlirOpt:
    """An mlir-opt and the test-only passes/options (`test-*`) its --help lists."""

    path: str
    version: str | None
    test_options: frozenset

    @property
    def has_test_passes(self) -> bool:
        return TEST_PASS_MARKER in self.test_options

    def command(self, flags: str = "") -> str:
        """This mlir-opt as a RUN line's words, with the flags the run adds to every mlir-opt
        (UpstreamSetup.mlir_opt_flags)."""
        return quoted(self.path) + flags


@dataclass
class UpstreamSetup:
    """What the before hook needs: missing substitutions, tools, test passes, features per kind."""

    # substitution -> why it is missing (what was looked for, where).
    missing: dict = field(default_factory=dict)
    # substitution -> why a test that uses it cannot run here (UNSUPPORTED, not failed).
    unavailable: dict = field(default_factory=dict)
    # bare tool name -> its path, or None where the toolchain has none.
    tools: dict = field(default_factory=dict)
    mlir_opt: MlirOpt | None = None
    test_pass_alternatives: list = field(default_factory=list)
    # Why each candidate for test passes was not taken (shown in UNSUPPORTED reasons).
    test_pass_rejected: list = field(default_factory=list)
    wanted_version: str | None = None
    # The LLVM version of the bindings (the Python test passes run on them).
    bindings_version: str | None = None
    # What MLIR's lit.cfg.py adds to every mlir-opt command, by environment (pass_environment).
    mlir_opt_flags: str = ""
    # Features of the tools' LLVM (the config's) and of the bindings' LLVM, for .py tests.
    tools_features: frozenset = frozenset()
    bindings_features: frozenset = frozenset()
    # What the site-config attributes are made of (upstream_site.py).
    tools_build: LLVMBuild | None = None
    source_roots: dict = field(default_factory=dict)
    library_dir: str | None = None
    # The LLVM version of the suite's tools, for what the failure report names (toolchain_defects).
    tools_version: str | None = None
    # This CPU and its features (hardware.py), for the CPU features RUN lines ask for.
    cpu: hardware.Host | None = None


def guessed_triple() -> str:
    """The triple LLVM's default configuration gives this host (when no tool can tell)."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64" if sys.platform != "darwin" else "arm64"}.get(machine, machine)
    system = {"darwin": "apple-darwin", "win32": "pc-windows-msvc"}.get(sys.platform, "unknown-linux-gnu")
    return f"{machine}-{system}"


def probe_llvm_build(tool: str | None, helper_dirs: list) -> LLVMBuild:
    """Version and assertions from `tool --version`; the triple from a same-version
    llvm-config or llc next to it (or in `helper_dirs`), else guessed from the host."""
    if not tool:
        return LLVMBuild(None, triple=guessed_triple(), triple_from="the host (no LLVM tool)")
    out = run_tool([tool, "--version"])
    found_version = LLVM_VERSION.search(out)
    version = found_version.group(1) if found_version else None
    asserts = ("with assertions" in out) if version else None
    target = DEFAULT_TARGET.search(out)
    if target:
        return LLVMBuild(tool, version, asserts, target.group(1), tool)
    for folder in dict.fromkeys([os.path.dirname(tool)] + [d for d in helper_dirs if d]):
        config_tool = os.path.join(folder, "llvm-config")
        if os.access(config_tool, os.X_OK) and run_tool([config_tool, "--version"]).strip() == version:
            triple = run_tool([config_tool, "--host-target"]).strip()
            if triple:
                return LLVMBuild(tool, version, asserts, triple, config_tool)
        llc = os.path.join(folder, "llc")
        if os.access(llc, os.X_OK):
            out = run_tool([llc, "--version"])
            found, target = LLVM_VERSION.search(out), DEFAULT_TARGET.search(out)
            if found and target and found.group(1) == version:
                return LLVMBuild(tool, version, asserts, target.group(1), llc)
    return LLVMBuild(tool, version, asserts, guessed_triple(), "the host (no llvm-config of that build)")


def llvm_config_features(lit_config, triple: str) -> frozenset:
    """The features lit's LLVMConfig derives from a host/target triple (system-*, target=...)."""
    from lit.llvm.config import LLVMConfig

    scratch = SimpleNamespace(
        available_features=set(),
        environment={"PATH": os.environ.get("PATH", "")},
        host_triple=triple,
        target_triple=triple,
    )
    LLVMConfig(lit_config, scratch)
    return frozenset(scratch.available_features)


def build_features(lit_config, build: LLVMBuild) -> frozenset:
    """Features that describe `build`: LLVMConfig's for its triple, asserts or noasserts."""
    features = set(llvm_config_features(lit_config, build.triple or guessed_triple()))
    if build.asserts is not None:
        features.add("asserts" if build.asserts else "noasserts")
    return frozenset(features)


def probe_mlir_opt(path: str | None) -> MlirOpt | None:
    if not path:
        return None
    version = LLVM_VERSION.search(run_tool([path, "--version"]))
    options = re.findall(r"^\s+--?(test-[\w-]+)", run_tool([path, "--help"]), re.M)
    return MlirOpt(path, version.group(1) if version else None, frozenset(options))


def test_pass_alternatives(primary: MlirOpt | None, version: str | None, given: str | None):
    """Same-version mlir-opts with test passes other than `primary`, and why others were not."""
    if given == "none":
        return [], ["-D test_pass_mlir_opt=none: no other mlir-opt is looked for"]
    major = (version or "").split(".")[0]
    candidates = [given] if given else [c.format(major=major) for c in TEST_PASS_MLIR_OPT_CANDIDATES] if major else []
    found, rejected = [], []
    # The suite's own mlir-opt is no alternative, unless named (then the reason says why not).
    seen = {os.path.realpath(primary.path)} if primary and not given else set()
    for candidate in candidates:
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if not path or not os.access(path, os.X_OK):
            rejected.append(f"{candidate}: not found")
            continue
        if os.path.realpath(path) in seen:
            continue
        seen.add(os.path.realpath(path))
        opt = probe_mlir_opt(path)
        assert opt is not None  # path is not empty
        if opt.version != version:
            rejected.append(f"{path}: LLVM {opt.version}, not {version}")
        elif not opt.has_test_passes:
            rejected.append(f"{path}: built without MLIR's test passes")
        else:
            found.append(opt)
    return found, rejected


def find_library(name: str, lib_dirs: list) -> str | None:
    for folder in lib_dirs:
        for prefix in dict.fromkeys((SHLIB_PREFIX, "")):
            path = os.path.join(folder, f"{prefix}{name}{SHLIB_EXT}")
            if os.path.isfile(path):
                return path
    return None


def quoted(path: str) -> str:
    """`path` as one word of a RUN line."""
    return f'"{path}"' if " " in path else path


class _Substitutions:
    """Adds substitutions to a config that lacks them, or records why one is missing."""

    def __init__(self, config, setup: UpstreamSetup):
        self.config, self.setup = config, setup
        self.defined = {key for key, _ in config.substitutions if isinstance(key, str)}

    def add(self, key: str, value: str | None, why_missing: str) -> None:
        if key in self.defined:
            return
        if value is None:
            self.setup.missing[key] = why_missing
        else:
            self.config.substitutions.append((key, value))
            self.defined.add(key)


def _source_roots(params, suite_root: str) -> dict:
    """Paths into an llvm-project checkout (`-D`, else what source_tree.py finds for
    %mlir_src_dir) and the host compilers; `test_copy` where the suite's folder is upstream's test/."""
    given = params.get("mlir_src_root")
    found = source_tree.source_root(suite_root)
    roots = {
        "mlir_src_root": given or (found.root if found.holds_copy else None),
        "mlir_src_dir": given or found.root,
        "test_copy": None if given else found.test_copy,
    }
    if given:
        roots["llvm_src_root"] = os.path.join(os.path.dirname(os.path.abspath(given)), "llvm")
    roots.update({k: params[k] for k in ("llvm_src_root",) if k in params})
    roots.update(source_tree.host_compilers(params))
    return roots


def add_substitutions(
    config,
    setup: UpstreamSetup,
    params,
    *,
    lib_dirs: list,
    library_dir: str | None,
    tools: dict,
    libraries: dict,
    suite_root: str,
) -> None:
    """Upstream's substitutions the suite does not define yet (RUNTIME_LIBRARIES and the tables below it)."""
    subs = _Substitutions(config, setup)
    where = ", ".join(lib_dirs) or "no library folder (no runner-utils library was found)"
    for key, name in RUNTIME_LIBRARIES.items():
        path = libraries.get(name) or find_library(name, lib_dirs)
        subs.add(
            key,
            path and quoted(path),
            f"{SHLIB_PREFIX}{name}{SHLIB_EXT} was looked for in {where}; the toolchain in use does not ship it",
        )
    for key in LIBRARY_DIR_SUBSTITUTIONS:
        subs.add(key, library_dir and quoted(library_dir), "no folder of MLIR runtime libraries was found")
    for key, value in FIXED_SUBSTITUTIONS.items():
        subs.add(key, value, "")
    for key, tool in TOOL_SUBSTITUTIONS.items():
        path = tools.get(tool)
        subs.add(key, path and quoted(path), f"the toolchain in use has no {tool}")
    setup.source_roots = roots = _source_roots(params, suite_root)
    if roots["test_copy"]:
        # The suite's folder is upstream's test/ under another name: %mlir_src_dir/test/ is it.
        subs.add("%mlir_src_dir/test/", quoted(os.path.join(roots["test_copy"], "")), "")
    for key, param in PARAMETER_SUBSTITUTIONS.items():
        if param in COMPILERS and roots.get(param) is None:
            if key not in subs.defined:
                setup.unavailable[key] = (
                    f"needs {COMPILERS[param]} ({key}): none was found "
                    f"({', '.join(source_tree.SYSTEM_COMPILERS[param])} on PATH); "
                    f"pass lit -D {param}=PATH"
                )
            continue
        subs.add(
            key,
            roots.get(param) and quoted(roots[param]),
            f"it names a path no installed toolchain knows: pass lit -D {param}=...",
        )
    subs.add("%PATH%", config.environment.get("PATH", ""), "")
    subs.add("%python", quoted(sys.executable), "")
    for key, code in ERRC_SUBSTITUTIONS.items():
        subs.add(key, f"'{os.strerror(code)}'", "")


def add_features(
    config,
    lit_config,
    setup: UpstreamSetup,
    *,
    tools: dict,
    llvm_tools_dirs: list,
    bindings_tool: str | None,
    bindings_llvm_dirs: list,
    python_version: tuple | None,
) -> LLVMBuild:
    """Features, as LLVM's lit config adds them, from the LLVM of the tools (.mlir tests and the
    suite as a whole) and of the bindings (.py tests), with the GPU targets each was built with
    and the tests' Python version (python-ge-3NN); returns the bindings' LLVM build."""
    tools_build = probe_llvm_build(tools.get("mlir-opt") or tools.get("mlir-runner") or bindings_tool, llvm_tools_dirs)
    bindings_build = probe_llvm_build(bindings_tool, bindings_llvm_dirs) if bindings_tool else tools_build
    config.host_triple = config.target_triple = tools_build.triple
    import lit.llvm

    lit.llvm.initialize(lit_config, config)  # system-*, host=/target=, native, ...; llvm_config
    tools_opt = tools.get("mlir-opt") or bindings_tool
    setup.tools_features = build_features(lit_config, tools_build) | capabilities.gpu_target_features(tools_opt)
    setup.bindings_features = build_features(lit_config, bindings_build) | capabilities.gpu_target_features(
        bindings_tool or tools_opt
    )
    config.available_features.update(setup.tools_features)
    if python_version:
        config.available_features.update(capabilities.python_features(python_version))
    lit_config.dbg(f"upstream-compat: tools {tools_build.describe()}; bindings {bindings_build.describe()}")
    setup.tools_build = tools_build
    setup.tools_version = tools_build.version
    return bindings_build


def pass_environment(config, setup: UpstreamSetup, filecheck: str | None) -> None:
    """LLVM's environment switches reach the tests; FileCheck gets MLIR's defaults; as MLIR's
    lit.cfg.py, MLIR_OPT_CHECK_IR_ROUNDTRIP makes every mlir-opt run check that its output parses
    back and MLIR_GENERATE_PATTERN_CATALOG makes it log the patterns it applies."""
    for variable in PASSED_ENVIRONMENT:
        if os.environ.get(variable):
            config.environment[variable] = os.environ[variable]
    config.environment.setdefault(environment.FILECHECK_OPTS, MLIR_FILECHECK_OPTS)
    _, opt_flags, filecheck_flags = next(
        (entry for entry in TOOL_FLAGS_BY_ENVIRONMENT if entry[0] in os.environ), (None, "", "")
    )
    setup.mlir_opt_flags = opt_flags
    from lit.llvm.subst import ToolSubst

    if opt_flags and setup.mlir_opt:
        command = setup.mlir_opt.command(opt_flags)
        config.substitutions[:0] = [(ToolSubst("mlir-opt").regex, command), ("%mlir_opt", command)]
    if filecheck_flags and filecheck:
        config.substitutions.insert(0, (ToolSubst("FileCheck").regex, filecheck + filecheck_flags))


def find_test_passes(config, setup: UpstreamSetup, params, bindings_build: LLVMBuild) -> None:
    """Test-only passes: the suite's mlir-opt, else a same-version one that has them."""
    setup.wanted_version = setup.mlir_opt.version if setup.mlir_opt else bindings_build.version
    setup.bindings_version = bindings_build.version
    setup.test_pass_alternatives, setup.test_pass_rejected = test_pass_alternatives(
        setup.mlir_opt, setup.wanted_version, params.get("test_pass_mlir_opt")
    )
    if (setup.mlir_opt and setup.mlir_opt.has_test_passes) or setup.test_pass_alternatives:
        config.available_features.add("mlir-test-passes")


def configure(
    config,
    lit_config,
    *,
    lib_dirs: list,
    library_dir: str | None,
    tools: dict,
    llvm_tools_dirs: list,
    bindings_tool: str | None,
    bindings_llvm_dirs: list,
    libraries: dict | None = None,
    suite_root: str | None = None,
    python_version: tuple | None = None,
) -> UpstreamSetup:
    """Add upstream's substitutions and features to `config`; return what the before hook needs.

    `lib_dirs`: where runtime libraries are looked for, first hit wins; `library_dir`: the
    folder of the runner-utils libraries in use; `libraries`: library name -> the path the suite
    chose already (the runner-utils ones, which `-D` may name), taken before any search;
    `tools`: bare tool name -> path or None (the suite's mlir-opt, mlir-runner, ..., lli,
    FileCheck); `bindings_tool`: the bindings' own opt tool; `suite_root`: the suite's folder
    (where a copy of upstream's test/ is looked for); `python_version`: the tests' (major, minor).
    """
    params = lit_config.params
    setup = UpstreamSetup(tools=dict(tools), cpu=hardware.host())
    lib_dirs = [d for d in lib_dirs if d and os.path.isdir(d)]
    setup.library_dir = library_dir or next(iter(lib_dirs), None)
    add_substitutions(
        config,
        setup,
        params,
        lib_dirs=lib_dirs,
        library_dir=setup.library_dir,
        tools=tools,
        libraries=libraries or {},
        suite_root=suite_root or os.getcwd(),
    )
    bindings_build = add_features(
        config,
        lit_config,
        setup,
        tools=tools,
        llvm_tools_dirs=llvm_tools_dirs,
        bindings_tool=bindings_tool,
        bindings_llvm_dirs=bindings_llvm_dirs,
        python_version=python_version,
    )
    setup.mlir_opt = probe_mlir_opt(tools.get("mlir-opt"))
    pass_environment(config, setup, tools.get("FileCheck"))
    find_test_passes(config, setup, params, bindings_build)
    return setup
