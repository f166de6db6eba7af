// A kernel of several dialects for tests/test_test_passes.py (-test-lower-to-llvm against
// Debian's): linalg on memrefs, affine loops, vector transfers and reductions, strided views.
func.func @kernel(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %out: memref<8x8xf32>) -> f32 {
  linalg.matmul ins(%a, %b : memref<8x8xf32>, memref<8x8xf32>) outs(%out : memref<8x8xf32>)
  %zero = arith.constant 0.0 : f32
  %acc = affine.for %i = 0 to 8 iter_args(%s = %zero) -> (f32) {
    %v = vector.transfer_read %out[%i, %i], %zero : memref<8x8xf32>, vector<4xf32>
    %r = vector.reduction <add>, %v : vector<4xf32> into f32
    %n = arith.addf %s, %r : f32
    affine.yield %n : f32
  }
  %sub = memref.subview %out[2, 2] [4, 4] [1, 1] : memref<8x8xf32> to memref<4x4xf32, strided<[8, 1], offset: 18>>
  %c0 = arith.constant 0 : index
  %x = memref.load %sub[%c0, %c0] : memref<4x4xf32, strided<[8, 1], offset: 18>>
  %t = math.exp %x : f32
  %total = arith.addf %acc, %t : f32
  return %total : f32
}
