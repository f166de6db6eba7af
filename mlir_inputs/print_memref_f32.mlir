// printMemrefF32 (from libmlir_runner_utils) on a view passed in (@print_2d, called from
// print_memref_runner_utils.py) and on a constant (@main, run by mlir_runner_print_memref.mlir
// through mlir-runner).
memref.global "private" constant @table : memref<2x3xf32> = dense<[[1.5, 2.0, -3.0], [4.0, 0.25, 6.0]]>

func.func @print_2d(%view: memref<?x?xf32, strided<[?, ?], offset: ?>>)
    attributes { llvm.emit_c_interface } {
  %unranked = memref.cast %view : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<*xf32>
  call @printMemrefF32(%unranked) : (memref<*xf32>) -> ()
  return
}

func.func @main() attributes { llvm.emit_c_interface } {
  %table = memref.get_global @table : memref<2x3xf32>
  %view = memref.cast %table : memref<2x3xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
  call @print_2d(%view) : (memref<?x?xf32, strided<[?, ?], offset: ?>>) -> ()
  return
}

func.func private @printMemrefF32(memref<*xf32>) attributes { llvm.emit_c_interface }
