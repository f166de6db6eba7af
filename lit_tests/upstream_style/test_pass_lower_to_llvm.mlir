// An mlir-opt test-only pass, as upstream's Integration tests use it: -test-lower-to-llvm.
// The wheel's mlir-opt lacks it; a same-version mlir-opt that has it runs this RUN line
// instead (Debian's mlir-22-tools), else the wheel's through memref-runtime's wrapper, which
// runs upstream's pipeline of public passes for it (lit -a shows which ran).
//
// RUN: mlir-opt %s -test-lower-to-llvm \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils \
// RUN: | FileCheck %s
// REQUIRES: host-supports-jit, runner-utils

// [1, 2, 3] + [10, 20, 30] = [11, 22, 33]; its sum is 66; the 2x2 matmul
// [[1, 2], [3, 4]] x [[5, 6], [7, 8]] = [[19, 22], [43, 50]].
// CHECK: ( 11, 22, 33 )
// CHECK-NEXT: 66{{$}}
// CHECK-NEXT: ( ( 19, 22 ), ( 43, 50 ) )
func.func @main() {
  %a = arith.constant dense<[1.0, 2.0, 3.0]> : vector<3xf32>
  %b = arith.constant dense<[10.0, 20.0, 30.0]> : vector<3xf32>
  %c = arith.addf %a, %b : vector<3xf32>
  vector.print %c : vector<3xf32>
  %s = vector.reduction <add>, %c : vector<3xf32> into f32
  vector.print %s : f32
  %x = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : vector<2x2xf32>
  %y = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : vector<2x2xf32>
  %z = arith.constant dense<0.0> : vector<2x2xf32>
  %m = vector.contract {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
                                         affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>}
       %x, %y, %z : vector<2x2xf32>, vector<2x2xf32> into vector<2x2xf32>
  vector.print %m : vector<2x2xf32>
  return
}
