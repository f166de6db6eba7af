// The sum of a 1-D f64 memref, an scf.for loop: @total returns it; @sum stores it into a 0-d
// memref and @sum_unranked does the same for an unranked one (C-interface functions, which
// upstream's ExecutionEngine.invoke calls). Used by tests/test_memory.py and tests/test_interop.py.
func.func @total(%a: memref<?xf64>) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %n = memref.dim %a, %c0 : memref<?xf64>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f64 {
    %x = memref.load %a[%i] : memref<?xf64>
    %y = arith.addf %acc, %x : f64
    scf.yield %y : f64
  }
  return %s : f64
}
func.func @sum(%a: memref<?xf64>, %out: memref<f64>) attributes { llvm.emit_c_interface } {
  %s = call @total(%a) : (memref<?xf64>) -> f64
  memref.store %s, %out[] : memref<f64>
  return
}
func.func @sum_unranked(%a: memref<*xf64>, %out: memref<f64>) attributes { llvm.emit_c_interface } {
  %r = memref.cast %a : memref<*xf64> to memref<?xf64>
  call @sum(%r, %out) : (memref<?xf64>, memref<f64>) -> ()
  return
}
