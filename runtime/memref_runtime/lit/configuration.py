"""configure(): a lit suite's config, step by step (see memref_runtime.lit.configure for the options).

1. discovery: name, suffixes, source root, excludes, exec root (discovery.py);
2. the test interpreter and what it imports (interpreter.py), its PYTHONPATH (the site hook first);
3. the toolchain: FileCheck, not, count, MLIR tools, runner-utils libraries (toolchain.py);
4. substitutions and features of the harness;
5. the suite settings (-D opt_level, -D runtime_verification) and the tests' environment;
6. upstream MLIR's conventions (upstream_compat.py, upstream_hook.py, upstream_site.py);
7. lit --update-tests (memref_runtime.update_checks);
8. the pre-started interpreter behind %PYTHON, input recording, timing (server.py): last, as it
   rewrites %PYTHON and needs the final environment.
"""

from __future__ import annotations

import os
import site
import sys
from dataclasses import dataclass, field

from lit.llvm.subst import ToolSubst

from .. import environment, settings
from ..bindings import PROVIDERS, package_opt_tool
from ..process import SITE_HOOK
from ..toolchain import Toolchain, find_toolchain
from ..upstream import compat as upstream_compat
from ..upstream import site as upstream_site
from . import discovery, failure_report, local_configs, parallelism, server_step
from .interpreter import ProbeError, probe
from .parameters import Parameters
from .test_format import MemrefRuntimeShTest
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
SUITE_SETTINGS = {
    "opt_level": (settings.OPT_LEVEL_ENV, settings.parse_opt_level, lambda v: f"opt-level-{v}"),
    "runtime_verification": (settings.RUNTIME_VERIFICATION_ENV, settings.parse_flag,
                             lambda v: "runtime-verification" if v else None),
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


def _under(folder: str, path) -> str | None:
    return None if path is None else os.path.normpath(os.path.join(folder, os.fspath(path)))


def _package_parent_needed() -> bool:
    """Whether the tests' PYTHONPATH needs the folder memref_runtime is in: not when that is a
    site-packages folder (a plain install), which the interpreter has anyway."""
    sites = [os.path.realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()]]
    return os.path.realpath(PACKAGE_PARENT) not in sites


def configure(config, lit_config, *, caller: str | None, name: str | None = None, test_dirs=None,
              suffixes=discovery.DEFAULT_SUFFIXES, mlir_inputs=None, excludes=(), substitutions=(),
              features=(), pythonpath=(), source_root=None) -> Configured:
    params = Parameters(lit_config)
    fatal = lit_config.fatal

    # 1. Discovery.
    root = os.path.abspath(os.fspath(source_root) if source_root else getattr(config, "test_source_root", None)
                           or (os.path.dirname(os.path.abspath(caller)) if caller else os.getcwd()))
    inputs = _under(root, mlir_inputs)
    if inputs is None and os.path.isdir(os.path.join(root, "mlir_inputs")):
        inputs = os.path.join(root, "mlir_inputs")
    if inputs is not None and not os.path.isdir(inputs):
        fatal(f"configure(mlir_inputs=...): expected a folder, got {inputs!r}, which is not one")
    if test_dirs is not None:
        missing = [d for d in test_dirs if not os.path.isdir(os.path.join(root, d))]
        if missing:
            fatal(f"configure(test_dirs=...): expected folders under {root}, got {missing}, which are not")
    preset = getattr(config, "name", None)
    config.name = name or (preset if preset not in (None, "<unnamed>") else os.path.basename(root))
    config.suffixes = list(suffixes)
    config.test_source_root = root
    config.excludes = discovery.excludes(root, test_dirs, inputs, list(getattr(config, "excludes", [])) + list(excludes))
    config.test_exec_root = discovery.exec_root(params.get("exec_root"), getattr(config, "test_exec_root", None),
                                                root, fatal)
    config.test_format = MemrefRuntimeShTest()
    local_configs.guard_local_configs(config)
    config.test_format.before_hooks.append(local_configs.local_config_error)
    failure_report.install(config.test_format)

    # 2. The interpreter.
    python = params.get("python") or getattr(config, "python_executable", None) or sys.executable
    bindings = params.choice("mlir_python", PROVIDERS, os.environ.get(environment.BINDINGS) or "mlir")
    mlir_python_path = params.get("mlir_python_path") or getattr(config, "mlir_python_path", None)
    if mlir_python_path:
        if not os.path.isdir(os.path.join(mlir_python_path, bindings)):
            origin = "-D mlir_python_path" if "mlir_python_path" in params else "config.mlir_python_path (site config)"
            fatal(f"{origin}: expected a folder holding the {bindings!r} package (an LLVM build's "
                  f"tools/mlir/python_packages/mlir_core), got {mlir_python_path!r}")
        mlir_python_path = os.path.abspath(mlir_python_path)
    # Ahead of site-packages: the site hook, the suite's own folders, memref_runtime where it is
    # not installed (a source tree), a build tree's MLIR, then what lit's environment had.
    test_pythonpath = [SITE_HOOK] + [_under(root, p) for p in pythonpath] + (
        [PACKAGE_PARENT] if _package_parent_needed() else []) + [
        p for p in (mlir_python_path, os.environ.get("PYTHONPATH")) if p]
    try:
        found = probe(python, bindings, test_pythonpath[1:])
    except ProbeError as e:
        fatal(str(e))
    if not found["bindings_dirs"]:
        message = f"{python} cannot import the MLIR bindings package {bindings!r}"
        (fatal if "mlir_python" in params or "mlir_python_path" in params else lit_config.warning)(message)

    # 3. The toolchain.
    tools = find_toolchain(config, params, python, found, mlir_python_path, fatal)

    # 4. Substitutions and features.
    for key, value in (substitutions.items() if isinstance(substitutions, dict) else substitutions):
        config.substitutions.append((key, value))
    for tool, command in (("FileCheck", tools.filecheck), ("not", tools.not_), ("count", tools.count)):
        config.substitutions.append((ToolSubst(tool, command=command).regex, command))
    quoted = upstream_compat.quoted
    paths = {
        "%PYTHON": python,
        "%mlir_inputs": inputs,
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
    config.substitutions.append(("%lower_to_llvm", f'--pass-pipeline="{found["default_pipeline"]}"'))
    config.environment["PATH"] = os.pathsep.join(
        tools.tool_dirs + [config.environment.get("PATH") or os.environ.get("PATH", "")])

    mlir_major = found["mlir_major"]
    runtime = params.choice("mlir_runtime", RUNTIMES, "upstream")
    present = {
        "host-supports-jit": found["jit"] and found["machine"].lower() in JIT_MACHINES,
        "runner-utils": all(p and os.path.isfile(p) for p in tools.runner_utils.values()),
        "mlir-tools": all(tools.mlir_tools.values()),
        "mlir-python-path": mlir_python_path is not None,
        "ml_dtypes": found["has_ml_dtypes"],
        "torch": found.get("has_torch", False),
        "jax": found.get("has_jax", False),
        f"bindings-{bindings}": bool(found["bindings_dirs"]),
        f"mlir-{mlir_major}": mlir_major is not None,
        f"filecheck-{tools.filecheck_kind}": True,
        f"runtime-{runtime}": True,
        **{feature: mlir_major is not None and mlir_major >= v for feature, v in MIN_MLIR_VERSION_FEATURES.items()},
    }
    config.available_features.update(feature for feature, on in present.items() if on)
    config.available_features.update(features)

    # 5. Suite settings and the tests' environment.
    env = config.environment
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
    parallelism.install(config, lit_config)
    # `%opt_level`: the level in force, for checks that depend on it (--check-prefixes=CHECK,LEVEL%opt_level).
    config.substitutions.append(("%opt_level", env.get(settings.OPT_LEVEL_ENV, str(settings.DEFAULT_OPT_LEVEL))))
    # Libraries named with -D are also what the tests' in-process JIT links by default.
    if {"mlir_runner_utils", "mlir_c_runner_utils"} & set(lit_config.params):
        env[environment.RUNNER_UTILS] = os.pathsep.join(
            p for p in (tools.runner_utils["mlir_c_runner_utils"], tools.runner_utils["mlir_runner_utils"]) if p)
    env["PYTHONPATH"] = os.pathsep.join(test_pythonpath)
    if mlir_python_path:
        env[environment.MLIR_PYTHON_PATH] = mlir_python_path
    if inputs:
        env[environment.MLIR_INPUTS] = inputs
    env[environment.BINDINGS] = bindings
    env[environment.MLIR_RUNTIME] = runtime  # the site hook installs the aliases it asks for
    # Stdout unbuffered, as stderr: under `2>&1 | FileCheck` the output keeps the order of events,
    # and a case that crashes loses nothing it printed before.
    env["PYTHONUNBUFFERED"] = "1"
    for variable in ("HOME", "DYLD_LIBRARY_PATH"):
        if variable in os.environ:
            env[variable] = os.environ[variable]

    # 6. Upstream MLIR's conventions.
    libraries = tools.runner_utils
    setup = upstream_compat.configure(
        config, lit_config,
        lib_dirs=tools.search["mlir_libs"],
        library_dir=os.path.dirname(libraries["mlir_c_runner_utils"]) if libraries["mlir_c_runner_utils"] else None,
        libraries=libraries,
        tools={**tools.mlir_tools, "lli": tools.lli},
        llvm_tools_dirs=tools.search["llvm_tools"],
        bindings_tool=package_opt_tool(bindings, found["bindings_dirs"]),
        bindings_llvm_dirs=[os.path.join(d, "bin") for d in found["llvm_dirs"]],
    )
    config.test_format.before_hooks.append(UpstreamHook(setup))
    llvm_tools_dir = os.path.dirname(tools.filecheck) if os.path.isabs(tools.filecheck) else None
    upstream_site.apply(config, upstream_site.site_attributes(setup, python, llvm_tools_dir,
                                                              tools.mlir_tools["mlir-opt"]))

    # 7. lit --update-tests.
    if getattr(lit_config, "update_tests", False):
        from ..update_checks import register_test_updater

        register_test_updater(lit_config)

    # 8. The server behind %PYTHON, input recording, timing.
    server_step.configure(config, lit_config, lit_config.params, settings.parse_flag)

    lit_config.dbg(f"memref-runtime features: {sorted(config.available_features)}")
    lit_config.dbg(f"memref-runtime substitutions: {config.substitutions}")
    return Configured(python=python, bindings=bindings, mlir_major=mlir_major, toolchain=tools,
                      mlir_inputs=inputs, exec_root=config.test_exec_root, features=set(config.available_features))
