"""pytest-xdist workers: the whole suite on every core, `serial` tests alone, work done once per session."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: serial tests are not isolated
    fcntl = None

# The test that runs after this one on this worker (pytest_runtest_protocol's `nextitem`).
NEXT_ITEM = pytest.StashKey["pytest.Item | None"]()

_held_exclusively: list[int] = []  # the two lock fds a run of serial tests holds on this worker


def run_in_parallel_by_default(config: pytest.Config) -> None:
    """`pytest` alone (the whole suite) runs on every core, with one worker more than `-n auto`
    (pytest-xdist, if installed); a run of chosen files or tests stays in one process unless -n
    says otherwise.
    Runs before xdist's own pytest_configure, which starts the workers."""
    if (
        not config.pluginmanager.hasplugin("xdist")
        or hasattr(config, "workerinput")
        or config.args_source != pytest.Config.ArgsSource.TESTPATHS
        or config.option.numprocesses is not None
        or config.option.tx
        or config.option.dist != "no"
        or config.getoption("usepdb", False)
        or config.getoption("collectonly", False)
    ):
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


def serial_first(items: list[pytest.Item]) -> None:
    """Puts the tests marked `serial` first, in one block; the others keep their order."""
    items.sort(key=lambda item: item.get_closest_marker("serial") is None)


@contextlib.contextmanager
def alone_if_serial(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Under pytest -n, a test marked `serial` runs while no other test does; others share.

    Two file locks shared by the workers (their temporary folders' common parent): a test takes
    the turnstile, then the run lock shared, or exclusive if serial, so a waiting serial test
    lets no new test start before it (no starvation). Serial tests come first in the order
    (serial_first), and a worker keeps the exclusive lock from one serial test to the next, so
    they run as one block instead of each waiting for the other workers' current tests. Without
    xdist this costs nothing."""
    if fcntl is None or not hasattr(request.config, "workerinput"):
        yield
        return
    folder = tmp_path_factory.getbasetemp().parent
    if request.node.get_closest_marker("serial") is not None:
        if not _held_exclusively:
            _held_exclusively.extend(_lock(folder / name, fcntl.LOCK_EX) for name in ("turnstile.lock", "run.lock"))
        yield
        following = request.node.stash.get(NEXT_ITEM, None)
        if following is None or following.get_closest_marker("serial") is None:
            while _held_exclusively:
                os.close(_held_exclusively.pop())
        return
    with _flock(folder / "turnstile.lock", fcntl.LOCK_EX) as turnstile, _flock(folder / "run.lock", fcntl.LOCK_SH):
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        yield


def run_once(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    run: Callable[[Path], subprocess.CompletedProcess],
) -> subprocess.CompletedProcess:
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


def _lock(path: Path, mode: int) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, mode)
    return fd


@contextlib.contextmanager
def _flock(path: Path, mode: int) -> Iterator[int]:
    fd = _lock(path, mode)
    try:
        yield fd
    finally:
        os.close(fd)
