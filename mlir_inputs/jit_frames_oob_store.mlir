// An out-of-bounds store: @kernel calls the private @store_at, which writes a[i] for any i
// (no runtime verification). tests/test_jit_frames.py calls @kernel with i = 2^40, which
// crashes, to see the frames of both functions named in the crash report.
func.func private @store_at(%a: memref<?xf32>, %i: index) {
  %one = arith.constant 1.0 : f32
  memref.store %one, %a[%i] : memref<?xf32>
  return
}

func.func @kernel(%a: memref<?xf32>, %i: index) attributes {llvm.emit_c_interface} {
  func.call @store_at(%a, %i) : (memref<?xf32>, index) -> ()
  return
}
