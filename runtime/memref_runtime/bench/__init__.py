"""memref-bench, the command line that times a function of an MLIR file at several sizes and
opt levels (cli.py), on inputs drawn from its signature (inputs.py), with an optional plot
(plot.py, the `plot` extra)."""
