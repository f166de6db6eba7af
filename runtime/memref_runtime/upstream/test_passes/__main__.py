"""`python -m memref_runtime.upstream.test_passes [--mlir-opt=PATH] MLIR-OPT-ARGUMENTS...`: mlir-opt, with
upstream's test-only passes provided (see the package's docstring); `--list` names them."""

import sys

from .cli import main

sys.exit(main(sys.argv[1:]))
