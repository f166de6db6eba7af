# -*- Python -*-
# The lit configuration of a project that tests its MLIR with memref-runtime (pip install
# memref-runtime). Run with `lit -sv .` here, or from CMake (CMakeLists.txt).
import memref_runtime.lit

memref_runtime.lit.configure(config, lit_config, name="downstream", mlir_inputs="inputs")
