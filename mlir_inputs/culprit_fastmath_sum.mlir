// A sequential sum whose additions allow reassociation (fastmath<reassoc>): the JIT at -O0 adds
// in order, at -O2/-O3 LLVM's loop vectorizer keeps several partial sums, which changes an
// ill-conditioned sum. tests/test_culprit_llvm.py bisects LLVM's optimizations on it.
func.func @sum(%a: memref<?xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?xf32>
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %a[%i] : memref<?xf32>
    %t = arith.addf %acc, %x fastmath<reassoc> : f32
    scf.yield %t : f32
  }
  return %s : f32
}
