// UPDATE-CHECKS: hand-written: the values are worked out by hand below; the IR prefix checks only the emulated widths
// -test-arith-emulate-wide-int only in the functions named with the prefix: @wide_mix's i32
// arithmetic runs on pairs of i16 (widest-int-supported=16), @native_mix is the same body left
// alone; both print, and a cf.assert (-test-cf-assert, after the emulation here) compares them.
//
// RUN: mlir-opt %s -test-arith-emulate-wide-int="widest-int-supported=16 function-prefix=wide_" \
// RUN:   -test-cf-assert -test-lower-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
//
// Right after the pass: the signature stays i32, llvm.bitcast joins it to the vector<2xi16>
// halves, and the function without the prefix is untouched.
// RUN: mlir-opt %s -test-arith-emulate-wide-int="widest-int-supported=16 function-prefix=wide_" \
// RUN: | FileCheck %s --check-prefix=IR
// REQUIRES: host-supports-jit, runner-utils

// mix(a, b) = (((a + b) * b) xor a) >> 3 (logical), all modulo 2^32, printed as signed i32:
//   (123456, 789):  124245 * 789 = 98029305; xor 123456, >> 3         = 12240279
//   (-5, 100000):   99995 * 100000 wraps mod 2^32; xor, >> 3           = 360675235
//   (-1, -1):       -2 * -1 = 2; 2 xor 0xFFFFFFFF = 0xFFFFFFFD; >> 3   = 536870911
//   (65535, 65537): 0x20000 * 0x10001 = 0x20000 mod 2^32; xor 0xFFFF = 0x2FFFF; >> 3 = 24575
// CHECK: 12240279
// CHECK-NEXT: 12240279
// CHECK-NEXT: 360675235
// CHECK-NEXT: 360675235
// CHECK-NEXT: 536870911
// CHECK-NEXT: 536870911
// CHECK-NEXT: 24575
// CHECK-NEXT: 24575
// CHECK-NOT: emulated and native differ

// IR-LABEL: func.func @wide_mix(%arg0: i32, %arg1: i32) -> i32
// IR: llvm.bitcast %{{.*}} : i32 to vector<2xi16>
// IR: arith.addui_extended {{.*}} : i16, i1
// IR: arith.mului_extended {{.*}} : i16
// IR: %[[OUT:.*]] = llvm.bitcast %{{.*}} : vector<2xi16> to i32
// IR: return %[[OUT]] : i32
// IR-LABEL: func.func @native_mix(%arg0: i32, %arg1: i32) -> i32
// IR-NEXT: arith.constant 3 : i32
// IR-NEXT: arith.addi %arg0, %arg1 : i32
func.func @wide_mix(%a: i32, %b: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %s = arith.addi %a, %b : i32
  %p = arith.muli %s, %b : i32
  %x = arith.xori %p, %a : i32
  %r = arith.shrui %x, %c3 : i32
  return %r : i32
}

func.func @native_mix(%a: i32, %b: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %s = arith.addi %a, %b : i32
  %p = arith.muli %s, %b : i32
  %x = arith.xori %p, %a : i32
  %r = arith.shrui %x, %c3 : i32
  return %r : i32
}

func.func @both(%a: i32, %b: i32) {
  %w = func.call @wide_mix(%a, %b) : (i32, i32) -> i32
  %n = func.call @native_mix(%a, %b) : (i32, i32) -> i32
  vector.print %w : i32
  vector.print %n : i32
  %same = arith.cmpi eq, %w, %n : i32
  cf.assert %same, "emulated and native differ"
  return
}

func.func @main() {
  %a0 = arith.constant 123456 : i32
  %b0 = arith.constant 789 : i32
  func.call @both(%a0, %b0) : (i32, i32) -> ()
  %a1 = arith.constant -5 : i32
  %b1 = arith.constant 100000 : i32
  func.call @both(%a1, %b1) : (i32, i32) -> ()
  %m1 = arith.constant -1 : i32
  func.call @both(%m1, %m1) : (i32, i32) -> ()
  %a3 = arith.constant 65535 : i32
  %b3 = arith.constant 65537 : i32
  func.call @both(%a3, %b3) : (i32, i32) -> ()
  return
}
