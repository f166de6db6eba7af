"""Upstream MLIR's test conventions: substitutions, features, site attributes and the probes
behind them (compat.py, site.py), and the test-only mlir-opt passes for an mlir-opt that lacks
them (test_passes/). compat.py and site.py run in lit's own interpreter and import neither numpy
nor MLIR; test_passes/ runs in a RUN line's process."""
