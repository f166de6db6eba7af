// Math ops for tests/test_test_passes.py (-test-math-polynomial-approximation against Debian's):
// every op the pass approximates, on scalars, 1-D and 2-D vectors, f16 and bf16 (through f32),
// a vector<16xf32> rsqrt for enable-avx2; @main prints them on inputs across each op's range.
func.func @all(%x: f32, %v: vector<4xf32>, %m: vector<2x4xf32>, %h: f16, %b: bf16, %w: vector<16xf32>)
    -> (f32, f32, f32, f32, f32, f32, f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>,
        vector<2x4xf32>, vector<2x4xf32>, vector<2x4xf32>, f16, f16, f16, bf16, bf16, vector<16xf32>) {
  %0 = math.atan %x : f32
  %1 = math.atan2 %x, %x : f32
  %2 = math.log %x : f32
  %3 = math.log2 %x : f32
  %4 = math.log1p %x : f32
  %5 = math.asin %x : f32
  %6 = math.acos %x : f32
  %7 = math.erfc %x : f32
  %8 = math.expm1 %v : vector<4xf32>
  %9 = math.sin %v : vector<4xf32>
  %10 = math.cos %v : vector<4xf32>
  %11 = math.cbrt %v : vector<4xf32>
  %12 = math.exp %m : vector<2x4xf32>
  %13 = math.tanh %m : vector<2x4xf32>
  %14 = math.erf %m : vector<2x4xf32>
  %15 = math.asin %h : f16
  %16 = math.acos %h : f16
  %17 = math.tanh %h : f16
  %18 = math.exp %b : bf16
  %19 = math.sin %b : bf16
  %20 = math.rsqrt %w : vector<16xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20
      : f32, f32, f32, f32, f32, f32, f32, f32, vector<4xf32>, vector<4xf32>, vector<4xf32>, vector<4xf32>,
        vector<2x4xf32>, vector<2x4xf32>, vector<2x4xf32>, f16, f16, f16, bf16, bf16, vector<16xf32>
}

func.func @main() {
  %a = arith.constant dense<[-3.5, -0.75, -1.0e-4, 0.0, 0.3, 0.999, 2.5, 40.0]> : vector<8xf32>
  %b = arith.constant dense<[1.0e-30, 0.01, 0.5, 1.0, 3.0, 100.0, 1.0e10, 0x7F800000]> : vector<8xf32>
  %c = arith.constant dense<[-1.0, -0.6, -0.2, 0.0, 0.1, 0.5, 0.9, 1.0]> : vector<8xf32>
  %e0 = math.exp %a : vector<8xf32>
  vector.print %e0 : vector<8xf32>
  %e1 = math.expm1 %a : vector<8xf32>
  vector.print %e1 : vector<8xf32>
  %e2 = math.tanh %a : vector<8xf32>
  vector.print %e2 : vector<8xf32>
  %e3 = math.sin %a : vector<8xf32>
  vector.print %e3 : vector<8xf32>
  %e4 = math.cos %a : vector<8xf32>
  vector.print %e4 : vector<8xf32>
  %e5 = math.atan %a : vector<8xf32>
  vector.print %e5 : vector<8xf32>
  %e6 = math.erf %a : vector<8xf32>
  vector.print %e6 : vector<8xf32>
  %e7 = math.erfc %a : vector<8xf32>
  vector.print %e7 : vector<8xf32>
  %e8 = math.cbrt %a : vector<8xf32>
  vector.print %e8 : vector<8xf32>
  %e9 = math.atan2 %a, %c : vector<8xf32>
  vector.print %e9 : vector<8xf32>
  %l0 = math.log %b : vector<8xf32>
  vector.print %l0 : vector<8xf32>
  %l1 = math.log2 %b : vector<8xf32>
  vector.print %l1 : vector<8xf32>
  %l2 = math.log1p %b : vector<8xf32>
  vector.print %l2 : vector<8xf32>
  %s0 = math.asin %c : vector<8xf32>
  vector.print %s0 : vector<8xf32>
  %s1 = math.acos %c : vector<8xf32>
  vector.print %s1 : vector<8xf32>
  %r = math.rsqrt %b : vector<8xf32>
  vector.print %r : vector<8xf32>
  return
}
