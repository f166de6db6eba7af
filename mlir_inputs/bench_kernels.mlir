// Kernels of known cost for benchmarks and performance tests (JitFunction.benchmark,
// memref_runtime.testing.check_faster, memref-bench, benchmarks/kernel_timing.py, lit_tests/perf_*.py).

// Nothing: what the timing loop costs by itself, and what a call from Python costs on top.
func.func @empty() {
  return
}

// %n steps of a dependent multiply-add (x = 0.999 x + 1, which stays finite: it tends to 1000),
// so the time is %n times one step's latency. The state goes through memory from one call to
// the next, so that consecutive calls cannot overlap in the CPU's pipeline either: 4 * %n
// steps take 4 times as long.
func.func @chain(%n: index, %state: memref<1xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = arith.constant 0.999 : f64
  %b = arith.constant 1.0 : f64
  %x = memref.load %state[%c0] : memref<1xf64>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> f64 {
    %m = arith.mulf %acc, %a : f64
    %s = arith.addf %m, %b : f64
    scf.yield %s : f64
  }
  memref.store %r, %state[%c0] : memref<1xf64>
  return
}

// C += A B, 2 n^3 flops for n x n matrices.
func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>) {
  linalg.matmul ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%c : memref<?x?xf32>)
  return
}

// y = a x + y, one element at a time (LLVM's loop vectorizer, from -O2, does what @axpy_vector does).
func.func @axpy(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %xi = memref.load %x[%i] : memref<?xf32>
    %yi = memref.load %y[%i] : memref<?xf32>
    %p = arith.mulf %a, %xi : f32
    %s = arith.addf %p, %yi : f32
    memref.store %s, %y[%i] : memref<?xf32>
  }
  return
}
// The same, 8 lanes at a time, for sizes that are a multiple of 8.
func.func @axpy_vector(%a: f32, %x: memref<?xf32>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %va = vector.broadcast %a : f32 to vector<8xf32>
  scf.for %i = %c0 to %n step %c8 {
    %xi = vector.load %x[%i] : memref<?xf32>, vector<8xf32>
    %yi = vector.load %y[%i] : memref<?xf32>, vector<8xf32>
    %s = vector.fma %va, %xi, %yi : vector<8xf32>
    vector.store %s, %y[%i] : memref<?xf32>, vector<8xf32>
  }
  return
}
