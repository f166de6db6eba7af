"""`func.func` signatures read from an `ir.Module` into plain data, before lowering.

Everything after this module (call plans, callbacks) works from these records and never
touches MLIR objects, so a signature is read once and the hot path stays in plain Python.
Tensor types are read as the memrefs one-shot bufferization makes of them at a function
boundary (identity layout), since that is what the lowered code receives and returns.
"""

from __future__ import annotations

import ctypes
from typing import Any, NamedTuple

from ..bindings import bindings
from ..descriptors import MAX_RANK
from ..element_types import element_type_for_mlir

DYNAMIC = None  # a `?` size, stride or offset
_MLIR_DYNAMIC = -(2**63)  # how the bindings spell `?` (ShapedType.get_dynamic_size())


class ScalarKind(NamedTuple):
    """How one scalar type sits in memory and crosses the C boundary."""

    fmt: str  # struct format of the value in memory ("ff" for complex<f32>)
    kind: str  # "bool", "int" (signless), "sint", "uint", "float", "complex"
    bits: int
    ctype: type | None  # by-value ctypes type for callbacks; None where the C ABI differs from LLVM's


# Signless integers accept both the signed and the unsigned range and are returned signed,
# as MLIR's arith dialect reads them.
SCALAR_KINDS: dict[str, ScalarKind] = {
    "i1": ScalarKind("?", "bool", 1, ctypes.c_bool),
    "i8": ScalarKind("b", "int", 8, ctypes.c_int8),
    "i16": ScalarKind("h", "int", 16, ctypes.c_int16),
    "i32": ScalarKind("i", "int", 32, ctypes.c_int32),
    "i64": ScalarKind("q", "int", 64, ctypes.c_int64),
    "index": ScalarKind("q", "sint", 64, ctypes.c_int64),
    "si8": ScalarKind("b", "sint", 8, ctypes.c_int8),
    "si16": ScalarKind("h", "sint", 16, ctypes.c_int16),
    "si32": ScalarKind("i", "sint", 32, ctypes.c_int32),
    "si64": ScalarKind("q", "sint", 64, ctypes.c_int64),
    "ui8": ScalarKind("B", "uint", 8, ctypes.c_uint8),
    "ui16": ScalarKind("H", "uint", 16, ctypes.c_uint16),
    "ui32": ScalarKind("I", "uint", 32, ctypes.c_uint32),
    "ui64": ScalarKind("Q", "uint", 64, ctypes.c_uint64),
    # LLVM passes half and {float, float} in registers differently from C, so callbacks
    # cannot take them by value; calls are fine (the packed wrapper loads them from memory).
    "f16": ScalarKind("e", "float", 16, None),
    "f32": ScalarKind("f", "float", 32, ctypes.c_float),
    "f64": ScalarKind("d", "float", 64, ctypes.c_double),
    "complex<f32>": ScalarKind("ff", "complex", 64, None),
    "complex<f64>": ScalarKind("dd", "complex", 128, None),
}


class ScalarSpec(NamedTuple):
    """A scalar parameter or result."""

    mlir: str
    scalar: ScalarKind


class MemRefSpec(NamedTuple):
    """A memref (or bufferized tensor) parameter or result."""

    mlir: str
    element: str  # MLIR element type, e.g. "f32"
    shape: tuple | None  # None: unranked; DYNAMIC entries for `?`
    identity: bool  # identity layout: the native code assumes a C-contiguous array
    strides: tuple | None  # element strides of a strided layout (DYNAMIC for `?`), None if identity
    offset: int | None  # static offset of a strided layout, DYNAMIC for `?`
    writable: bool  # False only for tensors bufferized with bufferization.writable = false

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)


class UnsupportedSpec(NamedTuple):
    """A type JitModule cannot pass (vector, tuple, non-strided layout, ...): why, for the error."""

    mlir: str
    reason: str


ValueSpec = ScalarSpec | MemRefSpec | UnsupportedSpec


class FunctionSignature(NamedTuple):
    """One `func.func` as JitModule calls it or receives a callback through it."""

    name: str
    inputs: tuple
    results: tuple
    public: bool
    declaration: bool  # no body: an external function or a callback
    c_interface: bool  # has llvm.emit_c_interface

    def __str__(self) -> str:
        results = ", ".join(r.mlir for r in self.results)
        arrow = "" if not self.results else f" -> {results}" if len(self.results) == 1 else f" -> ({results})"
        return f"@{self.name}({', '.join(a.mlir for a in self.inputs)}){arrow}"


def _downcast(cls, t):
    """`t` as `cls` if it is one (new bindings downcast already; older ones have cls.isinstance)."""
    if isinstance(t, cls):
        return t
    check = getattr(cls, "isinstance", None)
    return cls(t) if check is not None and check(t) else None


def _dims(values) -> tuple:
    return tuple(DYNAMIC if v == _MLIR_DYNAMIC else v for v in values)


def _supported(spec: MemRefSpec) -> ValueSpec:
    """`spec`, or an UnsupportedSpec saying why no NumPy array can stand for it."""
    if spec.shape is not None and len(spec.shape) > MAX_RANK:
        return UnsupportedSpec(spec.mlir, f"its rank {len(spec.shape)} exceeds NumPy's limit of {MAX_RANK} dimensions")
    try:
        element_type_for_mlir(spec.element)
    except (TypeError, ImportError) as e:  # no NumPy dtype (i4, vector<4xf32>), or ml_dtypes missing
        return UnsupportedSpec(spec.mlir, str(e))
    return spec


def _memref_spec(ir, t, writable: bool) -> ValueSpec | None:
    """`writable` counts for tensors only: bufferization copies a `bufferization.writable = false`
    tensor before writing, while a memref parameter may be written whatever its attributes say."""
    text = str(t)
    u = _downcast(ir.UnrankedTensorType, t)
    if u is not None:
        return MemRefSpec(text, str(u.element_type), None, False, None, DYNAMIC, writable)
    u = _downcast(ir.UnrankedMemRefType, t)
    if u is not None:
        return MemRefSpec(text, str(u.element_type), None, False, None, DYNAMIC, True)
    tensor = _downcast(ir.RankedTensorType, t)
    if tensor is not None:  # identity-layout-map at the function boundary
        return MemRefSpec(text, str(tensor.element_type), _dims(tensor.shape), True, None, 0, writable)
    memref = _downcast(ir.MemRefType, t)
    if memref is None:
        return None
    shape = _dims(memref.shape)
    layout = memref.layout
    if isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(
        len(shape), context=t.context
    ):
        return MemRefSpec(text, str(memref.element_type), shape, True, None, 0, True)
    try:
        strides, offset = memref.get_strides_and_offset()
    except Exception:  # noqa: BLE001 - the bindings raise a bare error for non-strided maps
        return UnsupportedSpec(text, "its layout is not strided")
    return MemRefSpec(text, str(memref.element_type), shape, False, _dims(strides), _dims([offset])[0], True)


def value_spec(t: Any, writable: bool = True) -> ValueSpec:
    """The spec of one MLIR type (an `ir.Type`)."""
    ir = bindings().ir
    spec = _memref_spec(ir, t, writable)
    if isinstance(spec, MemRefSpec):
        return _supported(spec)
    if spec is not None:
        return spec
    text = str(t)
    scalar = SCALAR_KINDS.get(text)
    if scalar is not None:
        return ScalarSpec(text, scalar)
    return UnsupportedSpec(text, "JitModule passes memrefs, tensors and scalars (" + ", ".join(SCALAR_KINDS) + ") only")


def _arg_writable(op, index: int) -> bool:
    ir = bindings().ir
    if "arg_attrs" not in op.attributes:
        return True
    attrs = ir.DictAttr(ir.ArrayAttr(op.attributes["arg_attrs"])[index])
    if "bufferization.writable" not in attrs:
        return True
    return ir.BoolAttr(attrs["bufferization.writable"]).value


def func_ops(module: Any) -> list[Any]:
    """The `func.func` operations at the top level of `module`."""
    return [op for op in module.body.operations if op.operation.name == "func.func"]


def read_signature(op: Any) -> FunctionSignature:
    """The signature of one `func.func` operation."""
    ir = bindings().ir
    attrs = op.operation.attributes
    ftype = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value)
    visibility = ir.StringAttr(attrs["sym_visibility"]).value if "sym_visibility" in attrs else "public"
    return FunctionSignature(
        name=ir.StringAttr(attrs["sym_name"]).value,
        inputs=tuple(value_spec(t, _arg_writable(op.operation, i)) for i, t in enumerate(ftype.inputs)),
        results=tuple(value_spec(t) for t in ftype.results),
        public=visibility == "public",
        declaration=len(op.operation.regions[0].blocks) == 0,
        c_interface="llvm.emit_c_interface" in attrs,
    )


def read_signatures(module: Any) -> dict[str, FunctionSignature]:
    """Every top-level `func.func` of `module`, by name."""
    return {s.name: s for s in map(read_signature, func_ops(module))}
