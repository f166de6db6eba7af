"""-test-math-polynomial-approximation: math ops rewritten into polynomial approximations.

As upstream's test pass: greedily (with folding) on the op it runs on, each of atan, atan2,
tanh, log, log2, log1p, erf, erfc, asin, acos, exp, expm1, cbrt, sin and cos becomes its
approximation (math_approximations.py), and with `enable-avx2` rsqrt of vectors of 8k f32 too.
An op on f16 or bf16 (of those upstream widens: all above but asin and acos, which it
approximates in their own type) is widened to f32 (arith.extf), computed there, and truncated
back. Ops that an approximation creates (atan from atan2, log from log1p, ...) are rewritten in
turn by the same driver.
"""

from __future__ import annotations

from collections.abc import Callable

from mlir import ir
from mlir.rewrite import PatternRewriter, RewritePatternSet, apply_patterns_and_fold_greedily

from . import math_approximations as approx
from .math_builder import MathBuilder

APPROXIMATIONS = {
    "math.atan": approx.atan,
    "math.atan2": approx.atan2,
    "math.tanh": approx.tanh,
    "math.log": approx.log,
    "math.log2": approx.log2,
    "math.log1p": approx.log1p,
    "math.erf": approx.erf,
    "math.erfc": approx.erfc,
    "math.asin": approx.asin,
    "math.acos": approx.acos,
    "math.exp": approx.exp,
    "math.expm1": approx.expm1,
    "math.cbrt": approx.cbrt,
    "math.sin": approx.sin,
    "math.cos": approx.cos,
}
# Approximated on f32 only, also in their own type: asin, acos (f16 as well), and erf's (f16).
OWN_TYPES = {"math.asin": ("f16",), "math.acos": ("f16",), "math.erf": ("f16",)}
WIDENED = frozenset(APPROXIMATIONS) - {"math.asin", "math.acos"}


def element(type_: ir.Type) -> ir.Type:
    return type_.element_type if isinstance(type_, ir.VectorType) else type_


def widen(op, rewriter) -> bool:
    """f16/bf16 -> f32 around `op` (all operands and results of one type); False if not so."""
    types = [v.type for v in [*op.operands, *op.results]]
    elem = element(types[0])
    if (
        any(t != types[0] for t in types)
        or not isinstance(elem, ir.FloatType)
        or elem.width >= 32
        or isinstance(elem, ir.F32Type)
    ):
        return False
    f32 = ir.F32Type.get()
    wide = ir.VectorType.get(types[0].shape, f32) if isinstance(types[0], ir.VectorType) else f32
    with rewriter.ip, op.location:
        operands = [ir.Operation.create("arith.extf", [wide], [v]).result for v in op.operands]
        attributes = {name: op.attributes[name] for name in op.attributes}
        computed = ir.Operation.create(op.name, [wide], operands, attributes).result
        narrowed = ir.Operation.create("arith.truncf", [types[0]], [computed]).result
    rewriter.replace_op(op, [narrowed])
    return True


def rsqrt_applies(op) -> bool:
    type_ = op.operands[0].type
    return isinstance(type_, ir.VectorType) and type_.rank > 0 and type_.shape[-1] % 8 == 0


def pattern(name: str, approximate) -> Callable:
    """The rewrite of one op name (the bindings' convention: a true return value = no match)."""

    def rewrite(op, rewriter: PatternRewriter) -> bool | None:
        op = op.operation
        elem = element(op.operands[0].type)
        if name in WIDENED and widen(op, rewriter):
            return None
        if not isinstance(elem, ir.F32Type) and str(elem) not in OWN_TYPES.get(name, ()):
            return True
        if name == "math.rsqrt" and not rsqrt_applies(op):
            return True
        with rewriter.ip, op.location:
            result = approximate(MathBuilder(op.results[0]), *op.operands)
        rewriter.replace_op(op, [result])
        return None

    return rewrite


def run(op: ir.Operation, options: dict) -> bool:
    patterns = RewritePatternSet(op.context)
    table = dict(APPROXIMATIONS, **({"math.rsqrt": approx.rsqrt_avx2} if options["enable-avx2"] else {}))
    for name, approximate in table.items():
        patterns.add(name, pattern(name, approximate))
    apply_patterns_and_fold_greedily(op, patterns.freeze())
    return True
