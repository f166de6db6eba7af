"""Upstream MLIR's test conventions: substitutions, features, site attributes and the probes
behind them (compat.py, site.py). Runs in lit's own interpreter: nothing here imports numpy or MLIR."""
