"""`python -m memref_runtime.bench`: the memref-bench command."""

import sys

from .cli import main

sys.exit(main())
