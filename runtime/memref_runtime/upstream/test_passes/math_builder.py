"""Building arith/math/vector ops the way MLIR's math approximation patterns do: elementwise on the
shape of the op being rewritten (a scalar, or a vector whose constants are broadcast), with
the attributes their C++ builders set (`fastmath<none>`, `overflow<none>`)."""

from __future__ import annotations

import struct

from mlir import ir

from .ir_build import create

FASTMATH = "#arith.fastmath<none>"
OVERFLOW = "#arith.overflow<none>"
# arith.cmpf / arith.cmpi predicates by name (their i64 values).
CMPF = {"oeq": 1, "ogt": 2, "oge": 3, "olt": 4, "ole": 5, "ueq": 8, "ugt": 9, "uge": 10, "ult": 11, "ule": 12}
CMPI = {"eq": 0, "sgt": 4}


def as_f32(value: float) -> float:
    """`value` rounded to the nearest f32 (what a C++ `float` parameter holds)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


class MathBuilder:
    """Ops inserted at the current insertion point and location, shaped like `like` (a value)."""

    def __init__(self, like: ir.Value):
        self.shape = list(like.type.shape) if isinstance(like.type, ir.VectorType) else None
        self.f32_type = ir.F32Type.get()
        self.i32_type = ir.IntegerType.get_signless(32)

    # -- types and constants ---------------------------------------------------------------

    def shaped(self, element: ir.Type) -> ir.Type:
        return ir.VectorType.get(self.shape, element) if self.shape is not None else element

    def bcast(self, value: ir.Value) -> ir.Value:
        if self.shape is None:
            return value
        return create("vector.broadcast", [self.shaped(value.type)], [value]).result

    def constant(self, attr: ir.Attribute) -> ir.Value:
        return create("arith.constant", [attr.type], [], {"value": attr}).result

    def f32(self, value: float) -> ir.Value:
        """A scalar f32 constant."""
        return self.constant(ir.FloatAttr.get(self.f32_type, as_f32(value)))

    def flt(self, value: float, element: ir.Type) -> ir.Value:
        """A scalar constant of float type `element`, from `value` rounded to f32 first."""
        return self.constant(ir.FloatAttr.get(element, as_f32(value)))

    def i32(self, value: int) -> ir.Value:
        return self.constant(ir.IntegerAttr.get(self.i32_type, value))

    def boolean(self, value: bool) -> ir.Value:
        return self.constant(ir.BoolAttr.get(value))

    def f32_bits(self, bits: int) -> ir.Value:
        """A scalar f32 made from its bits (an i32 constant, bitcast)."""
        signed = bits - (1 << 32) if bits >= 1 << 31 else bits
        return self.bitcast(self.f32_type, self.i32(signed))

    # -- ops -------------------------------------------------------------------------------

    def float_op(self, name: str, *operands: ir.Value) -> ir.Value:
        return create(name, [operands[0].type], list(operands), {"fastmath": FASTMATH}).result

    def int_op(self, name: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        return create(name, [lhs.type], [lhs, rhs], {"overflowFlags": OVERFLOW}).result

    def logic(self, name: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        return create(name, [lhs.type], [lhs, rhs]).result

    def i1_like(self, value: ir.Value) -> ir.Type:
        i1 = ir.IntegerType.get_signless(1)
        return ir.VectorType.get(value.type.shape, i1) if isinstance(value.type, ir.VectorType) else i1

    def cmpf(self, predicate: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        attrs = {
            "fastmath": FASTMATH,
            "predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), CMPF[predicate]),
        }
        return create("arith.cmpf", [self.i1_like(lhs)], [lhs, rhs], attrs).result

    def cmpi(self, predicate: str, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
        attrs = {"predicate": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), CMPI[predicate])}
        return create("arith.cmpi", [self.i1_like(lhs)], [lhs, rhs], attrs).result

    def select(self, condition: ir.Value, on_true: ir.Value, on_false: ir.Value) -> ir.Value:
        return create("arith.select", [on_true.type], [condition, on_true, on_false]).result

    def cast(self, name: str, to: ir.Type, value: ir.Value) -> ir.Value:
        return create(name, [to], [value]).result

    def bitcast(self, to: ir.Type, value: ir.Value) -> ir.Value:
        return self.cast("arith.bitcast", to, value)

    def add(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.float_op("arith.addf", a, b)

    def sub(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.float_op("arith.subf", a, b)

    def mul(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.float_op("arith.mulf", a, b)

    def div(self, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.float_op("arith.divf", a, b)

    def neg(self, a: ir.Value) -> ir.Value:
        return self.float_op("arith.negf", a)

    def fma(self, a: ir.Value, b: ir.Value, c: ir.Value) -> ir.Value:
        return self.float_op("math.fma", a, b, c)

    def abs(self, a: ir.Value) -> ir.Value:
        return self.float_op("math.absf", a)

    def math(self, name: str, *operands: ir.Value) -> ir.Value:
        return self.float_op(f"math.{name}", *operands)

    # -- composites that several approximations share -------------------------------------

    def min(self, value: ir.Value, bound: ir.Value) -> ir.Value:
        """The smaller of the two, NaN if `value` is NaN."""
        return self.select(self.cmpf("ult", value, bound), value, bound)

    def max(self, value: ir.Value, bound: ir.Value) -> ir.Value:
        """The larger of the two, NaN if `value` is NaN."""
        return self.select(self.cmpf("ugt", value, bound), value, bound)

    def clamp(self, value: ir.Value, low: ir.Value, high: ir.Value) -> ir.Value:
        return self.max(self.min(value, high), low)

    def horner(self, x: ir.Value, coefficients: list) -> ir.Value:
        """c0 + x*(c1 + x*(c2 + ...)) with fmas, innermost first (coefficients lowest first)."""
        if len(coefficients) == 1:
            return coefficients[0]
        result = self.fma(x, coefficients[-1], coefficients[-2])
        for coefficient in reversed(coefficients[:-2]):
            result = self.fma(x, result, coefficient)
        return result

    def frexp(self, arg: ir.Value, positive: bool = False) -> tuple[ir.Value, ir.Value]:
        """(fraction in [0.5, 1), exponent) of f32 `arg`, both as f32."""
        i32_shaped, f32_shaped = self.shaped(self.i32_type), self.shaped(self.f32_type)
        c126 = self.f32(126.0)
        half = self.f32(0.5)
        not_exponent = self.f32_bits(~0x7F800000 & 0xFFFFFFFF)
        half_bits = self.bitcast(self.i32_type, half)
        not_exponent_bits = self.bitcast(self.i32_type, not_exponent)
        arg_bits = self.bitcast(i32_shaped, arg)
        masked = self.logic("arith.andi", arg_bits, self.bcast(not_exponent_bits))
        fraction = self.bitcast(f32_shaped, self.logic("arith.ori", masked, self.bcast(half_bits)))
        magnitude = arg if positive else self.abs(arg)
        shifted = self.logic("arith.shrui", self.bitcast(i32_shaped, magnitude), self.bcast(self.i32(23)))
        exponent = self.sub(self.cast("arith.sitofp", f32_shaped, shifted), self.bcast(c126))
        return fraction, exponent

    def exp2_i32(self, n: ir.Value) -> ir.Value:
        """2^n for i32 `n`, built in the exponent bits of an f32."""
        shift = self.bcast(self.i32(23))
        bias = self.bcast(self.i32(127))
        return self.bitcast(
            self.shaped(self.f32_type), self.int_op("arith.shli", self.int_op("arith.addi", n, bias), shift)
        )
