"""The test-only mlir-opt passes provided here: names, anchors, options, and who implements each.

Upstream registers these passes only in an mlir-opt built with MLIR's test passes
(mlir/test/lib). A pass that upstream defines as a fixed pipeline of public passes is given as
that pipeline (the real mlir-opt runs it); the others are implemented in Python over the MLIR
bindings, one module each. Nothing here imports MLIR: lit's hook reads this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Where a pass runs when mlir-opt nests it implicitly (pass flags): on the top-level op, or on
# each function directly in it.
MODULE, FUNCTION, ANY = "builtin.module", "func.func", None


@dataclass(frozen=True)
class Option:
    """One pass option as mlir-opt's pass-option parser reads it."""

    name: str
    kind: type  # bool, int (unsigned) or str
    default: object


@dataclass(frozen=True)
class ProvidedPass:
    """One provided test pass: `implementation` is a module of this package, or None for a
    pipeline of public passes (`pipeline`, which receives the options)."""

    name: str
    anchor: str | None
    options: tuple = ()
    implementation: str | None = None
    pipeline: Callable[[dict], list] | None = None

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if o.name == name), None)


def lower_to_llvm(options: dict) -> list:
    """-test-lower-to-llvm's pipeline: [(nesting, pass with options)], as upstream builds it."""
    reassociate = "true" if options["reassociate-fp-reductions"] else "false"
    return [
        ((FUNCTION,), "convert-vector-to-scf"),
        ((FUNCTION,), "convert-linalg-to-loops"),
        ((), "lower-affine"),
        ((), "convert-scf-to-cf"),
        ((), "canonicalize"),
        ((), "cse"),
        ((), f"convert-vector-to-llvm{{reassociate-fp-reductions={reassociate}}}"),
        ((FUNCTION,), "convert-math-to-llvm"),
        ((), "expand-strided-metadata"),
        ((), "lower-affine"),
        ((), "finalize-memref-to-llvm"),
        ((), "convert-func-to-llvm"),
        ((), "convert-arith-to-llvm"),
        ((), "convert-cf-to-llvm"),
        ((), "convert-index-to-llvm"),
        ((), "convert-ub-to-llvm"),
        ((), "reconcile-unrealized-casts"),
    ]


def spirv_cpu_runner(options: dict) -> list:
    """-test-spirv-cpu-runner-pipeline's pipeline: GPU kernels to SPIR-V, then SPIR-V and host
    code to LLVM, for mlir-runner with the SPIR-V CPU runtime (upstream's fixed pipeline)."""
    return [
        ((), "gpu-kernel-outlining"),
        ((), "convert-gpu-to-spirv"),
        (("spirv.module",), "spirv-lower-abi-attrs"),
        (("spirv.module",), "spirv-update-vce"),
        ((), "lower-host-to-llvm"),
        ((), "convert-spirv-to-llvm"),
    ]


PASSES = (
    ProvidedPass(
        "test-lower-to-llvm", MODULE, (Option("reassociate-fp-reductions", bool, False),), pipeline=lower_to_llvm
    ),
    ProvidedPass("test-spirv-cpu-runner-pipeline", MODULE, pipeline=spirv_cpu_runner),
    ProvidedPass("test-transform-dialect-erase-schedule", MODULE, implementation="erase_schedule"),
    ProvidedPass(
        "test-arith-emulate-wide-int",
        FUNCTION,
        (Option("function-prefix", str, "emulate_"), Option("widest-int-supported", int, 32)),
        implementation="wide_int",
    ),
    ProvidedPass("test-cf-assert", MODULE, implementation="cf_assert"),
    ProvidedPass("test-pdl-bytecode-pass", MODULE, implementation="pdl_bytecode"),
    ProvidedPass("test-vector-scan-lowering", FUNCTION, implementation="vector_scan"),
    ProvidedPass(
        "test-math-polynomial-approximation",
        ANY,
        (Option("enable-avx2", bool, False),),
        implementation="polynomial_approximation",
    ),
)
PROVIDED = {p.name: p for p in PASSES}
