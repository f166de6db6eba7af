"""memref_runtime.lit: the harness for any lit suite, in one call from its lit.cfg.py.

    # lit.cfg.py
    import memref_runtime.lit
    memref_runtime.lit.configure(config, lit_config)

gives the suite `%PYTHON` (through a pre-started interpreter), LLVM's FileCheck, `not` and
`count` from the wheels (or the site config's LLVM), upstream MLIR's substitutions and
features, mlir-opt's test-only passes routed to a matching mlir-opt, the failure report, the
`-D` switches (opt level, runtime verification, providers, ...) and `lit --update-tests`
(docs/lit-config.md). Everything here runs in lit's own interpreter or at a test process's
start-up, and imports neither numpy nor the MLIR bindings:

  configuration.py   configure(): the steps below, in order
  parameters.py      the -D parameters (a table), read and checked
  discovery.py       name, suffixes, test folders, excludes, the exec root
  interpreter.py     what the test interpreter imports (a probe run under it)
  toolchain.py       FileCheck, not, count, the MLIR tools and runner-utils libraries
  upstream_compat.py upstream's substitutions and features, test-only passes (tables, probes)
  upstream_hook.py   the per-test check of those (undefined substitutions, missing tools)
  upstream_site.py   the site-config attributes upstream's lit.local.cfg files read; a
                     lit.local.cfg that raises fails its folder's tests, not the run
  test_format.py     lit's ShTest with before/after hooks
  failure_report.py  what a failed test's Python processes printed, and how they ended
  process_report.py  the test-process side of it (crash handlers, the output copier)
  native_stack.py    LLVM's symbolized native stack on a crash
  server.py          the pre-started interpreter behind %PYTHON (lit side), input recording
  python_client.py   %PYTHON's client (runs as a script, without site)
  python_server.py   the pre-started interpreter itself
  probe_cache.py     what probes learn, kept while the files they read are unchanged
  timing.py          where a test process's time goes (-D timing=DIR)
  _site/             the site hook every test process imports first
"""

from __future__ import annotations

import os
import sys

__all__ = ["configure", "SITE_HOOK"]

# The folder of the site hook (_site/sitecustomize.py) that every test process imports first:
# first on the PYTHONPATH of lit's tests, and of a pytest session's processes for another provider.
SITE_HOOK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_site")


def configure(config, lit_config, **options):
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
