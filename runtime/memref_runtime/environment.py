"""Every environment variable memref-runtime reads or sets, with what it means.

The harness hands its settings from lit's (or pytest's) process to the test processes through
the environment: lit's configure() and the pytest plugin set these, the site hook, the runtime
and the test helpers read them. They are named here once; each module imports the name it uses.
One exception: pyserver/client.py, a script that starts with `python -I -S` and imports nothing
of the package, keeps its own copies (tests/test_layout.py checks that they are the same).

Nothing here imports anything: the site hook of every test process reads this module.
"""

from __future__ import annotations

# -- settings of the suite: what `lit -D ...` and the pytest options choose ------------------
BINDINGS = "MEMREF_RUNTIME_BINDINGS"
MLIR_RUNTIME = "MEMREF_RUNTIME_MLIR_RUNTIME"
MLIR_PYTHON_PATH = "MEMREF_RUNTIME_MLIR_PYTHON_PATH"
OPT_LEVEL = "MEMREF_RUNTIME_OPT_LEVEL"
RUNTIME_VERIFICATION = "MEMREF_RUNTIME_VERIFICATION"
RUNNER_UTILS = "MEMREF_RUNTIME_RUNNER_UTILS"
MLIR_INPUTS = "MLIR_INPUTS"

# -- the test process and its report ------------------------------------------------------------
REPORT = "MEMREF_RUNTIME_REPORT"
REPORT_PIPES = "MEMREF_RUNTIME_REPORT_PIPES"
TIMING = "MEMREF_RUNTIME_TIMING"
CANDIDATE = "MEMREF_RUNTIME_CANDIDATE"

# -- the pre-started interpreter ----------------------------------------------------------------
PYTHON_SERVER_DIR = "MEMREF_RUNTIME_PYTHON_SERVER_DIR"
PYTHON_SERVER_OWNER = "MEMREF_RUNTIME_PYTHON_SERVER_OWNER"

# -- caches -------------------------------------------------------------------------------------
PROBE_CACHE = "MEMREF_RUNTIME_PROBE_CACHE"
JIT_CACHE_SIZE = "MEMREF_RUNTIME_JIT_CACHE_SIZE"
JIT_CACHE_STATS = "MEMREF_RUNTIME_JIT_CACHE_STATS"

# -- LLVM's and lit's, read here --------------------------------------------------------------
LIT_CURRENT_TESTCASE = "LIT_CURRENT_TESTCASE"
EXPECTED_CRASH = "LLVM_DISABLE_SYMBOLIZATION"
MLIR_OPT_CHECK_IR_ROUNDTRIP = "MLIR_OPT_CHECK_IR_ROUNDTRIP"
FILECHECK_OPTS = "FILECHECK_OPTS"
MLIR_LIT_PYTHONPATH = "MLIR_LIT_PYTHONPATH"
MLIR_GENERATE_PATTERN_CATALOG = "MLIR_GENERATE_PATTERN_CATALOG"
LIT_USE_INTERNAL_SHELL = "LIT_USE_INTERNAL_SHELL"
PYTEST_CURRENT_TEST = "PYTEST_CURRENT_TEST"

# -- other libraries', set here -----------------------------------------------------------------
OPENBLAS_NUM_THREADS = "OPENBLAS_NUM_THREADS"

# name -> what it means: docs/lit-config.md's table of the environment is made from this one.
VARIABLES = {
    BINDINGS: "which MLIR Python package `mlir` is: mlir (the wheels, default) or torch_mlir (-D mlir_python, "
    "--mlir-python)",
    MLIR_RUNTIME: "which `mlir.runtime` tests import: upstream (default) or memref_runtime (-D mlir_runtime, "
    "--mlir-runtime)",
    MLIR_PYTHON_PATH: "an LLVM build's python_packages/mlir_core folder, whose `mlir` the tests use "
    "(-D mlir_python_path)",
    OPT_LEVEL: "the LLVM opt level of every JitModule and testing engine that does not pin one (-D opt_level, "
    "--mlir-opt-level)",
    RUNTIME_VERIFICATION: "1: MLIR's runtime checks in every kernel (-D runtime_verification, "
    "--mlir-runtime-verification)",
    RUNNER_UTILS: "the runner-utils libraries the in-process JIT links by default, os.pathsep-separated "
    "(-D mlir_runner_utils, -D mlir_c_runner_utils)",
    MLIR_INPUTS: "the suite's folder of shared MLIR modules (%mlir_inputs), read by testing.parse_input",
    REPORT: "the folder of a test's failure report; set per test by lit's before hook, read by the site hook",
    REPORT_PIPES: "dev:ino of the pipes a report copier reads, so that a child process is not copied twice",
    TIMING: "a folder where each test process writes where its time went (-D timing)",
    CANDIDATE: "set by memref-reduce when it reruns a test: the JitModule of one module takes a candidate instead "
    "(<sha>:<source|lowered>:<opt level>:<path>)",
    PYTHON_SERVER_DIR: "the lit run's private folder of pre-started interpreters (-D python_server=1)",
    PYTHON_SERVER_OWNER: "the pid whose end ends the pre-started interpreters",
    PROBE_CACHE: "0: do not keep what probes of tools and interpreters learned in ~/.cache/memref-runtime",
    JIT_CACHE_SIZE: "how many linked engines a process keeps for reuse (default 32; 0: no reuse)",
    JIT_CACHE_STATS: "a folder where each process writes the JIT cache's hits and misses at exit (<pid>.json)",
    LIT_CURRENT_TESTCASE: "lit's name of the running test (read for reports)",
    EXPECTED_CRASH: "set by `not --crash`: the command is meant to crash, so it runs in a fresh interpreter",
    MLIR_OPT_CHECK_IR_ROUNDTRIP: "as in MLIR's own lit config: every mlir-opt run adds --verify-roundtrip",
    FILECHECK_OPTS: "FileCheck's extra options; MLIR's own defaults when unset",
    MLIR_LIT_PYTHONPATH: "as in MLIR's own lit config: folders put on the tests' PYTHONPATH",
    MLIR_GENERATE_PATTERN_CATALOG: "as in MLIR's own lit config: mlir-opt logs the patterns it applies "
    "(--debug-only=pattern-logging-listener) and FileCheck dumps its input",
    LIT_USE_INTERNAL_SHELL: "as in LLVM's lit configs: 0 runs the RUN lines in the external shell (default: lit's own)",
    PYTEST_CURRENT_TEST: "pytest's id of the running test (read for the command a check_against failure prints)",
    OPENBLAS_NUM_THREADS: "the threads of NumPy's OpenBLAS in lit's test processes: 1, unless lit's own environment "
    "sets it (lit runs a test per core already)",
}
