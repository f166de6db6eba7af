# -*- Python -*-
"""lit configuration of memref-runtime's own suite: the tests under lit_tests/ (and nothing
else), with the shared modules of mlir_inputs/.

Run with `lit lit_tests`, `lit lit_tests/<test>` or `lit .`. Everything else (the -D parameters,
substitutions, features, the server, the failure report, upstream's conventions, lit
--update-tests) is memref_runtime.lit.configure's: docs/lit-config.md. A site configuration
written by CMake (lit.site.cfg.py.in) may preset the tools' folders and the exec root.
"""

import os
import sys

# This checkout's runtime, installed or not (configure() passes the same folder on to the tests).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime"))
import memref_runtime.lit  # noqa: E402

SUITE = dict(name="memref-runtime", test_dirs=["lit_tests"], mlir_inputs="mlir_inputs")
memref_runtime.lit.configure(config, lit_config, **SUITE)
