"""How a process ends when it stands in for another: dies with its parent, ends as its child did.

Both the pre-started interpreter's children and the pytest plugin's isolated children die with
the process that forked them; the failure report's copier and %PYTHON's client end the way the
test process they waited for ended. Imports nothing but the interpreter's own modules.
"""

from __future__ import annotations

import _signal  # not signal, which imports enum (~3 ms of CPU in every test process)
import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing in every test process
if TYPE_CHECKING:
    from typing import NoReturn

PR_SET_PDEATHSIG = 1


def dies_with(parent: int) -> None:
    """In a child just forked from `parent`: its own process group, killed when `parent` ends
    (PR_SET_PDEATHSIG, Linux); exits at once if `parent` has ended already."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, _signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(125)
    os.setpgid(0, 0)


def die_like(signo: int) -> NoReturn:
    """Ends this process by signal `signo`, as the child ended (or with 128 + signo if it cannot)."""
    try:
        _signal.signal(signo, _signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL, SIGSTOP: cannot be handled, so are not
        pass
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [signo])
    os.kill(os.getpid(), signo)
    os._exit(128 + signo)


def end_like(status: int) -> NoReturn:
    """Ends this process the way wait status `status` says the child ended (a core dump, if the
    child left one, is not written twice)."""
    if os.WIFSIGNALED(status):
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        except (ImportError, ValueError, OSError):
            pass
        die_like(os.WTERMSIG(status))  # SIGKILL and SIGSTOP too
    os._exit(os.waitstatus_to_exitcode(status))
