"""An exception raised in a ctypes callback during a test fails that test, with its traceback.

ctypes only prints such an exception (sys.unraisablehook; pytest turns it into a
PytestUnraisableExceptionWarning) and hands the native code an undefined result. The recorder of
memref_runtime.callback_exceptions, which `memref_runtime.testing.run` and lit's test processes
use, collects them; at the end of each phase of a test (setup, call, teardown) the ones raised
during it fail the phase with CallbackException, chained to the first one, so pytest shows its
traceback, if the test asked for memref-runtime's checks (else a warning: scope.py). In an
isolated test the child checks its own call (isolation.py).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from ..process import callback_exceptions
from . import scope


def recorder() -> callback_exceptions.Recorder:
    """This process's recorder, wrapping whatever sys.unraisablehook is now (pytest's own, once it
    is configured: pytest's hook does not call the one it replaced)."""
    return callback_exceptions.install()


def check(recorder: callback_exceptions.Recorder, item: pytest.Item, when: str) -> None:
    """Raises CallbackException, from the first of them, if callbacks raised since the last check
    (a warning instead, where `item` did not ask for memref-runtime's checks: scope.py)."""
    __tracebackhide__ = True  # pytest shows the callback's traceback, not the plugin's frames
    pending = recorder.take_pending()
    if pending:
        error = callback_exceptions.callback_error(pending, f"{item.nodeid} ({when})")
        if not scope.asked(item):
            scope.warn(item, str(error))
            return
        raise error from pending[0]


class CallbackCheck:
    """The hooks: each phase of each test checks the callbacks that raised during it."""

    def __init__(self) -> None:
        self.recorder = recorder()

    def _checked(self, item: pytest.Item, when: str) -> Generator[None, Any, Any]:
        __tracebackhide__ = True
        try:
            result = yield
        except BaseException as error:  # the phase failed already: the callbacks' part is a note
            pending = self.recorder.take_pending()
            if pending and hasattr(error, "add_note"):
                error.add_note(str(callback_exceptions.callback_error(pending, f"{item.nodeid} ({when})")))
            raise
        check(self.recorder, item, when)
        return result

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, Any, Any]:
        __tracebackhide__ = True
        self.recorder.take_pending()  # raised between tests (collection, another plugin): no test's
        return (yield from self._checked(item, "setup"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, Any, Any]:
        __tracebackhide__ = True
        return (yield from self._checked(item, "call"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, Any, Any]:
        __tracebackhide__ = True
        return (yield from self._checked(item, "teardown"))
