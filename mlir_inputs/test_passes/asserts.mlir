// cf.assert in several shapes, for tests/test_test_passes.py (-test-cf-assert against Debian's):
// nested regions, several blocks (visited in dominance order), a message with quotes, a
// newline and non-ASCII bytes, a symbol named like the message globals already taken, a puts
// already declared in a nested module, ops that fold.
module {
  llvm.mlir.global private constant @assert_msg(dense<[33, 0]> : tensor<2xi8>) {addr_space = 0 : i32} : !llvm.array<2 x i8>

  func.func @checks(%a: i32, %b: i32, %v: vector<4xf32>) -> i32 {
    %lt = arith.cmpi slt, %a, %b : i32
    cf.assert %lt, "a < b"
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %five = arith.addi %c2, %c3 : i32
    %ok = arith.cmpi sgt, %five, %a : i32
    scf.execute_region {
      cf.assert %ok, "inside \"a region\"\n"
      scf.yield
    }
    %e = vector.extract %v[2] : f32 from vector<4xf32>
    %w = vector.insert %e, %v [0] : f32 into vector<4xf32>
    %back = vector.extract %w[0] : f32 from vector<4xf32>
    %pos = arith.cmpf ogt, %back, %back : f32
    cf.assert %pos, "caf\C3\A9 \E2\9C\93"
    return %five : i32
  }

  func.func @blocks(%c: i1) {
    cf.br ^second
  ^first:
    cf.assert %c, "first block"
    return
  ^second:
    cf.assert %c, "second block"
    cf.br ^first
  }

  module @inner {
    llvm.func @puts(!llvm.ptr)
    func.func @nested(%c: i1) {
      cf.assert %c, "in a nested module"
      return
    }
  }
}
