// An upstream-style execution test: @main prints what three helpers compute (2 + 5, 2 * 5,
// 5 / 2), one per line. @add is wrong on purpose (arith.subf): it prints -3 where 7 is meant.
// tests/test_culprit_reduce.py reduces it with an mlir-opt | mlir-runner | grep script.
func.func private @add(%x: f32, %y: f32) -> f32 {
  %s = arith.subf %x, %y : f32
  return %s : f32
}

func.func private @mul(%x: f32, %y: f32) -> f32 {
  %p = arith.mulf %x, %y : f32
  return %p : f32
}

func.func private @div(%x: f32, %y: f32) -> f32 {
  %q = arith.divf %x, %y : f32
  return %q : f32
}

func.func @main() {
  %two = arith.constant 2.0 : f32
  %five = arith.constant 5.0 : f32
  %s = call @add(%two, %five) : (f32, f32) -> f32
  vector.print %s : f32
  %p = call @mul(%two, %five) : (f32, f32) -> f32
  vector.print %p : f32
  %q = call @div(%five, %two) : (f32, f32) -> f32
  vector.print %q : f32
  return
}
