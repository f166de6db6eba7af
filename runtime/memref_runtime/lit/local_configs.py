"""A lit.local.cfg that raises fails its folder's tests instead of the whole run.

`guard_local_configs()` makes lit.local.cfg files of the suite load through `GuardedConfig`: an
exception in one is reported as a lit warning and recorded on that folder's config, and a before
hook (`local_config_error`) fails each test there with the traceback. lit itself would stop the
whole run before any test ran. `lit_config.fatal()` in a lit.local.cfg still stops the run: that
is what its author asked for.
"""

from __future__ import annotations

import os
import traceback
from typing import Any

import lit.Test
import lit.TestingConfig

from .test_format import Before

CONFIG_ERROR = "memref_runtime_config_error"  # the attribute a failed lit.local.cfg leaves


class GuardedConfig(lit.TestingConfig.TestingConfig):
    """lit's TestingConfig, whose lit.local.cfg files cannot stop the whole run by raising."""

    def load_from_path(self, path: str, litConfig: Any) -> None:
        if os.path.basename(path) not in litConfig.local_config_names:
            return super().load_from_path(path, litConfig)
        try:
            with open(path) as f:
                data = f.read()
        except OSError:
            litConfig.fatal(f"unable to load config file: {path!r}")
        # What lit gives a config file: its own module's globals, config, lit_config, __file__.
        cfg_globals = dict(vars(lit.TestingConfig), config=self, lit_config=litConfig, __file__=path)
        try:
            exec(compile(data, path, "exec"), cfg_globals, None)
        except SystemExit as e:
            if e.args:  # lit_config.fatal(): the author stops the run
                raise
        except Exception as e:  # noqa: BLE001 - any error of the file fails its folder's tests
            setattr(
                self,
                CONFIG_ERROR,
                f"memref-runtime: {path} raised {type(e).__name__}, so the tests of its "
                f"folder fail:\n{traceback.format_exc()}",
            )
            litConfig.warning(
                f"{path} raised {type(e).__name__}: {e}; the tests of its folder fail with the "
                "traceback (lit -v shows it)"
            )
        self.finish(litConfig)


def guard_local_configs(config: Any) -> None:
    """From now on the lit.local.cfg files below `config` load through GuardedConfig (lit
    deep-copies this config for each folder, class included)."""
    if type(config) is lit.TestingConfig.TestingConfig:
        config.__class__ = GuardedConfig


def local_config_error(test: Any, lit_config: Any) -> Before | None:
    """Before hook: a test whose folder's lit.local.cfg raised fails, with the traceback."""
    error = getattr(test.config, CONFIG_ERROR, None)
    return Before(result=lit.Test.Result(lit.Test.FAIL, error)) if error else None
