// Hands an unranked f32 memref, as received, to the Python callback @callback_unranked.
// Used by memref_callbacks.py and zero_d_and_empty_callbacks.py.
func.func @pass_unranked(%arg0: memref<*xf32>) attributes { llvm.emit_c_interface } {
  call @callback_unranked(%arg0) : (memref<*xf32>) -> ()
  return
}

func.func private @callback_unranked(memref<*xf32>) attributes { llvm.emit_c_interface }
