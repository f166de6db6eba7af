// Three elementwise kernels of one module; @kernel computes three outputs per element, and
// one of its ops is wrong on purpose: o1 must be (a + b) * c, the arith.subf below computes
// (a - b) * c. tests/test_culprit_reduce.py reduces this module (60 ops) to a reproducer.
func.func @kernel(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<?xf32>,
                  %o0: memref<?xf32>, %o1: memref<?xf32>, %o2: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant 0.5 : f32
  %two = arith.constant 2.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = memref.load %b[%i] : memref<?xf32>
    %z = memref.load %c[%i] : memref<?xf32>
    // o0 = (a * b + c) * 0.5
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %p, %z : f32
    %r = arith.mulf %q, %half : f32
    memref.store %r, %o0[%i] : memref<?xf32>
    // o1 = (a + b) * c, planted wrong: arith.subf
    %s = arith.subf %x, %y : f32
    %t = arith.mulf %s, %z : f32
    memref.store %t, %o1[%i] : memref<?xf32>
    // o2 = max(a, c) * 2 - b * b
    %m = arith.maximumf %x, %z : f32
    %m2 = arith.mulf %m, %two : f32
    %bb = arith.mulf %y, %y : f32
    %u = arith.subf %m2, %bb : f32
    memref.store %u, %o2[%i] : memref<?xf32>
  }
  return
}

// out = alpha * x + y
func.func @axpy(%alpha: f32, %x: memref<?xf32>, %y: memref<?xf32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %ax = arith.mulf %alpha, %xi : f32
    %s = arith.addf %ax, %yi : f32
    memref.store %s, %out[%i] : memref<?xf32>
  }
  return
}

// the Euclidean norm of x
func.func @norm(%x: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %x, %c0 : memref<?xf32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %sq = arith.mulf %xi, %xi : f32
    %next = arith.addf %acc, %sq : f32
    scf.yield %next : f32
  }
  %root = math.sqrt %s : f32
  return %root : f32
}

// out = clamp(x, min(lo, hi), hi)
func.func @clamp(%x: memref<?xf32>, %lo: f32, %hi: f32, %out: memref<?xf32>) {
  %low = arith.minimumf %lo, %hi : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %a = arith.maximumf %xi, %low : f32
    %b = arith.minimumf %a, %hi : f32
    memref.store %b, %out[%i] : memref<?xf32>
  }
  return
}
