// UPDATE-CHECKS: hand-written: the IR prefixes check only that math ops are gone; the values are the math library's, to 6 digits
// -test-math-polynomial-approximation on vectors and scalars of this test's own: the program
// prints what the approximations compute, which agrees with the true values to the 6 digits
// printed. The pass runs nested on the functions of a pass pipeline, -test-lower-to-llvm after it.
//
// RUN: mlir-opt %s --pass-pipeline="builtin.module(func.func(test-math-polynomial-approximation),test-lower-to-llvm)" \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
//
// The ops are gone after the pass; rsqrt is approximated (with AVX2's estimate) only with the option.
// RUN: mlir-opt %s -test-math-polynomial-approximation | FileCheck %s --check-prefix=IR
// RUN: mlir-opt %s -test-math-polynomial-approximation="enable-avx2" | FileCheck %s --check-prefix=AVX2
// REQUIRES: host-supports-jit, runner-utils

// exp(0, 0.5, 1, 2) = 1, 1.64872, 2.71828, 7.38906
// CHECK: ( 1, 1.64872, 2.71828, 7.38906 )
// log(0.5, 1, 2, 10) = -0.693147, 0, 0.693147, 2.30259
// CHECK-NEXT: ( -0.693147, 0, 0.693147, 2.30259 )
// tanh(0, 0.5, 1, 2) = 0, 0.462117, 0.761594, 0.964028
// CHECK-NEXT: ( 0, 0.462117, 0.761594, 0.964028 )
// sin(0, 0.5, 1, 2) = 0, 0.479426, 0.841471, 0.909297
// CHECK-NEXT: ( 0, 0.479426, 0.841471, 0.909297 )
// cos(0, 0.5, 1, 2) = 1, 0.877583, 0.540302, -0.416147
// CHECK-NEXT: ( 1, 0.877583, 0.540302, -0.416147 )
// atan2 of (1, 1), (1, -1), (-1, -1), (-1, 1) = pi/4, 3pi/4, -3pi/4, -pi/4
// CHECK-NEXT: ( 0.785398, 2.35619, -2.35619, -0.785398 )
// erf(0, 0.5, 1, 2) = 0, 0.5205, 0.842701, 0.995322
// CHECK-NEXT: ( 0, 0.5205, 0.842701, 0.995322 )
// log2(2) = 1; cbrt(-27) = -3
// CHECK-NEXT: 1{{$}}
// CHECK-NEXT: -3{{$}}

// IR-LABEL: func.func @main
// IR-NOT: math.{{(exp|log|tanh|sin|cos|atan2|erf|log2|cbrt)}}
// IR: math.rsqrt
// AVX2-LABEL: func.func @inverse_roots
// AVX2: x86vector.avx.rsqrt %{{.*}} : vector<8xf32>
// AVX2: x86vector.avx.rsqrt %{{.*}} : vector<8xf32>
// AVX2-NOT: math.rsqrt
func.func @main() {
  %x = arith.constant dense<[0.0, 0.5, 1.0, 2.0]> : vector<4xf32>
  %pos = arith.constant dense<[0.5, 1.0, 2.0, 10.0]> : vector<4xf32>
  %e = math.exp %x : vector<4xf32>
  vector.print %e : vector<4xf32>
  %l = math.log %pos : vector<4xf32>
  vector.print %l : vector<4xf32>
  %t = math.tanh %x : vector<4xf32>
  vector.print %t : vector<4xf32>
  %s = math.sin %x : vector<4xf32>
  vector.print %s : vector<4xf32>
  %c = math.cos %x : vector<4xf32>
  vector.print %c : vector<4xf32>
  %ones = arith.constant dense<[1.0, 1.0, -1.0, -1.0]> : vector<4xf32>
  %xs = arith.constant dense<[1.0, -1.0, -1.0, 1.0]> : vector<4xf32>
  %a = math.atan2 %ones, %xs : vector<4xf32>
  vector.print %a : vector<4xf32>
  %er = math.erf %x : vector<4xf32>
  vector.print %er : vector<4xf32>
  %two = arith.constant 2.0 : f32
  %l2 = math.log2 %two : f32
  vector.print %l2 : f32
  %cb = arith.constant -27.0 : f32
  %r = math.cbrt %cb : f32
  vector.print %r : f32
  %w = arith.constant dense<4.0> : vector<16xf32>
  %q = func.call @inverse_roots(%w) : (vector<16xf32>) -> vector<16xf32>
  return
}

func.func @inverse_roots(%v: vector<16xf32>) -> vector<16xf32> {
  %r = math.rsqrt %v : vector<16xf32>
  return %r : vector<16xf32>
}
