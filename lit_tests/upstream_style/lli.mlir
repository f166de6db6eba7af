// %lli and %mlir_native_utils_lib_dir, as upstream's LLVMIR/CPU tests use them: the module is
// translated to LLVM IR and interpreted by lli, with the C runner utils loaded from the folder.
//
// RUN: mlir-opt %s --convert-vector-to-llvm --convert-func-to-llvm --convert-arith-to-llvm \
// RUN:     --reconcile-unrealized-casts \
// RUN: | mlir-translate -mlir-to-llvmir \
// RUN: | %lli --entry-function=entry \
// RUN:     --dlopen=%mlir_native_utils_lib_dir/libmlir_c_runner_utils%shlibext \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils, mlir-tools

// 3 + 4 = 7, and the vector reduction of [1, 2, 3, 4] is 10.
// CHECK: 7{{$}}
// CHECK-NEXT: 10{{$}}
func.func @entry() -> i32 {
  %a = arith.constant 3 : i32
  %b = arith.constant 4 : i32
  %c = arith.addi %a, %b : i32
  vector.print %c : i32
  %v = arith.constant dense<[1, 2, 3, 4]> : vector<4xi32>
  %r = vector.reduction <add>, %v : vector<4xi32> into i32
  vector.print %r : i32
  // lli's exit status is what the entry function returns, as in upstream's lli tests.
  %ok = arith.constant 0 : i32
  return %ok : i32
}
