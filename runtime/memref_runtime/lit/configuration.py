"""configure(): a lit suite's config, step by step (see memref_runtime.lit.configure for the options).

Each step is a function of the `Suite` being configured, run in this order (STEPS):

1. discover: name, suffixes, source root, excludes, exec root, the test format and its hooks;
2. choose_interpreter, probe_interpreter: the test interpreter, its PYTHONPATH (the site hook
   first), and what it imports (interpreter.py's Probe);
3. find_tools: FileCheck, not, count, MLIR tools, runner-utils libraries (toolchain.py);
4. add_substitutions, add_features: the harness's;
5. apply_settings, set_environment: the suite settings (-D opt_level, ...) and the tests' environment;
6. follow_upstream: upstream MLIR's conventions (memref_runtime.upstream, upstream_hook.py);
7. register_updater: lit --update-tests (memref_runtime.update_checks);
8. start_server: the pre-started interpreter behind %PYTHON, input recording, timing
   (server_step.py): last, as it rewrites %PYTHON and needs the final environment.
"""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import lit.util
from lit.llvm.subst import ToolSubst

from .. import environment, settings
from ..bindings import PROVIDERS, package_opt_tool
from ..process import SITE_HOOK
from ..upstream import compat as upstream_compat
from ..upstream import hardware as upstream_hardware
from ..upstream import site as upstream_site
from . import discovery, failure_report, local_configs, parallelism, server_step
from .interpreter import Probe, ProbeError, probe
from .parameters import Parameters
from .test_format import MemrefRuntimeShTest
from .toolchain import Toolchain, find_toolchain
from .upstream_hook import UpstreamHook

# The folder that holds the memref_runtime package: a source tree's runtime/, or site-packages.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNTIMES = ("upstream", "memref_runtime")
# The hosts ORC JIT runs these tests on; anything else gets no `host-supports-jit`.
JIT_MACHINES = {"x86_64", "amd64", "aarch64", "arm64"}
# Feature: the first MLIR major version that gives it. LLVM 22 assertion builds abort when
# lowering memref.load/store of i1, so tests with i1 memrefs require `mlir-i1-memref`.
MIN_MLIR_VERSION_FEATURES = {"mlir-i1-memref": 23}
# The suite settings: -D name -> (environment variable, parse, feature when set or None).
SUITE_SETTINGS: dict[str, tuple[str, Callable[[str, str], Any], Callable[[Any], str | None]]] = {
    "opt_level": (settings.OPT_LEVEL_ENV, settings.parse_opt_level, lambda v: f"opt-level-{v}"),
    "runtime_verification": (
        settings.RUNTIME_VERIFICATION_ENV,
        settings.parse_flag,
        lambda v: "runtime-verification" if v else None,
    ),
}


@dataclass
class Configured:
    """What configure() found and set, for a lit.cfg.py that wants to build on it."""

    python: str
    bindings: str
    mlir_major: int | None
    toolchain: Toolchain
    mlir_inputs: str | None
    exec_root: str
    features: set = field(default_factory=set)


@dataclass
class Options:
    """configure()'s keyword options (memref_runtime.lit.configure documents them)."""

    caller: str | None = None
    name: str | None = None
    test_dirs: list | None = None
    suffixes: tuple = discovery.DEFAULT_SUFFIXES
    mlir_inputs: Any = None
    excludes: tuple = ()
    substitutions: Any = ()
    features: tuple = ()
    pythonpath: tuple = ()
    source_root: Any = None


@dataclass
class Suite:
    """A suite being configured: lit's objects, the options, and what each step found so far."""

    config: Any
    lit_config: Any
    options: Options
    params: Parameters
    root: str = ""
    inputs: str | None = None
    python: str = ""
    bindings: str = "mlir"
    mlir_python_path: str | None = None
    test_pythonpath: list = field(default_factory=list)
    probe: Probe | None = None
    tools: Toolchain | None = None
    runtime: str = "upstream"

    def fatal(self, message: str) -> NoReturn:
        """Stops lit with `message`."""
        self.lit_config.fatal(message)
        raise SystemExit(2)  # as lit's fatal() does: a stand-in that returns must not go on either

    @property
    def probed(self) -> Probe:
        """What probe_interpreter found, for the steps after it."""
        if self.probe is None:
            raise RuntimeError("configure: the steps after probe_interpreter need its probe")
        return self.probe

    @property
    def toolchain(self) -> Toolchain:
        """What find_tools found, for the steps after it."""
        if self.tools is None:
            raise RuntimeError("configure: the steps after find_tools need its toolchain")
        return self.tools


def _under(folder: str, path) -> str | None:
    return None if path is None else os.path.normpath(os.path.join(folder, os.fspath(path)))


def _package_parent_needed() -> bool:
    """Whether the tests' PYTHONPATH needs the folder memref_runtime is in: not when that is a
    site-packages folder (a plain install), which the interpreter has anyway."""
    sites = [os.path.realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()]]
    return os.path.realpath(PACKAGE_PARENT) not in sites


def _suite_root(config, options: Options) -> str:
    """The folder relative paths start from: source_root=, a site config's, else lit.cfg.py's."""
    chosen = options.source_root or getattr(config, "test_source_root", None)
    if chosen:
        return os.path.abspath(os.fspath(chosen))
    return os.path.dirname(os.path.abspath(options.caller)) if options.caller else os.getcwd()


def _inputs_folder(suite: Suite) -> str | None:
    inputs = _under(suite.root, suite.options.mlir_inputs)
    if inputs is None and os.path.isdir(os.path.join(suite.root, "mlir_inputs")):
        inputs = os.path.join(suite.root, "mlir_inputs")
    if inputs is not None and not os.path.isdir(inputs):
        suite.fatal(f"configure(mlir_inputs=...): expected a folder, got {inputs!r}, which is not one")
    return inputs


def discover(suite: Suite) -> None:
    """Name, suffixes, source root, excludes, exec root; the test format and its hooks."""
    config, options = suite.config, suite.options
    suite.root = root = _suite_root(config, options)
    suite.inputs = _inputs_folder(suite)
    if options.test_dirs is not None:
        missing = [d for d in options.test_dirs if not os.path.isdir(os.path.join(root, d))]
        if missing:
            suite.fatal(f"configure(test_dirs=...): expected folders under {root}, got {missing}, which are not")
    preset = getattr(config, "name", None)
    config.name = options.name or (preset if preset not in (None, "<unnamed>") else os.path.basename(root))
    config.suffixes = list(options.suffixes)
    config.test_source_root = root
    config.excludes = discovery.excludes(
        root, options.test_dirs, suite.inputs, list(getattr(config, "excludes", [])) + list(options.excludes)
    )
    config.test_exec_root = discovery.exec_root(
        suite.params.get("exec_root"), getattr(config, "test_exec_root", None), root, suite.fatal
    )
    # As LLVM's lit configs: lit's internal shell unless LIT_USE_INTERNAL_SHELL says otherwise.
    internal = os.environ.get(environment.LIT_USE_INTERNAL_SHELL)
    config.test_format = MemrefRuntimeShTest(execute_external=bool(internal) and not lit.util.pythonize_bool(internal))
    local_configs.guard_local_configs(config)
    config.test_format.before_hooks.append(local_configs.local_config_error)
    failure_report.install(config.test_format)


def choose_interpreter(suite: Suite) -> None:
    """The test interpreter, the bindings it imports, and the tests' PYTHONPATH."""
    params, config = suite.params, suite.config
    suite.python = params.get("python") or getattr(config, "python_executable", None) or sys.executable
    suite.bindings = bindings = params.choice("mlir_python", PROVIDERS, os.environ.get(environment.BINDINGS) or "mlir")
    path = params.get("mlir_python_path") or getattr(config, "mlir_python_path", None)
    if path:
        if not os.path.isdir(os.path.join(path, bindings)):
            origin = "-D mlir_python_path" if "mlir_python_path" in params else "config.mlir_python_path (site config)"
            suite.fatal(
                f"{origin}: expected a folder holding the {bindings!r} package (an LLVM build's "
                f"tools/mlir/python_packages/mlir_core), got {path!r}"
            )
        path = os.path.abspath(path)
    suite.mlir_python_path = path
    # Ahead of site-packages: the site hook, the suite's own folders, memref_runtime where it is
    # not installed (a source tree), a build tree's MLIR, then what lit's environment had.
    suite.test_pythonpath = (
        [SITE_HOOK]
        + [_under(suite.root, p) for p in suite.options.pythonpath]
        + ([PACKAGE_PARENT] if _package_parent_needed() else [])
        + [p for p in (path, os.environ.get(environment.MLIR_LIT_PYTHONPATH), os.environ.get("PYTHONPATH")) if p]
    )


def probe_interpreter(suite: Suite) -> None:
    """What the test interpreter imports; without the bindings, a warning (an error if asked for)."""
    try:
        suite.probe = probe(suite.python, suite.bindings, suite.test_pythonpath[1:])
    except ProbeError as e:
        suite.fatal(str(e))
    if not suite.probe.bindings_dirs:
        message = f"{suite.python} cannot import the MLIR bindings package {suite.bindings!r}"
        asked = "mlir_python" in suite.params or "mlir_python_path" in suite.params
        (suite.fatal if asked else suite.lit_config.warning)(message)


def find_tools(suite: Suite) -> None:
    suite.tools = find_toolchain(
        suite.config, suite.params, suite.python, suite.probed, suite.mlir_python_path, suite.fatal
    )


def add_substitutions(suite: Suite) -> None:
    """The suite's own, FileCheck/not/count, %PYTHON and the tools' paths, %lower_to_llvm; PATH."""
    config, tools, extra = suite.config, suite.toolchain, suite.options.substitutions
    for key, value in extra.items() if isinstance(extra, dict) else extra:
        config.substitutions.append((key, value))
    for tool, command in (("FileCheck", tools.filecheck), ("not", tools.not_), ("count", tools.count)):
        config.substitutions.append((ToolSubst(tool, command=command).regex, command))
    quoted = upstream_compat.quoted
    paths = {
        "%PYTHON": suite.python,
        "%mlir_inputs": suite.inputs,
        "%mlir_runner_utils": tools.runner_utils["mlir_runner_utils"],
        "%mlir_c_runner_utils": tools.runner_utils["mlir_c_runner_utils"],
        "%mlir_opt": tools.mlir_tools["mlir-opt"],
        "%mlir_runner": tools.mlir_tools["mlir-runner"],
        "%mlir_translate": tools.mlir_tools["mlir-translate"],
    }
    # Longest key first, so that %mlir_runner does not eat the front of %mlir_runner_utils.
    for key in sorted(paths, key=len, reverse=True):
        if paths[key] is not None:
            config.substitutions.append((key, quoted(paths[key])))
    # Upstream-style .mlir tests name the tools bare (`mlir-opt %s ... | mlir-runner ...`).
    for tool, path in tools.mlir_tools.items():
        if path:
            config.substitutions.append((ToolSubst(tool, command=path).regex, quoted(path)))
    config.substitutions.append(("%lower_to_llvm", f'--pass-pipeline="{suite.probed.default_pipeline}"'))
    config.environment["PATH"] = os.pathsep.join(
        tools.tool_dirs + [config.environment.get("PATH") or os.environ.get("PATH", "")]
    )


def add_features(suite: Suite) -> None:
    """What the interpreter, the toolchain and the settings give (docs/lit-config.md's table)."""
    found, tools = suite.probed, suite.toolchain
    major = found.mlir_major
    suite.runtime = suite.params.choice("mlir_runtime", RUNTIMES, "upstream")
    present = {
        "host-supports-jit": found.jit and found.machine.lower() in JIT_MACHINES,
        "runner-utils": all(p and os.path.isfile(p) for p in tools.runner_utils.values()),
        "mlir-tools": all(tools.mlir_tools.values()),
        "mlir-python-path": suite.mlir_python_path is not None,
        "ml_dtypes": found.has_ml_dtypes,
        "torch": found.has_torch,
        "jax": found.has_jax,
        f"bindings-{suite.bindings}": bool(found.bindings_dirs),
        f"mlir-{major}": major is not None,
        f"filecheck-{tools.filecheck_kind}": True,
        f"runtime-{suite.runtime}": True,
        **{feature: major is not None and major >= v for feature, v in MIN_MLIR_VERSION_FEATURES.items()},
    }
    suite.config.available_features.update(feature for feature, on in present.items() if on)
    suite.config.available_features.update(suite.options.features)


def apply_settings(suite: Suite) -> None:
    """-D opt_level, -D runtime_verification (environment and features), the performance tests."""
    config, params, env = suite.config, suite.params, suite.config.environment
    for param, (variable, parse, feature) in SUITE_SETTINGS.items():
        value = params.parsed(param, parse)
        if value is not None:
            env[variable] = str(int(value))
            if feature(value):
                config.available_features.add(feature(value))
    # Performance tests (`REQUIRES: perf-tests`) time kernels against each other: on by default,
    # `-D perf_tests=0` skips them where timing means nothing (an emulator, a sanitizer build).
    # They run one at a time (parallelism.py).
    if params.parsed("perf_tests", settings.parse_flag) is not False:
        config.available_features.add(parallelism.PERF_FEATURE)
    parallelism.install(config, suite.lit_config)
    # `%opt_level`: the level in force, for checks that depend on it (--check-prefixes=CHECK,LEVEL%opt_level).
    config.substitutions.append(("%opt_level", env.get(settings.OPT_LEVEL_ENV, str(settings.DEFAULT_OPT_LEVEL))))


def set_environment(suite: Suite) -> None:
    """What the tests' processes read: memref_runtime.environment's variables, PYTHONPATH, ..."""
    env, runner_utils = suite.config.environment, suite.toolchain.runner_utils
    # Libraries named with -D are also what the tests' in-process JIT links by default.
    if {"mlir_runner_utils", "mlir_c_runner_utils"} & set(suite.lit_config.params):
        env[environment.RUNNER_UTILS] = os.pathsep.join(
            p for p in (runner_utils["mlir_c_runner_utils"], runner_utils["mlir_runner_utils"]) if p
        )
    env["PYTHONPATH"] = os.pathsep.join(suite.test_pythonpath)
    if suite.mlir_python_path:
        env[environment.MLIR_PYTHON_PATH] = suite.mlir_python_path
    if suite.inputs:
        env[environment.MLIR_INPUTS] = suite.inputs
    env[environment.BINDINGS] = suite.bindings
    env[environment.MLIR_RUNTIME] = suite.runtime  # the site hook installs the aliases it asks for
    # Stdout unbuffered, as stderr: under `2>&1 | FileCheck` the output keeps the order of events,
    # and a case that crashes loses nothing it printed before.
    env["PYTHONUNBUFFERED"] = "1"
    for variable in ("HOME", "DYLD_LIBRARY_PATH"):
        if variable in os.environ:
            env[variable] = os.environ[variable]
    # lit runs a test per core already: a test's OpenBLAS (NumPy's) gets one thread, unless lit's
    # environment (or the site config) says how many. Every `import numpy` starts OpenBLAS's pool,
    # whose threads spin a while: CPU that no test asked for (docs/speed.md).
    env.setdefault(environment.OPENBLAS_NUM_THREADS, os.environ.get(environment.OPENBLAS_NUM_THREADS, "1"))


def follow_upstream(suite: Suite) -> None:
    """Upstream MLIR's substitutions, features and site attributes, the hardware suites -D asks
    for, and the per-test check (with its note on a toolchain's known defects after a failure)."""
    config, tools = suite.config, suite.toolchain
    libraries = tools.runner_utils
    c_runner_utils = libraries["mlir_c_runner_utils"]
    setup = upstream_compat.configure(
        config,
        suite.lit_config,
        lib_dirs=tools.search["mlir_libs"],
        library_dir=os.path.dirname(c_runner_utils) if c_runner_utils else None,
        libraries=libraries,
        tools={**tools.mlir_tools, "lli": tools.lli, "FileCheck": tools.filecheck},
        llvm_tools_dirs=tools.search["llvm_tools"],
        bindings_tool=package_opt_tool(suite.bindings, suite.probed.bindings_dirs),
        bindings_llvm_dirs=[os.path.join(d, "bin") for d in suite.probed.llvm_dirs],
        suite_root=suite.root,
        python_version=suite.probed.python_version or None,
    )
    hook = UpstreamHook(setup)
    config.test_format.before_hooks.append(hook)
    config.test_format.after_hooks.append(hook.after)
    llvm_tools_dir = os.path.dirname(tools.filecheck) if os.path.isabs(tools.filecheck) else None
    attributes = upstream_site.site_attributes(setup, suite.python, llvm_tools_dir, tools.mlir_tools["mlir-opt"])
    upstream_site.apply(config, attributes)
    try:
        cpu = setup.cpu or upstream_hardware.host()
        upstream_site.apply_switches(config, upstream_hardware.switches(suite.params, cpu))
    except ValueError as e:
        suite.fatal(str(e))
    config.available_features.update(upstream_site.site_features(config))


def register_updater(suite: Suite) -> None:
    """`lit --update-tests` rewrites CHECK lines with memref-update-checks' rules."""
    if getattr(suite.lit_config, "update_tests", False):
        from ..update_checks import register_test_updater

        register_test_updater(suite.lit_config)


def start_server(suite: Suite) -> None:
    server_step.configure(suite.config, suite.lit_config, suite.lit_config.params, settings.parse_flag)


STEPS: tuple[Callable[[Suite], None], ...] = (
    discover,
    choose_interpreter,
    probe_interpreter,
    find_tools,
    add_substitutions,
    add_features,
    apply_settings,
    set_environment,
    follow_upstream,
    register_updater,
    start_server,
)


def configure(config: Any, lit_config: Any, **options: Any) -> Configured:
    """Runs STEPS on `config`; returns what was found."""
    suite = Suite(config, lit_config, Options(**options), Parameters(lit_config))
    for step in STEPS:
        step(suite)
    lit_config.dbg(f"memref-runtime features: {sorted(config.available_features)}")
    lit_config.dbg(f"memref-runtime substitutions: {config.substitutions}")
    return Configured(
        python=suite.python,
        bindings=suite.bindings,
        mlir_major=suite.probed.mlir_major,
        toolchain=suite.toolchain,
        mlir_inputs=suite.inputs,
        exec_root=config.test_exec_root,
        features=set(config.available_features),
    )
