// Elements 3 and 4 of a memref<5xf32>, as a view at offset 3 (extract_strided_metadata +
// reinterpret_cast), cast to memref<*xf32> and handed to a Python callback.
// Used by unranked_offset_callback.py and upstream_style_runtime.py.
func.func @view_tail(%arg0: memref<5xf32>) attributes { llvm.emit_c_interface } {
  %base, %offset, %sizes, %strides = memref.extract_strided_metadata %arg0
      : memref<5xf32> -> memref<f32>, index, index, index
  %view = memref.reinterpret_cast %base to offset: [3], sizes: [2], strides: [1]
      : memref<f32> to memref<2xf32, strided<[1], offset: 3>>
  %cast = memref.cast %view : memref<2xf32, strided<[1], offset: 3>> to memref<*xf32>
  call @callback(%cast) : (memref<*xf32>) -> ()
  return
}
func.func private @callback(memref<*xf32>) attributes { llvm.emit_c_interface }
