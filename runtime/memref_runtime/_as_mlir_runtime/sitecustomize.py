# On PYTHONPATH only when lit runs with `-D runtime=memref_runtime`: `mlir.runtime` is ours.
import memref_runtime.upstream_alias

memref_runtime.upstream_alias.install()
