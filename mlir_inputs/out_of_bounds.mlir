// Kernels whose accesses runtime verification checks: a store at a caller-given index, and an
// elementwise add whose three dynamic sizes must agree (linalg.add does not check them itself).
func.func @store_at(%m: memref<?xf32>, %i: index, %x: f32) attributes {llvm.emit_c_interface} {
  memref.store %x, %m[%i] : memref<?xf32>
  return
}

func.func @add(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>) attributes {llvm.emit_c_interface} {
  linalg.add ins(%a, %b : memref<?xf32>, memref<?xf32>) outs(%c : memref<?xf32>)
  return
}
