// Shared by the tests of this suite (%mlir_inputs/scale.mlir, or parse_input("scale.mlir")).
// @scale multiplies a vector by a factor in place, @iota returns a new vector [0, 1, ..., n-1].
func.func @scale(%x: memref<?xf32, strided<[?], offset: ?>>, %factor: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32, strided<[?], offset: ?>>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32, strided<[?], offset: ?>>
    %w = arith.mulf %v, %factor : f32
    memref.store %w, %x[%i] : memref<?xf32, strided<[?], offset: ?>>
  }
  return
}

func.func @iota(%n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %k = arith.index_cast %i : index to i64
    %f = arith.sitofp %k : i64 to f32
    memref.store %f, %r[%i] : memref<?xf32>
  }
  return %r : memref<?xf32>
}
