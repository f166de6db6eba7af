"""Upstream MLIR's conventions that a suite of copied upstream tests relies on."""
