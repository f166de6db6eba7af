"""Upstream MLIR's test-only mlir-opt passes, for an mlir-opt built without them (the wheels').

`python -m memref_runtime.upstream.test_passes --mlir-opt=PATH ARGS...` is mlir-opt with these
passes; lit's hook puts it in place of a RUN line's mlir-opt that lacks a pass the line asks
for (docs/upstream-compat.md). A pass that upstream defines as a pipeline of public passes runs
as that pipeline in the real mlir-opt; the others run in Python over the MLIR bindings, between
runs of the real mlir-opt for the public passes around them.

  catalog.py         the provided passes: names, options, anchors (no MLIR import: lit reads it)
  command_line.py    an mlir-opt command line, sorted: input, passes, options, output options
  pipeline.py        textual pass pipelines and pass options, read and written
  plan.py            the command cut into runs: real mlir-opt, Python pass, ...
  driver.py          running them: IR between runs, diagnostics, exit status, -split-input-file
  diagnostics.py     diagnostics as mlir-opt prints them; -verify-diagnostics across runs
  cli.py             the wrapper's own command line (--mlir-opt=, --list)
  python_runs.py     one Python pass on one chunk: parse, run on its anchors, verify, print
  ir_build.py        building and walking IR with the bindings
  erase_schedule.py, cf_assert.py, wide_int.py, pdl_bytecode.py, vector_scan.py,
  polynomial_approximation.py   the passes implemented in Python
"""
