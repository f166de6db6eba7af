"""Shared helpers: compile small MLIR kernels with the ExecutionEngine, and MLIR features."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: serial tests are not isolated
    fcntl = None

# Property tests (tests/test_properties.py) run under a profile: "ci" by default, a few hundred
# examples in all; `pytest --hypothesis-profile=long tests/test_properties.py` runs 10,000 per
# property. No deadline: the first example of a kernel JIT-compiles it.
settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("long", max_examples=10_000, deadline=None)

RUNTIME_DIR = Path(__file__).resolve().parent.parent / "runtime"

# Enough to lower func/arith/scf/cf/memref/complex kernels (strided views included) to LLVM.
PIPELINE = (
    "builtin.module(expand-strided-metadata,convert-scf-to-cf,convert-complex-to-llvm,"
    "finalize-memref-to-llvm,convert-arith-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,"
    "reconcile-unrealized-casts)"
)

# MLIR major version that first lowers memref.load/store of i1 without aborting the
# process (LLVM 22 assertion builds fail `integralElementType.getWidth() >= 8`).
MIN_MLIR_FOR_I1_MEMREF = 23

try:
    from mlir.execution_engine import ExecutionEngine
    from mlir.ir import Context, Module
    from mlir.passmanager import PassManager

    from memref_runtime.bindings import mlir_major_version

    HAVE_JIT = True
except ImportError:  # pragma: no cover - depends on the environment
    HAVE_JIT = False


MLIR_MAJOR = mlir_major_version() if HAVE_JIT else None


def pytest_configure(config):
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile("ci")
    run_in_parallel_by_default(config)
    config.addinivalue_line(
        "markers", "serial: runs alone: no other test runs meanwhile, also under pytest -n (RSS, timing)")
    config.addinivalue_line(
        "markers",
        f"mlir_i1_memref: needs MLIR >= {MIN_MLIR_FOR_I1_MEMREF} to lower memref.load/store of i1")
    config.addinivalue_line("markers", "jit: compiles and runs MLIR with the ExecutionEngine")
    config.addinivalue_line(
        "markers", "harness: tests of the lit harness's machinery (lit, CMake, pytest, the tools run in "
                   "subprocesses); the same on every Python and provider, so .ci/run's 3.10 and torch-mlir "
                   "routes deselect them (-m 'not harness') and run the lit suite itself there instead")


def run_in_parallel_by_default(config) -> None:
    """`pytest` alone (the whole suite) runs on every core, with one worker more than `-n auto`
    (pytest-xdist, if installed); a run of chosen files or tests stays in one process unless -n
    says otherwise.
    Runs before xdist's own pytest_configure, which starts the workers."""
    if (not config.pluginmanager.hasplugin("xdist") or hasattr(config, "workerinput")
            or config.args_source != pytest.Config.ArgsSource.TESTPATHS
            or config.option.numprocesses is not None or config.option.tx or config.option.dist != "no"
            or config.getoption("usepdb", False) or config.getoption("collectonly", False)):
        return
    workers = config.hook.pytest_xdist_auto_num_workers(config=config)
    if workers > 1:
        # One worker more than cores, unless PYTEST_XDIST_AUTO_NUM_WORKERS says how many: a
        # sixth of the suite's time is tests waiting on a timeout or a subprocess (lit
        # --timeout, memref-update-checks --timeout, a probe that hangs), during which a
        # worker leaves its core idle. On 2 cores: 62 s against 66 s (docs/speed.md).
        if not os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
            workers += 1
        # worksteal: an idle worker takes tests queued for a busy one (our lit and CMake tests
        # are long, the others short).
        config.option.numprocesses, config.option.dist = workers, "worksteal"
        config.option.tx = ["popen"] * workers


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    item._next_item = nextitem  # serial_tests_run_alone keeps its lock for a serial next test


_held_exclusively: list = []  # the two lock fds a run of serial tests holds on this worker


@pytest.fixture(autouse=True)
def serial_tests_run_alone(request, tmp_path_factory):
    """Under pytest -n, a test marked `serial` runs while no other test does; others share.

    Two file locks shared by the workers (their temporary folders' common parent): a test takes
    the turnstile, then the run lock shared, or exclusive if serial, so a waiting serial test
    lets no new test start before it (no starvation). Serial tests come first in the order
    (pytest_collection_modifyitems), and a worker keeps the exclusive lock from one serial test
    to the next, so they run as one block instead of each waiting for the other workers'
    current tests. Without xdist this costs nothing."""
    if fcntl is None or not hasattr(request.config, "workerinput"):
        yield
        return
    folder = tmp_path_factory.getbasetemp().parent
    serial = request.node.get_closest_marker("serial") is not None
    if serial:
        if not _held_exclusively:
            _held_exclusively.extend(_lock(folder / name, fcntl.LOCK_EX) for name in ("turnstile.lock", "run.lock"))
        yield
        following = getattr(request.node, "_next_item", None)
        if following is None or following.get_closest_marker("serial") is None:
            while _held_exclusively:
                os.close(_held_exclusively.pop())
        return
    with _flock(folder / "turnstile.lock", fcntl.LOCK_EX) as turnstile, \
            _flock(folder / "run.lock", fcntl.LOCK_SH):
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        yield


def _lock(path, mode) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, mode)
    return fd


@contextlib.contextmanager
def _flock(path, mode):
    fd = _lock(path, mode)
    try:
        yield fd
    finally:
        os.close(fd)


def pytest_collection_modifyitems(config, items):
    no_i1 = pytest.mark.skip(
        reason=f"MLIR {MLIR_MAJOR} < {MIN_MLIR_FOR_I1_MEMREF}: lowering memref.load/store of i1 "
        "aborts the process (assertion `integralElementType.getWidth() >= 8`)")
    no_jit = pytest.mark.skip(reason="no MLIR Python bindings with an ExecutionEngine")
    # Serial tests first, in one block (see serial_tests_run_alone); the rest keep their order.
    items.sort(key=lambda item: item.get_closest_marker("serial") is None)
    for item in items:
        if "mlir_i1_memref" in item.keywords and (MLIR_MAJOR or 0) < MIN_MLIR_FOR_I1_MEMREF:
            item.add_marker(no_i1)
        if "jit" in item.keywords and not HAVE_JIT:
            item.add_marker(no_jit)


def make_pytest_project(root: Path, files: dict[str, str]) -> Path:
    """A throw-away pytest project in `root`: a pytest.ini (so `root` is its rootdir) and `files`
    ({path: text})."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pytest.ini").write_text("[pytest]\n")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def run_pytest(project: Path, *args: str, timeout: float = 120, env: dict | None = None) -> subprocess.CompletedProcess:
    """pytest in a fresh interpreter, in `project`, with the memref-runtime plugin as an installed
    memref-runtime turns it on (loaded by name where only PYTHONPATH has the runtime). The suite
    settings the outer run may have set are left out, so that each run starts from the defaults."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_") and k not in (
        "MEMREF_RUNTIME_OPT_LEVEL", "MEMREF_RUNTIME_VERIFICATION")}
    plugin = []
    if not any(e.name == "memref_runtime" for e in importlib.metadata.entry_points(group="pytest11")):
        plugin = ["-p", "memref_runtime.pytest_plugin"]
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(RUNTIME_DIR), environment.get("PYTHONPATH")]))
    environment.update(env or {})
    # Hypothesis' pytest plugin alone costs each run 0.5 s of imports; these projects do not use it.
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                           *plugin, *args], cwd=project, capture_output=True, text=True, timeout=timeout,
                          env=environment)


def run_once(request, tmp_path_factory, name: str, run) -> subprocess.CompletedProcess:
    """`run(folder)` (a CompletedProcess) once per session, by whichever xdist worker asks first
    (a lock in the folder the workers share); the others read its result. For a module-scoped
    fixture whose tests xdist spreads over several workers."""
    shared = tmp_path_factory.getbasetemp()
    if hasattr(request.config, "workerinput"):
        shared = shared.parent
    result = shared / f"once-{name}.json"
    with contextlib.ExitStack() as stack:
        if fcntl is not None:
            stack.enter_context(_flock(shared / f"once-{name}.lock", fcntl.LOCK_EX))
        if not result.exists():
            (shared / f"once-{name}").mkdir()
            done = run(shared / f"once-{name}")
            result.write_text(json.dumps([done.args, done.returncode, done.stdout, done.stderr]))
    return subprocess.CompletedProcess(*json.loads(result.read_text()))


def make_lit_suite(root: Path, tests: dict[str, str]) -> Path:
    """A throw-away copy of the suite in `root`: this repo's lit.cfg.py, runtime/ and mlir_inputs/
    (linked), lit_tests/lit.local.cfg, and `tests` ({path under lit_tests/: text})."""
    repo = RUNTIME_DIR.parent
    (root / "lit_tests").mkdir(parents=True, exist_ok=True)
    shutil.copy(repo / "lit.cfg.py", root / "lit.cfg.py")
    for shared in ("runtime", "mlir_inputs"):
        (root / shared).symlink_to(repo / shared)
    shutil.copy(repo / "lit_tests" / "lit.local.cfg", root / "lit_tests" / "lit.local.cfg")
    for name, text in tests.items():
        (root / "lit_tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "lit_tests" / name).write_text(text)
    return root


def compile_mlir(source: str, callbacks: dict | None = None, opt_level: int = 2):
    """Parse, lower and JIT `source`; register `callbacks` ({name: CFUNCTYPE object})."""
    with Context():
        module = Module.parse(source)
        PassManager.parse(PIPELINE).run(module.operation)
        engine = ExecutionEngine(module, opt_level=opt_level)
    # The engine calls the trampolines later: they must live as long as it does.
    engine._test_callbacks = dict(callbacks or {})
    for name, callback in engine._test_callbacks.items():
        engine.register_runtime(name, callback)
    return engine


def memref_arg(descriptor):
    """The `descriptor**` a C-interface function takes for a memref argument."""
    return ctypes.pointer(ctypes.pointer(descriptor))


def run_python(code: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run `code` in a fresh interpreter with the runtime importable."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=timeout, env=_subprocess_env())


def _subprocess_env():
    import os
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(RUNTIME_DIR), env.get("PYTHONPATH")]))
    return env


# Every element type the runtime supports, as (MLIR name, NumPy dtype); ml_dtypes ones if present.
def supported_element_types() -> list[tuple[str, np.dtype]]:
    table = [
        ("i1", np.dtype(np.bool_)),
        ("i8", np.dtype(np.int8)), ("i16", np.dtype(np.int16)),
        ("i32", np.dtype(np.int32)), ("i64", np.dtype(np.int64)),
        ("i8", np.dtype(np.uint8)), ("i16", np.dtype(np.uint16)),
        ("i32", np.dtype(np.uint32)), ("i64", np.dtype(np.uint64)),
        ("f16", np.dtype(np.float16)), ("f32", np.dtype(np.float32)), ("f64", np.dtype(np.float64)),
        ("complex<f32>", np.dtype(np.complex64)), ("complex<f64>", np.dtype(np.complex128)),
    ]
    try:
        import ml_dtypes
    except ImportError:  # pragma: no cover
        return table
    return table + [
        ("bf16", np.dtype(ml_dtypes.bfloat16)),
        ("f8E5M2", np.dtype(ml_dtypes.float8_e5m2)),
        ("f8E4M3", np.dtype(ml_dtypes.float8_e4m3)),
        ("f8E3M4", np.dtype(ml_dtypes.float8_e3m4)),
        ("f8E4M3FN", np.dtype(ml_dtypes.float8_e4m3fn)),
    ]


def sample_values(dtype: np.dtype, n: int) -> np.ndarray:
    """`n` distinct-ish values of `dtype`, exactly representable (small integers, halves)."""
    if dtype == np.bool_:
        return np.arange(n) % 3 == 0
    if dtype.kind in "iu":
        return (np.arange(n) % 100 + 1).astype(dtype)
    if dtype.kind == "c":
        return (np.arange(n) % 8 + 0.5 - 1j * (np.arange(n) % 5)).astype(dtype)
    # floats, including ml_dtypes' (kind 'V' for some versions): halves up to 7 fit every f8.
    return ((np.arange(n) % 15) * 0.5 - 3.0).astype(np.float32).astype(dtype)


# What NumPy -> memref -> NumPy must keep: the view itself.
def address_of(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def aligned_address(desc) -> int:
    return ctypes.cast(desc.aligned, ctypes.c_void_p).value or 0


def assert_same_view(result: np.ndarray, original: np.ndarray):
    """Same dtype, shape, byte strides, first-element address and bytes: the same view."""
    assert result.dtype == original.dtype
    assert result.shape == original.shape
    assert result.strides == original.strides
    assert address_of(result) == address_of(original)
    assert result.tobytes() == original.tobytes()
    if original.size:
        assert np.shares_memory(result, original)


def assert_descriptor_matches(desc, array: np.ndarray):
    """The documented NumPy -> memref choice: both pointers at the first element, offset 0."""
    assert desc.allocated == aligned_address(desc) == address_of(array)
    assert desc.offset == 0
    if array.ndim:
        assert list(desc.shape) == list(array.shape)
        assert [s * array.itemsize for s in desc.strides] == list(array.strides)


# --- an LLVM build tree's layout, for the routes that take MLIR from one --------------------

MLIR_TOOLS = ("mlir-opt", "mlir-runner", "mlir-translate")
MLIR_CORE = Path("tools", "mlir", "python_packages", "mlir_core")  # where a build keeps `mlir`


def installed_mlir() -> Path | None:
    """The folder of the `mlir` package from the LLVM wheels, if its tools and runner-utils
    libraries are there."""
    spec = importlib.util.find_spec("mlir")
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location)
        if all((path / "bin" / tool).is_file() for tool in MLIR_TOOLS) and all(
                (path / "lib" / f"lib{lib}.so").is_file() for lib in ("mlir_runner_utils", "mlir_c_runner_utils")):
            return path
    return None


@pytest.fixture(scope="session")
def build_tree(tmp_path_factory) -> Path:
    """An LLVM build tree's layout (bin/, lib/, tools/mlir/python_packages/mlir_core/mlir),
    made of links to the installed wheel: this machine has no LLVM build of its own."""
    mlir = installed_mlir() if (os.environ.get("MEMREF_RUNTIME_BINDINGS") or "mlir") == "mlir" else None
    if mlir is None:
        pytest.skip("the mlir wheel with its tools and runner-utils libraries is not installed")
    tree = tmp_path_factory.mktemp("llvm-build")
    for folder in (tree / MLIR_CORE, tree / "bin", tree / "lib"):
        folder.mkdir(parents=True)
    (tree / MLIR_CORE / "mlir").symlink_to(mlir, target_is_directory=True)
    for tool in MLIR_TOOLS:
        (tree / "bin" / tool).symlink_to(mlir / "bin" / tool)
    for lib in (mlir / "lib").iterdir():  # the runner utils and the libraries they load
        (tree / "lib" / lib.name).symlink_to(lib)
    return tree


# --- a DLPack producer of our own: what the protocol lets a producer do, and a deleter that counts ---

class DLPackProducer:
    """A DLPack producer over `array` (a NumPy array), built by hand from dlpack.h's structs:
    `versioned=False` is a producer from before DLPack 1.0 (its __dlpack__ takes no
    max_version); `device`, `flags`, `dtype` (code, bits, lanes), `major`, `row_major` (NULL
    strides) and `byte_offset` say what it reports. `deleted` counts the calls of its deleter,
    `capsules` holds what it handed out (they have no destructor: a capsule nobody took is
    never released)."""

    def __init__(self, array, *, versioned=True, device=(1, 0), flags=0, dtype=None, major=1, row_major=False,
                 byte_offset=0):
        from memref_runtime import dlpack as dl
        from memref_runtime.element_types import dlpack_type_for_dtype

        self.array, self.versioned, self.dl_device, self.flags, self.major = array, versioned, device, flags, major
        self.dtype_code = dtype or dlpack_type_for_dtype(array.dtype)
        self.row_major, self.byte_offset = row_major, byte_offset
        self.deleted, self.capsules = 0, []
        self._structs = []  # what a consumer may read until it calls the deleter
        self._deleter = dl.DELETER(self._delete)  # alive as long as the producer
        self._dl = dl
        if not versioned:  # the old signature, without max_version
            self.__dlpack__ = lambda stream=None: self._export(False)

    def _delete(self, address):
        self.deleted += 1

    @property
    def dtype(self):  # as a framework's array has them, for error messages
        from memref_runtime.element_types import dlpack_type_for_dtype

        same = self.dtype_code == dlpack_type_for_dtype(self.array.dtype)
        return self.array.dtype if same else self._dl.type_name(*self.dtype_code)

    @property
    def shape(self):
        return self.array.shape

    def __dlpack_device__(self):
        return self.dl_device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        return self._export(max_version is not None and max_version[0] >= 1)

    def _export(self, versioned: bool):
        dl, a = self._dl, self.array
        managed = (dl.DLManagedTensorVersioned if versioned else dl.DLManagedTensor)()
        dims = (ctypes.c_int64 * (2 * a.ndim))(*a.shape, *(s // a.itemsize for s in a.strides))
        tensor = managed.dl_tensor
        tensor.data = a.__array_interface__["data"][0] - self.byte_offset
        tensor.byte_offset = self.byte_offset
        tensor.device.device_type, tensor.device.device_id = self.dl_device
        tensor.ndim = a.ndim
        tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes = self.dtype_code
        tensor.shape = ctypes.addressof(dims) if a.ndim else None
        tensor.strides = ctypes.addressof(dims) + 8 * a.ndim if a.ndim and not self.row_major else None
        managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        if versioned:
            managed.version.major, managed.version.minor = self.major, 0
            managed.flags = self.flags
        self._structs.append((managed, dims))
        new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
            ("PyCapsule_New", ctypes.pythonapi))
        self.capsules.append(new(ctypes.addressof(managed), dl.VERSIONED if versioned else dl.LEGACY, None))
        return self.capsules[-1]


def capsule_name(capsule) -> bytes:
    """The name a PyCapsule has now (a consumer renames the capsules it takes)."""
    get = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", ctypes.pythonapi))
    return get(capsule)
