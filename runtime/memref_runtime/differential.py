"""`memref_runtime.differential`, the public name of differential testing: check_against and
DifferentialError live in testing/differential.py (also `from memref_runtime.testing import
check_against`)."""

from .testing.differential import *  # noqa: F401,F403
from .testing.differential import __all__  # noqa: F401
