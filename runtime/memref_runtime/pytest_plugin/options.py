"""The plugin's options: each one a command-line option and an ini setting of the same meaning.

The command line wins over the ini file (`[tool.pytest.ini_options]` of pyproject.toml,
pytest.ini, tox.ini or setup.cfg); with neither, the environment's default stands
(MEMREF_RUNTIME_OPT_LEVEL, MEMREF_RUNTIME_VERIFICATION, MEMREF_RUNTIME_BINDINGS), as under lit.
A value that names nothing stops pytest with a UsageError that names the option or ini setting.

The suite-wide settings reach every JitModule and memref_runtime.testing engine the way lit's
`-D opt_level` and `-D runtime_verification=1` do: through memref_runtime.settings' environment
variables, set before any conftest or test module is imported, so xdist workers, isolated
children and the Python processes a test starts see them too.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from .. import environment as variables
from .. import settings as suite
from ..bindings import ENV_VAR as BINDINGS_ENV
from ..bindings import PROVIDERS

# What `mlir.runtime` is: the bindings' own (upstream's), or memref_runtime's facade.
RUNTIMES = ("upstream", "memref_runtime")


def _opt_levels(text: str, origin: str) -> tuple[int, ...]:
    levels = tuple(dict.fromkeys(suite.parse_opt_level(t.strip(), origin) for t in text.split(",") if t.strip()))
    if not levels:
        raise ValueError(f"{origin}: expected opt levels separated by commas (0,3), got {text!r}")
    return levels


_DISTRIBUTIONS = {"mlir": "xtc-mlir-python-bindings", "torch_mlir": "torch-mlir"}


def _provider(text: str, origin: str) -> str:
    if text not in PROVIDERS:
        raise ValueError(f"{origin}: expected one of {', '.join(PROVIDERS)}, got {text!r}")
    if importlib.util.find_spec(text) is None:  # else `import mlir` would quietly stay the wheels'
        raise ValueError(
            f"{origin}: {sys.executable} cannot import the {text!r} package (pip install {_DISTRIBUTIONS[text]})"
        )
    return text


def _runtime(text: str, origin: str) -> str:
    if text not in RUNTIMES:
        raise ValueError(f"{origin}: expected one of {', '.join(RUNTIMES)}, got {text!r}")
    return text


def _executable(text: str, origin: str) -> str:
    found = shutil.which(text)
    if not found:
        raise ValueError(f"{origin}: expected the path of an executable FileCheck, got {text!r}, which is not one")
    return os.path.abspath(found)


def _seconds(text: str, origin: str) -> float | None:
    value = suite.seconds_or_none(text)
    if value is None:
        raise ValueError(f"{origin}: expected a number of seconds (0: no timeout), got {text!r}")
    return value or None


@dataclass(frozen=True)
class Option:
    """One setting: its command-line flag, ini name, how its text is read, and its help."""

    name: str  # the attribute of Settings, the ini name with `mlir_` before it, argparse's dest
    flag: str
    metavar: str | None  # None: a switch, which takes no value and means `switch` (`-o INI=...` the other)
    parse: Callable[[str, str], object]
    help: str
    switch: str = "1"
    ini_help: str | None = None  # when the ini setting reads the other way round from the flag

    @property
    def ini(self) -> str:
        return "mlir_" + self.name

    @property
    def dest(self) -> str:
        return "memref_runtime_" + self.name


OPTIONS = (
    Option(
        "opt_level",
        "--mlir-opt-level",
        "N",
        suite.parse_opt_level,
        "the default opt level (0-3) of every JitModule and memref_runtime.testing engine (as lit -D opt_level=N)",
    ),
    Option(
        "opt_levels",
        "--mlir-opt-levels",
        "N,M",
        _opt_levels,
        "run each test that uses the `jit` fixture once per opt level, the level in its id (test_x[O0])",
    ),
    Option(
        "runtime_verification",
        "--mlir-runtime-verification",
        None,
        suite.parse_flag,
        "MLIR's runtime verification in every JitModule and testing lowering (as lit -D runtime_verification=1)",
    ),
    Option(
        "python",
        "--mlir-python",
        "PROVIDER",
        _provider,
        "the MLIR Python bindings: mlir or torch_mlir, which `import mlir` then gives (as lit -D mlir_python=)",
    ),
    Option(
        "runtime",
        "--mlir-runtime",
        "RUNTIME",
        _runtime,
        "which `mlir.runtime` the session's tests import: upstream (the bindings' own) or memref_runtime "
        "(its facade, as lit -D mlir_runtime=memref_runtime)",
    ),
    Option(
        "checks",
        "--mlir-checks",
        None,
        suite.parse_flag,
        "apply memref-runtime's checks (MLIR Contexts left alive, exceptions in ctypes callbacks) to every "
        "test; by default only tests that use the plugin's fixtures or markers fail by them, elsewhere "
        "they warn",
    ),
    Option(
        "filecheck",
        "--mlir-filecheck",
        "PATH",
        _executable,
        "the FileCheck the `filecheck` fixture runs (default: LLVM's from the wheels, else the Python filecheck)",
    ),
    Option(
        "isolate",
        "--mlir-isolate",
        None,
        suite.parse_flag,
        "run every test function in a forked child: a crash fails that test alone, with its stacks",
    ),
    Option(
        "timeout",
        "--mlir-timeout",
        "SECONDS",
        _seconds,
        "end an isolated test after this many seconds, with its stacks (0: never)",
    ),
    Option(
        "reduce",
        "--mlir-reduce",
        None,
        suite.parse_flag,
        "a failing test that used the `jit` fixture: bisect its pipeline and reduce its module with the test as "
        "the check, and write a regression test beside it (memref-bisect and memref-reduce; slow: minutes)",
    ),
    Option(
        "leak_check",
        "--mlir-no-leak-check",
        None,
        suite.parse_flag,
        "do not fail a test that leaves an MLIR Context alive (the check is on by default)",
        switch="0",
        ini_help="fail a test that leaves an MLIR Context alive: 1 (the default) or 0",
    ),
)


@dataclass(frozen=True)
class Settings:
    """What the options say, with where each value came from (`origins`: name -> flag or ini)."""

    opt_level: int | None = None
    opt_levels: tuple[int, ...] = ()
    runtime_verification: bool | None = None
    python: str | None = None
    runtime: str | None = None
    checks: bool = False
    filecheck: str | None = None
    isolate: bool = False
    timeout: float | None = None
    reduce: bool = False
    leak_check: bool = True
    origins: tuple = ()

    def origin(self, name: str) -> str | None:
        return dict(self.origins).get(name)


# The session's Settings, in pytest's config.stash.
SETTINGS = pytest.StashKey[Settings]()


def add_options(parser: pytest.Parser) -> None:
    """Registers every option on the command line (group "memref-runtime") and as an ini setting."""
    group = parser.getgroup("memref-runtime", "memref-runtime (MLIR tests)")
    for option in OPTIONS:
        kind = (
            {"action": "store_const", "const": option.switch} if option.metavar is None else {"metavar": option.metavar}
        )
        ini = f"{option.ini} = {'1 or 0' if option.metavar is None else option.metavar}"
        group.addoption(option.flag, dest=option.dest, default=None, help=f"{option.help}; ini: {ini}", **kind)
        parser.addini(option.ini, f"{option.ini_help or option.help} ({option.flag})", type="string", default="")


def read(config: pytest.Config, namespace: argparse.Namespace) -> Settings:
    """The settings from `namespace` (argparse's, early or final) and the ini file; UsageError on bad values."""
    values: dict = {}
    origins = []
    for option in OPTIONS:
        text, origin = getattr(namespace, option.dest, None), option.flag
        if text is None:
            text, origin = config.getini(option.ini), f"{option.ini} (ini)"
            if isinstance(text, bool):  # a TOML true/false
                text = "1" if text else "0"
            text = str(text).strip()
        if text == "" and option.name == "python" and os.environ.get(BINDINGS_ENV):
            text, origin = os.environ[BINDINGS_ENV], BINDINGS_ENV
        if text == "":  # Settings' own default
            continue
        try:
            values[option.name] = option.parse(text, origin)
        except ValueError as e:
            raise pytest.UsageError(str(e)) from None
        origins.append((option.name, origin))
    return Settings(**values, origins=tuple(origins))


def environment(settings: Settings) -> dict[str, str]:
    """The environment variables `settings` set for the session and every process it starts."""
    env = {}
    if settings.opt_level is not None:
        env[suite.OPT_LEVEL_ENV] = str(settings.opt_level)
    if settings.runtime_verification is not None:
        env[suite.RUNTIME_VERIFICATION_ENV] = "1" if settings.runtime_verification else "0"
    if settings.python is not None:
        env[BINDINGS_ENV] = settings.python
    if settings.runtime is not None:
        env[variables.MLIR_RUNTIME] = settings.runtime
    if settings.python not in (None, "mlir") or settings.runtime == "memref_runtime":
        # A Python process a test starts gets the same aliases, as lit's do: the site hook's
        # sitecustomize installs them.
        from ..process import SITE_HOOK as hook

        rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != hook]
        env["PYTHONPATH"] = os.pathsep.join([hook, *rest])
    return env


def apply(settings: Settings) -> dict[str, str | None]:
    """Sets the environment `settings` asks for and aliases `mlir` to another provider; returns the
    variables' former values, for `restore`."""
    env = environment(settings)
    previous = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    from .. import aliases

    provider = settings.python or "mlir"
    if provider != "mlir":
        aliases.alias_mlir_bindings(provider)
    if settings.runtime == "memref_runtime":
        aliases.alias_mlir_runtime(provider)
    return previous


def restore(previous: dict[str, str | None]) -> None:
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
