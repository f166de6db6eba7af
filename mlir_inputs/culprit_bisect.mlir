// Three kernels whose results a wrong pass changes; tests/test_culprit_bisect.py plants one such
// pass at a time in a pipeline and bisects it. @main prints what they compute on the inputs
// below, for mlir-runner: 14, 62 and ( 0, 0, 0, 1.5, 3 ) when they are right.
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

// Large values that cancel and small ones that survive only when added in order.
memref.global "private" constant @x16 : memref<16xf32> = dense<[1.0, 1.0e8, 1.0, -1.0e8, 3.0, 7.0, -2.0, 5.0e7,
                                                               1.0, -5.0e7, 2.0, 2.0, 1.0e7, -1.0e7, 1.0, 1.0]>
memref.global "private" constant @x5 : memref<5xf32> = dense<[-2.0, -0.5, 0.0, 1.5, 3.0]>

func.func @main() {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %pad = arith.constant 0.0 : f32
  %x16 = memref.get_global @x16 : memref<16xf32>
  %s = call @vsum(%x16) : (memref<16xf32>) -> f32
  vector.print %s : f32
  // @x16 four times over
  %x64 = memref.alloc() : memref<64xf32>
  scf.for %i = %c0 to %c64 step %c16 {
    %part = memref.subview %x64[%i] [16] [1] : memref<64xf32> to memref<16xf32, strided<[1], offset: ?>>
    memref.copy %x16, %part : memref<16xf32> to memref<16xf32, strided<[1], offset: ?>>
  }
  %t = call @asum(%x64) : (memref<64xf32>) -> f32
  vector.print %t : f32
  memref.dealloc %x64 : memref<64xf32>
  %x5 = memref.get_global @x5 : memref<5xf32>
  %x = memref.cast %x5 : memref<5xf32> to memref<?xf32>
  %out = memref.alloc(%c5) : memref<?xf32>
  call @relu(%x, %out) : (memref<?xf32>, memref<?xf32>) -> ()
  %r = vector.transfer_read %out[%c0], %pad : memref<?xf32>, vector<5xf32>
  vector.print %r : vector<5xf32>
  memref.dealloc %out : memref<?xf32>
  return
}
