"""`python -m memref_runtime.update_checks`: the memref-update-checks command."""

import sys

from .cli import main

sys.exit(main())
