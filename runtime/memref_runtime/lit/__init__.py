"""memref_runtime.lit: the harness for any lit suite, in one call from its lit.cfg.py.

    # lit.cfg.py
    import memref_runtime.lit
    memref_runtime.lit.configure(config, lit_config)

gives the suite `%PYTHON` (through a pre-started interpreter), LLVM's FileCheck, `not` and
`count` from the wheels (or the site config's LLVM), upstream MLIR's substitutions and
features, mlir-opt's test-only passes routed to a matching mlir-opt, the failure report, the
`-D` switches (opt level, runtime verification, providers, ...) and `lit --update-tests`
(docs/lit-config.md). A thin front end: what runs in a test process is memref_runtime.process,
the pre-started interpreter memref_runtime.pyserver, upstream's conventions
memref_runtime.upstream; here is what lit's own interpreter runs, and it imports neither numpy
nor the MLIR bindings:

  configuration.py   configure(): the steps below, in order
  parameters.py      the -D parameters (a table), read and checked
  discovery.py       name, suffixes, test folders, excludes, the exec root
  interpreter.py     what the test interpreter imports (a probe run under it)
  test_format.py     lit's ShTest with before/after hooks
  failure_report.py  the hooks of the failure report (process/ writes and reads it)
  upstream_hook.py   the per-test check of upstream's conventions (undefined substitutions,
                     missing tools, test-only passes)
  local_configs.py   a lit.local.cfg that raises fails its folder's tests, not the run
  parallelism.py     performance tests run one at a time
  server_step.py     %PYTHON through the pre-started interpreter, input recording, timing
"""

from __future__ import annotations

import sys

from ..process import SITE_HOOK

# typing.TYPE_CHECKING without importing typing, which lit itself never loads.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .configuration import Configured

__all__ = ["configure", "SITE_HOOK"]


def configure(config: Any, lit_config: Any, **options: Any) -> Configured:
    """Configures `config` (lit's TestingConfig of the calling lit.cfg.py) as a memref-runtime
    suite and returns what was found (a `Configured`). Options, all keyword-only:

      name=            the suite's name (default: the folder of lit.cfg.py)
      test_dirs=       folders, relative to lit.cfg.py's, that hold the tests (default: all of it)
      suffixes=        test file suffixes (default: .py and .mlir)
      mlir_inputs=     the folder of shared MLIR modules: %mlir_inputs and env MLIR_INPUTS
                       (default: `mlir_inputs/` next to lit.cfg.py, where there is one)
      excludes=        more names lit skips while looking for tests
      substitutions=   more (name, value) pairs, before the harness's own
      features=        more available features
      pythonpath=      more folders on the tests' PYTHONPATH (your project's Python packages)
      source_root=     the folder relative paths start from (default: lit.cfg.py's)

    docs/lit-config.md lists the substitutions, features and -D parameters it adds.
    """
    from .configuration import configure as configure_suite

    caller = sys._getframe(1).f_globals.get("__file__")
    return configure_suite(config, lit_config, caller=caller, **options)
