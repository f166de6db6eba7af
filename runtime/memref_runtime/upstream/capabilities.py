"""What an LLVM build can do, asked of its tools once per lit run (probe_cache keeps the answers
while the tool is unchanged): the GPU targets it was built with, and how its mlir-opt lowers
memrefs of sub-byte integers.

Upstream's lit.cfg.py takes `host-supports-nvptx` and `host-supports-amdgpu` from CMake
(`LLVM_HAS_NVPTX_TARGET`, `MLIR_ENABLE_ROCM_CONVERSIONS`). An installed toolchain has no CMake
cache to read, so the opt tool is asked to serialize an empty GPU module for each target: that
works exactly when the target is built in. The tests that require the features (python/dialects/
gpu/module-to-binary-*.py) run the bindings, so it is the bindings' opt tool that is asked.
"""

from __future__ import annotations

from ..probe_cache import tool_output

# Feature -> the GPU target attribute whose serialization needs that LLVM target.
GPU_TARGET_FEATURES = {"host-supports-nvptx": "#nvvm.target", "host-supports-amdgpu": "#rocdl.target"}
GPU_MODULE = """module attributes {{gpu.container_module}} {{
  gpu.module @probe [{target}] {{
    llvm.func @kernel() attributes {{gpu.kernel}} {{ llvm.return }}
  }}
}}
"""
# A store into a memref of i4: upstream 22's MemRefToLLVM stores the element in a byte of its
# own; a build that packs sub-byte elements loads and masks the byte around it.
SUB_BYTE_STORE = """func.func @probe(%m: memref<4xi4>, %v: i4, %i: index) {
  memref.store %v, %m[%i] : memref<4xi4>
  return
}
"""
# Python versions upstream's lit.cfg.py has `python-ge-3NN` features for start here.
FIRST_PYTHON_FEATURE = (3, 8)


def gpu_target_features(opt_tool: str | None) -> set:
    """The `host-supports-*` features whose LLVM target `opt_tool`'s build has."""
    if not opt_tool:
        return set()
    found = set()
    for feature, target in GPU_TARGET_FEATURES.items():
        out = tool_output([opt_tool, "--gpu-module-to-binary=format=isa", "-"], stdin=GPU_MODULE.format(target=target))
        if "gpu.binary @probe" in out:
            found.add(feature)
    return found


def packs_sub_byte_memrefs(mlir_opt: str | None) -> bool:
    """Whether `mlir_opt` lowers a store of an i4 memref element as a read-modify-write of the
    byte around it (a patched MemRefToLLVM), where upstream's 22.1.8 stores one element per byte."""
    if not mlir_opt:
        return False
    out = tool_output([mlir_opt, "--finalize-memref-to-llvm", "-"], stdin=SUB_BYTE_STORE)
    return "llvm.store" in out and "llvm.lshr" in out


def python_features(version: tuple) -> set:
    """`python-ge-3NN` for each Python version up to `version` (upstream has python-ge-311)."""
    major, minor = version[:2]
    return {f"python-ge-{major}{m}" for m in range(FIRST_PYTHON_FEATURE[1], minor + 1)} if major == 3 else set()
