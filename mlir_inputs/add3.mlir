// c = a + b, element by element, over three 1-D f32 memrefs of the same size: an scf.for loop
// (lowered without linalg), with the C interface upstream's ExecutionEngine.invoke calls.
// Used by benchmarks/run.py (the typed-call rows) and tests/test_jit_cache.py (which makes a
// c = a - b of it by text).
func.func @add3(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) attributes { llvm.emit_c_interface } {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<?xf32>
  }
  return
}
