// Hands a 2-D strided view to the Python callback @callback_2d, then stores into %sum the
// sum of the view's elements as read *after* the callback returned (so a write made by the
// callback is seen here). Used by memref_callbacks.py and callback_write_through.py.
func.func @callback_then_sum(%view: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                             %sum: memref<f32>) attributes { llvm.emit_c_interface } {
  call @callback_2d(%view) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %rows = memref.dim %view, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %view, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %total = scf.for %i = %c0 to %rows step %c1 iter_args(%acc = %zero) -> (f32) {
    %row_total = scf.for %j = %c0 to %cols step %c1 iter_args(%row_acc = %acc) -> (f32) {
      %x = memref.load %view[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      %next = arith.addf %row_acc, %x : f32
      scf.yield %next : f32
    }
    scf.yield %row_total : f32
  }
  memref.store %total, %sum[] : memref<f32>
  return
}

func.func private @callback_2d(memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes { llvm.emit_c_interface }
