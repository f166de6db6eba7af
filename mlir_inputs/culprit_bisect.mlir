// Three kernels whose results a wrong pass changes; tests/test_culprit_bisect.py plants one such
// pass at a time in a pipeline and bisects it.
//
// @vsum: a vector reduction of 16 floats; convert-vector-to-llvm{reassociate-fp-reductions}
// lets LLVM add them as a tree instead of in order, which changes an ill-conditioned sum.
func.func @vsum(%a: memref<16xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %v = vector.transfer_read %a[%c0], %pad : memref<16xf32>, vector<16xf32>
  %s = vector.reduction <add>, %v : vector<16xf32> into f32
  return %s : f32
}

// @asum: a sequential sum of 64 floats in an affine loop; affine-super-vectorize with
// vectorize-reductions sums four interleaved partial sums instead.
func.func @asum(%a: memref<64xf32>) -> f32 {
  %zero = arith.constant 0.0 : f32
  %s = affine.for %i = 0 to 64 iter_args(%acc = %zero) -> f32 {
    %x = affine.load %a[%i] : memref<64xf32>
    %t = arith.addf %acc, %x : f32
    affine.yield %t : f32
  }
  return %s : f32
}

// @relu: out = max(x, 0) element by element.
func.func @relu(%x: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<?xf32>
    %r = arith.maximumf %v, %zero : f32
    memref.store %r, %out[%i] : memref<?xf32>
  }
  return
}
