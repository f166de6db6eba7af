"""The polynomial approximations of MLIR's math dialect (upstream's PolynomialApproximation patterns),
one function per op: each takes a MathBuilder and the op's operands and returns the value that
replaces the op. The ranges, coefficients and the order in which the ops are built follow
upstream's patterns, so that the rewritten IR (after the greedy driver's folding) is the same.
Sources of the methods, as upstream names them: Cephes (atan, log, exp), Julien Pommier's SSE
math (log), Eigen (tanh), a Remez fit (erf), Hacker's Delight (cbrt), W. Kahan (log1p).
"""

from __future__ import annotations

import math

from mlir import ir

from .ir_build import create
from .math_builder import MathBuilder

LN2 = 0.6931471805599453
LOG2E = 1.4426950408889634
TWO_OVER_PI = 0.6366197723675814
PI_OVER_2 = 1.5707963267948966


def atan(b: MathBuilder, operand: ir.Value) -> ir.Value:
    magnitude = b.abs(operand)
    one = b.bcast(b.f32(1.0))
    # Fold the argument into [0, 0.66]: x for small ones, (x-1)/(x+1) in (0.66, 2.41], 1/x beyond.
    mid = b.cmpf("ogt", magnitude, b.bcast(b.f32(0.66)))
    plus_one, minus_one = b.add(magnitude, one), b.sub(magnitude, one)
    num, den = b.select(mid, minus_one, magnitude), b.select(mid, plus_one, one)
    big = b.cmpf("ogt", magnitude, b.bcast(b.f32(2.41421356237309504880)))
    num, den = b.select(big, one, num), b.select(big, magnitude, den)
    x = b.div(num, den)
    xx = b.mul(x, x)
    p = [
        b.bcast(b.f32(c))
        for c in (
            -8.750608600031904122785e-01,
            -1.615753718733365076637e01,
            -7.500855792314704667340e01,
            -1.228866684490136173410e02,
            -6.485021904942025371773e01,
        )
    ]
    q = [
        b.bcast(b.f32(c))
        for c in (
            2.485846490142306297962e01,
            1.650270098316988542046e02,
            4.328810604912902668951e02,
            4.853903996359136964868e02,
            1.945506571482613964425e02,
        )
    ]
    numerator = p[0]
    for c in p[1:]:
        numerator = b.fma(xx, numerator, c)
    numerator = b.mul(numerator, xx)
    denominator = q[0]
    for c in q[1:]:
        denominator = b.fma(xx, denominator, c)
    theta = b.fma(b.div(numerator, denominator), x, x)
    result = b.select(mid, b.add(b.bcast(b.f32(math.pi / 4)), theta), theta)
    result = b.select(big, b.sub(b.bcast(b.f32(math.pi / 2)), theta), result)
    return b.math("copysign", result, operand)


def atan2(b: MathBuilder, y: ir.Value, x: ir.Value) -> ir.Value:
    angle = b.math("atan", b.div(y, x))
    zero, pi = b.bcast(b.f32(0.0)), b.bcast(b.f32(3.14159265359))
    plus_pi, minus_pi = b.add(angle, pi), b.sub(angle, pi)
    flipped = b.select(b.cmpf("ogt", angle, zero), minus_pi, plus_pi)
    result = b.select(b.cmpf("ogt", x, zero), angle, flipped)
    x_zero = b.cmpf("oeq", x, zero)
    y_positive = b.cmpf("ogt", y, zero)
    up = b.logic("arith.andi", x_zero, y_positive)
    result = b.select(up, b.bcast(b.f32(1.57079632679)), result)
    y_negative = b.cmpf("olt", y, zero)
    down = b.logic("arith.andi", x_zero, y_negative)
    result = b.select(down, b.bcast(b.f32(-1.57079632679)), result)
    y_zero = b.cmpf("oeq", y, zero)
    undefined = b.logic("arith.andi", x_zero, y_zero)
    return b.select(undefined, b.bcast(b.f32_bits(0x7FC00000)), result)


def tanh(b: MathBuilder, operand: ir.Value) -> ir.Value:
    low, high = b.bcast(b.f32(-7.99881172180175781)), b.bcast(b.f32(7.99881172180175781))
    x = b.clamp(operand, low, high)
    tiny_bound = b.bcast(b.f32(0.0004))
    tiny = b.cmpf("olt", b.abs(operand), tiny_bound)
    alpha = [
        b.bcast(b.f32(c))
        for c in (
            4.89352455891786e-03,
            6.37261928875436e-04,
            1.48572235717979e-05,
            5.12229709037114e-08,
            -8.60467152213735e-11,
            2.00018790482477e-13,
            -2.76076847742355e-16,
        )
    ]
    beta = [
        b.bcast(b.f32(c))
        for c in (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04, 1.19825839466702e-06)
    ]
    x2 = b.mul(x, x)
    p = b.mul(x, b.horner(x2, alpha))
    q = b.horner(x2, beta)
    return b.select(tiny, x, b.div(p, q))


def _log(b: MathBuilder, operand: ir.Value, base2: bool) -> ir.Value:
    zero, one, neg_half = b.bcast(b.f32(0.0)), b.bcast(b.f32(1.0)), b.bcast(b.f32(-0.5))
    min_normal = b.bcast(b.f32_bits(0x00800000))
    minus_inf, plus_inf = b.bcast(b.f32_bits(0xFF800000)), b.bcast(b.f32_bits(0x7F800000))
    nan = b.bcast(b.f32_bits(0x7FC00000))
    sqrt_half = b.bcast(b.f32(0.707106781186547524))
    c = [
        b.bcast(b.f32(v))
        for v in (
            7.0376836292e-2,
            -1.1514610310e-1,
            1.1676998740e-1,
            -1.2420140846e-1,
            1.4249322787e-1,
            -1.6668057665e-1,
            2.0000714765e-1,
            -2.4999993993e-1,
            3.3333331174e-1,
        )
    ]
    x, e = b.frexp(b.max(operand, min_normal), positive=True)
    # Move the fraction from [0.5, 1) to [sqrt(1/2), sqrt(2)), less one.
    low = b.cmpf("olt", x, sqrt_half)
    extra = b.select(low, x, zero)
    x = b.sub(x, one)
    e = b.sub(e, b.select(low, one, zero))
    x = b.add(x, extra)
    x2 = b.mul(x, x)
    x3 = b.mul(x2, x)
    y0, y1, y2 = b.fma(c[0], x, c[1]), b.fma(c[3], x, c[4]), b.fma(c[6], x, c[7])
    y0, y1, y2 = b.fma(y0, x, c[2]), b.fma(y1, x, c[5]), b.fma(y2, x, c[8])
    y0 = b.mul(b.fma(b.fma(y0, x3, y1), x3, y2), x3)
    x = b.add(x, b.fma(neg_half, x2, y0))
    if base2:
        x = b.fma(x, b.bcast(b.f32(LOG2E)), e)
    else:
        x = b.fma(e, b.bcast(b.f32(LN2)), x)
    negative = b.cmpf("ult", operand, zero)
    is_zero = b.cmpf("oeq", operand, zero)
    is_inf = b.cmpf("oeq", operand, plus_inf)
    return b.select(is_zero, minus_inf, b.select(negative, nan, b.select(is_inf, plus_inf, x)))


def log(b: MathBuilder, operand: ir.Value) -> ir.Value:
    return _log(b, operand, base2=False)


def log2(b: MathBuilder, operand: ir.Value) -> ir.Value:
    return _log(b, operand, base2=True)


def log1p(b: MathBuilder, x: ir.Value) -> ir.Value:
    # log(1+x) = x * log(u) / (u - 1) with u = 1+x, or x where u is 1 or inf.
    one = b.bcast(b.f32(1.0))
    u = b.add(x, one)
    u_is_one = b.cmpf("oeq", u, one)
    log_u = b.math("log", u)
    u_is_inf = b.cmpf("oeq", u, log_u)
    large = b.mul(x, b.div(log_u, b.sub(u, one)))
    return b.select(b.logic("arith.ori", u_is_one, u_is_inf), x, large)


def asin(b: MathBuilder, operand: ir.Value) -> ir.Value:
    element = operand.type.element_type if b.shape is not None else operand.type

    def k(value: float) -> ir.Value:
        return b.bcast(b.flt(value, element))

    magnitude = b.abs(operand)
    square = b.mul(operand, operand)
    opposite = b.math("sqrt", b.sub(k(1.0), square))
    beyond_half = b.cmpf("ogt", square, k(0.5))
    x = b.select(beyond_half, opposite, magnitude)
    s = b.mul(x, x)
    q = b.mul(s, s)
    r, t = k(5.5579749017470502e-2), k(-6.2027913464120114e-2)
    for rc, tc in (
        (5.4224464349245036e-2, -1.1326992890324464e-2),
        (1.5268872539397656e-2, 1.0493798473372081e-2),
        (1.4106045900607047e-2, 1.7339776384962050e-2),
        (2.2372961589651054e-2, 3.0381912707941005e-2),
        (4.4642857881094775e-2, 7.4999999991367292e-2),
    ):
        r = b.fma(r, q, k(rc))
        t = b.fma(t, q, k(tc))
    r = b.fma(r, s, t)
    r = b.fma(r, s, k(1.6666666666670193e-1))
    r = b.fma(r, b.mul(x, s), x)
    r = b.select(beyond_half, b.sub(k(1.57079632679), r), r)
    return b.math("copysign", r, operand)


def acos(b: MathBuilder, operand: ir.Value) -> ir.Value:
    element = operand.type.element_type if b.shape is not None else operand.type

    def k(value: float) -> ir.Value:
        return b.bcast(b.flt(value, element))

    negated = b.neg(operand)
    zero, half, minus_one = k(0.0), k(0.5), k(-1.0)
    r = b.select(b.cmpf("ogt", operand, zero), negated, operand)
    first = b.cmpf("ogt", r, k(-0.5625))
    near = b.fma(k(9.3282184640716537e-1), k(1.6839188885261840e0), b.math("asin", r))
    far = b.math("asin", b.math("sqrt", b.fma(half, r, half)))
    far = b.mul(k(2.0), far)
    r = b.select(first, near, far)
    in_range = b.logic("arith.andi", b.cmpf("oge", operand, minus_one), b.cmpf("olt", operand, zero))
    mirrored = b.fma(k(1.8656436928143307e0), k(1.6839188885261840e0), b.neg(r))
    return b.select(in_range, mirrored, r)


ERF_P = (
    (0.0, 1.12837916222975858e00, -5.23018562988006470e-01, 2.09741709609267072e-01, 2.58146801602987875e-02),
    (0.0, 1.12750687816789140e00, -3.64721408487825775e-01, 1.18407396425136952e-01, 3.70645533056476558e-02),
    (
        -3.30093071049483172e-03,
        3.51961938357697011e-03,
        -1.41373622814988039e-03,
        2.53447094961941348e-04,
        -1.71048029455037401e-05,
    ),
)
ERF_Q = (
    (1.0, -4.635138185962547255e-01, 5.192301327279782447e-01, -1.318089722204810087e-01, 7.397964654672315005e-02),
    (1.0, -3.27607011824493086e-01, 4.48369090658821977e-01, -8.83462621207857930e-02, 5.72442770283176093e-02),
    (1.0, -2.06069165953913769e00, 1.62705939945477759e00, -5.83389859211130017e-01, 8.21908939856640930e-02),
)


def erf(b: MathBuilder, operand: ir.Value) -> ir.Value:
    element = operand.type.element_type if b.shape is not None else operand.type

    def k(value: float) -> ir.Value:
        return b.bcast(b.flt(value, element))

    zero, one = k(0.0), k(1.0)
    pp = [[k(c) for c in row] for row in ERF_P]
    qq = [[k(c) for c in row] for row in ERF_Q]
    offsets = [k(0.0), k(0.0), k(1.0)]
    bounds = [k(0.8), k(2.0), k(3.75)]
    negative = b.cmpf("olt", operand, zero)
    x = b.select(negative, b.neg(operand), operand)
    # Three intervals, each with its own rational approximation (and 1 beyond the last).
    offset, p, q = offsets[0], list(pp[0]), list(qq[0])
    for j in range(2):
        below = b.cmpf("olt", x, bounds[j])
        for i in range(5):
            p[i] = b.select(below, p[i], pp[j + 1][i])
            q[i] = b.select(below, q[i], qq[j + 1][i])
        offset = b.select(below, offset, offsets[j + 1])
    within = b.cmpf("ult", x, bounds[2])
    value = b.add(offset, b.div(b.horner(x, p), b.horner(x, q)))
    value = b.select(within, value, one)
    return b.select(negative, b.neg(value), value)


ERFC_P = tuple(
    float.fromhex(h)
    for h in (
        "-0x1.a4a000p-12",
        "-0x1.42a260p-10",
        "0x1.585714p-10",
        "0x1.1adcc4p-07",
        "-0x1.081b82p-07",
        "-0x1.bc0b6ap-05",
        "0x1.4ffc46p-03",
        "-0x1.540840p-03",
        "-0x1.7bf616p-04",
        "0x1.1ba03ap-02",
    )
)


def erfc(b: MathBuilder, x: ir.Value) -> ir.Value:
    element = b.f32_type
    yes = b.bcast(b.boolean(True))
    zero, one, half = (b.bcast(b.flt(v, element)) for v in (0.0, 1.0, 0.5))
    minus_four, minus_two, two = (b.bcast(b.flt(v, element)) for v in (-4.0, -2.0, 2.0))
    plus_inf = b.bcast(b.f32_bits(0x7F800000))
    limit = b.bcast(b.flt(10.0546875, element))
    a = b.abs(x)
    # q = (a - 2) / (a + 2), computed with a correction step.
    r = b.div(one, b.add(a, two))
    q = b.fma(minus_four, r, one)
    t = b.fma(b.add(q, one), minus_two, a)
    e = b.fma(b.neg(a), q, t)
    q = b.fma(r, e, q)
    p = b.bcast(b.flt(ERFC_P[0], element))
    for c in ERFC_P[1:]:
        p = b.fma(p, q, b.bcast(b.flt(c, element)))
    r = b.div(one, b.fma(two, a, one))
    q = b.fma(p, r, r)
    e = b.fma(b.fma(q, b.neg(a), half), two, b.sub(p, q))
    r = b.fma(e, r, q)
    s = b.mul(a, a)
    e = b.math("exp", b.neg(s))
    t = b.fma(b.neg(a), a, s)
    r = b.fma(r, e, b.mul(b.mul(r, e), t))
    not_finite = b.logic("arith.xori", b.cmpf("olt", a, plus_inf), yes)
    r = b.select(not_finite, b.add(x, x), r)
    r = b.select(b.cmpf("ogt", a, limit), zero, r)
    return b.select(b.cmpf("olt", x, zero), b.sub(two, r), r)


def exp(b: MathBuilder, x: ir.Value) -> ir.Value:
    half, one = b.bcast(b.f32(0.5)), b.bcast(b.f32(1.0))
    log2e = b.bcast(b.f32(1.44269504088896341))
    c1, c2 = b.bcast(b.f32(-0.693359375)), b.bcast(b.f32(2.12194440e-4))
    p = [
        b.bcast(b.f32(v))
        for v in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
    ]
    x = _clamp(b, x, -87.8, 88.8)
    # e^x = e^a * 2^n with n = round(x / ln 2) kept in [-127, 127] (2^-127 is built as 0).
    n = _clamp(b, b.math("floor", b.fma(x, log2e, half)), -127.0, 127.0)
    x = b.fma(c2, n, b.fma(c1, n, x))
    z = b.fma(x, p[0], p[1])
    for c in p[2:]:
        z = b.fma(z, x, c)
    z = b.add(one, b.fma(z, b.mul(x, x), x))
    return b.mul(z, b.exp2_i32(b.cast("arith.fptosi", b.shaped(b.i32_type), n)))


def _clamp(b: MathBuilder, value: ir.Value, low: float, high: float) -> ir.Value:
    """Clamped into [low, high] with unordered compares (NaN stays NaN)."""
    low_value = b.bcast(b.f32(low))
    value = b.select(b.cmpf("uge", value, low_value), value, low_value)
    high_value = b.bcast(b.f32(high))
    return b.select(b.cmpf("ule", value, high_value), value, high_value)


def expm1(b: MathBuilder, x: ir.Value) -> ir.Value:
    one, minus_one = b.bcast(b.f32(1.0)), b.bcast(b.f32(-1.0))
    u = b.math("exp", x)
    u_is_one = b.cmpf("ueq", u, one)
    u_minus_one = b.sub(u, one)
    at_minus_one = b.cmpf("oeq", u_minus_one, minus_one)
    log_u = b.math("log", u)
    is_inf = b.cmpf("oeq", log_u, u)
    value = b.mul(u_minus_one, b.div(x, log_u))
    value = b.select(is_inf, u, value)
    return b.select(u_is_one, x, b.select(at_minus_one, minus_one, value))


SIN_C = (
    -0.16666667163372039794921875,
    8.333347737789154052734375e-3,
    -1.9842604524455964565277099609375e-4,
    2.760012648650445044040679931640625e-6,
    -2.50293279435709337121807038784027099609375e-8,
)
COS_C = (
    -0.5,
    4.166664183139801025390625e-2,
    -1.388833043165504932403564453125e-3,
    2.47562347794882953166961669921875e-5,
    -2.59630184018533327616751194000244140625e-7,
)


def _sin_cos(b: MathBuilder, x: ir.Value, sine: bool) -> ir.Value:
    two_over_pi, pi_over_two = b.bcast(b.f32(TWO_OVER_PI)), b.bcast(b.f32(PI_OVER_2))
    k = b.math("floor", b.mul(x, two_over_pi))
    y = b.sub(x, b.mul(k, pi_over_two))
    one, minus_one = b.bcast(b.f32(1.0)), b.bcast(b.f32(-1.0))
    sc = [b.bcast(b.f32(v)) for v in SIN_C]
    cc = [b.bcast(b.f32(v)) for v in COS_C]
    quadrant = b.logic("arith.andi", b.cast("arith.fptosi", b.shaped(b.i32_type), k), b.bcast(b.i32(3)))
    r = [b.cmpi("eq", quadrant, b.bcast(b.i32(i))) for i in range(4)]
    # In quadrants 1 and 3 sine is a cosine (and the other way round); the sign by quadrant.
    use_cos = b.logic("arith.ori", r[1], r[3]) if sine else b.logic("arith.ori", r[0], r[2])
    negative = b.cmpi("sgt", quadrant, b.bcast(b.i32(1))) if sine else b.logic("arith.ori", r[1], r[2])
    y2 = b.mul(y, y)
    base = b.select(use_cos, one, y)
    c = [b.select(use_cos, cc[i], sc[i]) for i in range(5)]
    v = b.fma(y2, c[4], c[3])
    for coefficient in (c[2], c[1], c[0], one):
        v = b.fma(y2, v, coefficient)
    v = b.mul(base, v)
    return b.select(negative, b.mul(minus_one, v), v)


def sin(b: MathBuilder, x: ir.Value) -> ir.Value:
    return _sin_cos(b, x, sine=True)


def cos(b: MathBuilder, x: ir.Value) -> ir.Value:
    return _sin_cos(b, x, sine=False)


def cbrt(b: MathBuilder, operand: ir.Value) -> ir.Value:
    int_type = b.shaped(b.i32_type)
    float_type = b.shaped(b.f32_type)
    two_i, four_i, eight_i = (b.bcast(b.constant(ir.IntegerAttr.get(b.i32_type, v))) for v in (2, 4, 8))
    magic = b.bcast(b.constant(ir.IntegerAttr.get(b.i32_type, 0x2A5137A0)))
    third, two, zero = (b.bcast(b.constant(ir.FloatAttr.get(b.f32_type, v))) for v in (0.33333333, 2.0, 0.0))
    magnitude = b.abs(operand)
    # A first guess from the bits: |x|'s bits/3 (as /4 + /16 + /256 ...) plus a magic constant.
    bits = b.bitcast(int_type, magnitude)
    bits = b.int_op("arith.addi", b.logic("arith.shrsi", bits, two_i), b.logic("arith.shrsi", bits, four_i))
    bits = b.int_op("arith.addi", bits, b.logic("arith.shrsi", bits, four_i))
    bits = b.int_op("arith.addi", bits, b.logic("arith.shrsi", bits, eight_i))
    guess = b.bitcast(float_type, b.int_op("arith.addi", bits, magic))
    for _ in range(2):  # two Newton steps
        squared = b.mul(guess, guess)
        doubled = b.mul(guess, two)
        guess = b.mul(b.add(doubled, b.div(magnitude, squared)), third)
    guess = b.select(b.cmpf("oeq", magnitude, zero), zero, guess)
    return b.math("copysign", guess, operand)


def rsqrt_avx2(b: MathBuilder, operand: ir.Value) -> ir.Value:
    """rsqrt of vectors whose last dimension is a multiple of 8: AVX's estimate, one Newton step."""
    plus_inf = b.bcast(b.f32_bits(0x7F800000))
    three_halves, minus_half = b.bcast(b.f32(1.5)), b.bcast(b.f32(-0.5))
    min_normal = b.bcast(b.f32_bits(0x00800000))
    negative_half = b.mul(operand, minus_half)
    special = b.logic("arith.ori", b.cmpf("olt", operand, min_normal), b.cmpf("oeq", operand, plus_inf))
    estimate = _per_8_lanes(b, operand)
    inner = b.mul(negative_half, estimate)
    refined = b.mul(estimate, b.fma(estimate, inner, three_halves))
    return b.select(special, estimate, refined)


def _per_8_lanes(b: MathBuilder, operand: ir.Value) -> ir.Value:
    """x86vector.avx.rsqrt on each vector<8xf32> of `operand` (unrolled and put back together)."""
    shape = list(b.shape or [])
    if shape == [8]:
        return create("x86vector.avx.rsqrt", [operand.type], [operand]).result
    expanded = shape[:-1] + ([shape[-1] // 8, 8] if shape[-1] > 8 else [8])
    value = operand
    if shape[-1] > 8:
        value = create("vector.shape_cast", [ir.VectorType.get(expanded, b.f32_type)], [operand]).result
    outer = expanded[:-1]
    count = math.prod(outer)
    strides = [math.prod(outer[i + 1 :]) for i in range(len(outer))]
    chunk = ir.VectorType.get([8], b.f32_type)

    def position(index: int) -> ir.Attribute:
        return ir.DenseI64ArrayAttr.get([index // s % d for s, d in zip(strides, outer)])

    results = []
    for i in range(count):
        piece = create("vector.extract", [chunk], [value], {"static_position": position(i)}).result
        results.append(create("x86vector.avx.rsqrt", [chunk], [piece]).result)
    whole_type = ir.VectorType.get(expanded, b.f32_type)
    # Upstream builds this zero vector as a constant; built as a broadcast of a scalar zero it
    # folds into the same constant, which the greedy driver hoists where upstream's ends up (ops
    # made here are not announced to the driver, so an arith.constant would be hoisted later).
    whole = create("vector.broadcast", [whole_type], [b.f32(0.0)]).result
    for i, piece in enumerate(results):
        whole = create("vector.insert", [whole_type], [piece, whole], {"static_position": position(i)}).result
    return create("vector.shape_cast", [operand.type], [whole]).result
