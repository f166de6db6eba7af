// Three element-wise adds out = a + b over 2-D strided views, for differential testing
// (lit_tests/differential_add.py, tests/test_differential.py): @add is right; @add_off_by_one
// stops each row one column early; @add_ignoring_layout reads %a as if it were contiguous from
// its first element (row stride = the number of columns, column stride 1), whatever its strides.
func.func @add(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>,
               %out: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  linalg.add ins(%a, %b : memref<?x?xf32, strided<[?, ?], offset: ?>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
             outs(%out : memref<?x?xf32, strided<[?, ?], offset: ?>>)
  return
}

func.func @add_off_by_one(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                          %out: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %last = arith.subi %cols, %c1 : index
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %last step %c1 {
      %x = memref.load %a[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      %y = memref.load %b[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      %s = arith.addf %x, %y : f32
      memref.store %s, %out[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
    }
  }
  return
}

func.func @add_ignoring_layout(%a: memref<?x?xf32, strided<[?, ?], offset: ?>>, %b: memref<?x?xf32, strided<[?, ?], offset: ?>>,
                               %out: memref<?x?xf32, strided<[?, ?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = memref.dim %a, %c0 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %cols = memref.dim %a, %c1 : memref<?x?xf32, strided<[?, ?], offset: ?>>
  %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %a
      : memref<?x?xf32, strided<[?, ?], offset: ?>> -> memref<f32>, index, index, index, index, index
  %flat = memref.reinterpret_cast %base to offset: [0], sizes: [%rows, %cols], strides: [%cols, 1]
      : memref<f32> to memref<?x?xf32, strided<[?, 1]>>
  linalg.add ins(%flat, %b : memref<?x?xf32, strided<[?, 1]>>, memref<?x?xf32, strided<[?, ?], offset: ?>>)
             outs(%out : memref<?x?xf32, strided<[?, ?], offset: ?>>)
  return
}
