// Wide integers for tests/test_test_passes.py (-test-arith-emulate-wide-int against Debian's):
// functions with and without the prefixes used, calls out of an emulated function, loop-carried
// values, block arguments, constants, comparisons and selects. @vector_emulate only under
// function-prefix=vector_: upstream's pass bitcasts its vector<4xi64> arguments to
// vector<4x2xi32>, which llvm.bitcast does not take, and fails.
func.func @emulate_scalar(%a: i64, %b: i64) -> (i64, i1) {
  %c7 = arith.constant 7 : i64
  %s = arith.addi %a, %b : i64
  %m = arith.muli %s, %c7 : i64
  %t = arith.subi %m, %a : i64
  %lt = arith.cmpi ult, %t, %b : i64
  %r = arith.select %lt, %t, %b : i64
  %h = func.call @helper(%r) : (i64) -> i64
  return %h, %lt : i64, i1
}

func.func @vector_emulate(%v: vector<4xi64>, %w: vector<4xi64>) -> vector<4xi64> {
  %x = arith.xori %v, %w : vector<4xi64>
  %c = arith.constant dense<[1, 2, 3, 4]> : vector<4xi64>
  %y = arith.shli %x, %c : vector<4xi64>
  return %y : vector<4xi64>
}

func.func @emulate_loop(%n: index, %init: i64) -> i64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (i64) {
    %k = arith.index_cast %i : index to i64
    %s = arith.addi %acc, %k : i64
    scf.yield %s : i64
  }
  cf.br ^done(%r : i64)
^done(%x: i64):
  %y = arith.andi %x, %init : i64
  return %y : i64
}

func.func @narrow_sum(%a: i32, %b: i32) -> i32 {
  %s = arith.addi %a, %b : i32
  %e = arith.extsi %s : i32 to i64
  %t = arith.trunci %e : i64 to i32
  return %t : i32
}

func.func @helper(%a: i64) -> i64 {
  %s = arith.addi %a, %a : i64
  return %s : i64
}
