// %mlir_async_runtime: async.execute lowered to coroutines that call the async runtime.
// mlir-runner needs -O3 here, as upstream's Async tests give it: the coroutine lowering is
// part of LLVM's optimization pipeline.
//
// RUN: mlir-opt %s -pass-pipeline="builtin.module(async-to-async-runtime,func.func(async-runtime-ref-counting,async-runtime-ref-counting-opt),convert-async-to-llvm,convert-to-llvm,reconcile-unrealized-casts)" \
// RUN: | mlir-runner -e main -entry-point-result=void -O3 \
// RUN:     -shared-libs=%mlir_c_runner_utils -shared-libs=%mlir_async_runtime \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, mlir-tools

// The task yields 6 * 7; awaiting it gives 42, then the group of two tasks completes.
// CHECK: 42{{$}}
// CHECK-NEXT: 2{{$}}
func.func @main() {
  %token, %value = async.execute -> !async.value<i32> {
    %six = arith.constant 6 : i32
    %seven = arith.constant 7 : i32
    %product = arith.muli %six, %seven : i32
    async.yield %product : i32
  }
  %v = async.await %value : !async.value<i32>
  vector.print %v : i32
  %c2 = arith.constant 2 : index
  %group = async.create_group %c2 : !async.group
  %t0 = async.execute { async.yield }
  %t1 = async.execute { async.yield }
  %i0 = async.add_to_group %t0, %group : !async.token
  %i1 = async.add_to_group %t1, %group : !async.token
  async.await_all %group
  %n = arith.addi %i0, %i1 : index
  %one = arith.constant 1 : index
  %count = arith.addi %n, %one : index
  vector.print %count : index
  return
}
