"""JitModule: parse, read signatures, lower, JIT, and call functions with NumPy values.

    jit = JitModule(MLIR_TEXT)
    out = jit.add(a, b)               # or jit.call("add", a, b)
    jit.call("engine", x)             # a function named like an attribute of JitModule
    jit.register_callback("log", fn)  # before the first call

Ownership: the JitModule owns the Context, the lowered module, the ExecutionEngine and every
registered callback, so callbacks live exactly as long as the engine. Arrays viewing a
global keep the JitModule alive; arrays of JIT-allocated memory own that memory.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import re
import tempfile
import threading
from types import MappingProxyType

from ..bindings import bindings
from ..settings import default_runtime_verification, resolve_opt_level
from . import cache as jit_cache
from . import recording
from .benchmark import DEFAULT_REPEATS, DEFAULT_WARMUP
from .benchmark_result import BenchmarkResult
from .call_plan import build_plan, make_invoker
from .callbacks import CallbackErrors, make_trampoline
from .linked_engine import LinkedEngine
from .lowering import create_execution_engine, default_pipeline, lower_printed
from .mlir_source import parse_module
from .runner_utils import missing_runner_utils_hint, resolve_shared_libs
from .signatures import FunctionSignature, func_ops, read_signatures
from .verification import Guard, routes_asserts

__all__ = ["JitModule", "JitFunction", "prepare_module"]


def _parse(source):
    """(a module JitModule may change, its context) from MLIR text, bytecode, a path or an ir.Module."""
    ir = bindings().ir
    if isinstance(source, ir.Module):  # copy, never mutate the caller's module
        buffer = io.BytesIO()
        source.operation.write_bytecode(buffer)
        return ir.Module.parse(buffer.getvalue(), context=source.context), source.context
    context = ir.Context()
    if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source and os.path.isfile(source)):
        return parse_module(ir, None, context, path=source), context
    if not isinstance(source, (str, bytes)):
        raise TypeError(f"source: expected MLIR text, a path or an ir.Module, got {type(source).__name__}")
    return parse_module(ir, source, context), context


def prepare_module(module) -> None:
    """Adds llvm.emit_c_interface to public definitions, and makes their tensor arguments
    read-only (bufferization.writable = false) so a call never writes into an input tensor: what
    JitModule does to a module before lowering it, in place."""
    ir = bindings().ir
    context = module.context
    for op in func_ops(module):
        attrs = op.operation.attributes
        public = "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value == "public"
        if not public or len(op.operation.regions[0].blocks) == 0:
            continue
        if "llvm.emit_c_interface" not in attrs:
            attrs["llvm.emit_c_interface"] = ir.UnitAttr.get(context)
        inputs = ir.FunctionType(ir.TypeAttr(attrs["function_type"]).value).inputs
        tensors = [str(t).startswith("tensor<") for t in inputs]
        if not any(tensors):
            continue
        old = ir.ArrayAttr(attrs["arg_attrs"]) if "arg_attrs" in attrs else None
        dicts = []
        for i, is_tensor in enumerate(tensors):
            d = ir.DictAttr(old[i]) if old is not None else ir.DictAttr.get({}, context=context)
            entries = {d[j].name: d[j].attr for j in range(len(d))}
            if is_tensor:
                entries.setdefault("bufferization.writable", ir.BoolAttr.get(False, context=context))
            dicts.append(ir.DictAttr.get(entries, context=context))
        attrs["arg_attrs"] = ir.ArrayAttr.get(dicts, context=context)


# File descriptor 2 belongs to the process: two captures that overlap (modules compiling in
# two threads) would restore each other's temporary file and lose stderr for good. Reentrant,
# since nested captures in one thread restore in order.
_STDERR_LOCK = threading.RLock()


@contextlib.contextmanager
def _captured_stderr(sink: list):
    """Collects what native code writes to file descriptor 2 (LLVM's errors) while active."""
    with _STDERR_LOCK:
        try:
            saved = os.dup(2)
        except OSError:  # no stderr to capture
            yield
            return
        with tempfile.TemporaryFile() as tmp:
            os.dup2(tmp.fileno(), 2)
            try:
                yield
            finally:
                os.dup2(saved, 2)
                os.close(saved)
                tmp.seek(0)
                sink.append(tmp.read().decode(errors="replace"))


class JitFunction:
    """`jit.<name>`: calls one function of a JitModule; `.signature` says what it takes."""

    __slots__ = ("_jit", "signature", "__weakref__")

    def __init__(self, jit: JitModule, signature: FunctionSignature):
        self._jit, self.signature = jit, signature

    @property
    def owner(self) -> JitModule:
        """The JitModule whose function this is (as the plain function's `owner`)."""
        return self._jit

    def __call__(self, *args):
        jit = self._jit
        invoke = jit._invokers.get(self.signature.name) or jit._invoker(self.signature.name)
        return invoke(*args)

    def bind(self, *args):
        """Checks and packs `args` once; the returned function of no arguments calls this one on them."""
        return self._jit._invoker(self.signature.name).bind(*args)

    def benchmark(
        self,
        *args,
        warmup: float = DEFAULT_WARMUP,
        repeats: int = DEFAULT_REPEATS,
        min_time: float | None = None,
        number: int | None = None,
        flops=None,
        bytes=None,
        clock: str = "cpu",
    ) -> BenchmarkResult:
        """Times calls on `args` in a native loop (benchmark.py); returns a BenchmarkResult."""
        return self._jit._invoker(self.signature.name).benchmark(
            *args,
            warmup=warmup,
            repeats=repeats,
            min_time=min_time,
            number=number,
            flops=flops,
            bytes=bytes,
            clock=clock,
        )

    def __repr__(self) -> str:
        return f"<JitFunction {self.signature}>"


class JitModule:
    """An MLIR module, lowered and JIT-compiled, whose public functions take NumPy values."""

    def __init__(
        self,
        source,
        *,
        pipeline: str | None = None,
        opt_level: int | None = None,
        shared_libs=(),
        runner_utils: bool = True,
        runtime_verification: bool | None = None,
        lowered: str | None = None,
    ):
        """`opt_level=None` takes the suite-wide default (settings.default_opt_level(), which
        `lit -D opt_level=N` sets); `runner_utils` adds MLIR's runner-utils libraries, where the
        bindings ship them, to `shared_libs`; `runtime_verification=None` takes the suite-wide
        default too (`lit -D runtime_verification=1`). `lowered`: `source` lowered to the LLVM
        dialect elsewhere (after prepare_module; e.g. LLVM IR that `opt` optimized, imported back),
        JIT-compiled as given: `source` then gives only the signatures, `pipeline` says how it was
        lowered, and `runtime_verification` adds nothing."""
        self.opt_level = resolve_opt_level(opt_level)
        self.shared_libs = resolve_shared_libs(shared_libs, runner_utils)
        # MLIR's runtime checks; a failed check, or any failed cf.assert, makes the call raise
        # RuntimeVerificationError (verification.py).
        self.runtime_verification = (
            default_runtime_verification() if runtime_verification is None else bool(runtime_verification)
        )
        module, self.context = _parse(source)
        prepare_module(module)
        self.source = str(module)  # what was lowered: the MLIR a reproducer needs
        module, lowered = self._take_candidate(module, lowered, pipeline)
        self._signatures = read_signatures(module)
        self.pipeline = pipeline or default_pipeline(module)
        # Under lit's failure report: what memref-reduce needs to find this module again (recording.py).
        self._recorded = (
            None
            if lowered is not None
            else recording.module_made(
                self.source, source, self.pipeline, pipeline, self.opt_level, self.runtime_verification
            )
        )
        if lowered is None:
            self.module = lower_printed(module, self.source, self.pipeline, self.runtime_verification)
        else:  # lowered elsewhere already (memref_runtime.culprit): taken as it is
            self.module = module = parse_module(bindings().ir, lowered, self.context)
        self._asserts = routes_asserts(self.module)  # the linked engine gets a guard
        printed = str(self.module)  # printed once: the cache key, and whether bf16 builtins are needed
        # JIT reuse (cache.py): the linked engine of the same module, when it may be shared.
        self._cache_key = jit_cache.key_of(
            printed,
            opt_level=self.opt_level,
            shared_libs=self.shared_libs,
            runtime_verification=self.runtime_verification,
        )
        self._shared = jit_cache.take_at_creation(
            self._cache_key, may_register_callbacks=any(s.declaration for s in self._signatures.values())
        )
        self.engine = (
            self._shared.engine
            if self._shared
            else create_execution_engine(module, opt_level=self.opt_level, shared_libs=self.shared_libs, text=printed)
        )
        self._linked: LinkedEngine | None = None  # at the first call
        self._lock = threading.RLock()
        self._compiled = False
        self._broken: str | None = None
        self._invokers: dict = {}  # name -> call_plan.Invoker's function
        self._callbacks: dict = {}  # name -> (fn, ctypes function): alive as long as the engine
        # Trampolines reach this, never the JitModule: ctypes callbacks are not traversed by
        # the garbage collector, so a reference back to the module would keep it alive forever.
        self._callback_errors = CallbackErrors()

    def _take_candidate(self, module, lowered: str | None, pipeline: str | None):
        """memref-reduce's candidate in place of this module, when it reruns the test and names
        this module (recording.py): (the module, the lowered text or None)."""
        candidate = recording.candidate_for(self.source, pipeline)
        if candidate is None:
            return module, lowered
        if candidate.opt_level is not None:
            self.opt_level = candidate.opt_level
        if candidate.lowered:
            return module, candidate.text
        module = parse_module(bindings().ir, candidate.text, self.context)
        prepare_module(module)
        self.source = str(module)
        return module, lowered

    # --- what the module holds ----------------------------------------------------------

    @property
    def signatures(self) -> MappingProxyType:
        """Every `func.func` of the module (definitions and declarations) by name, as read before lowering."""
        return MappingProxyType(self._signatures)

    @property
    def functions(self) -> tuple[str, ...]:
        """Names of the public functions that can be called."""
        return tuple(n for n, s in self._signatures.items() if s.public and not s.declaration)

    def __getattr__(self, name: str) -> JitFunction:
        if name.startswith("_"):
            raise AttributeError(name)
        function = JitFunction(self, self._callable_signature(name))
        self.__dict__[name] = function  # later lookups skip __getattr__
        return function

    def __dir__(self):
        return list(super().__dir__()) + list(self.functions)

    def __repr__(self) -> str:
        return f"<JitModule functions: {', '.join(self.functions) or '(none)'}>"

    def _callable_signature(self, name: str) -> FunctionSignature:
        sig = self._signatures.get(name)
        if sig is None or not sig.public or sig.declaration:
            why = (
                "has no function"
                if sig is None
                else "declares but does not define"
                if sig.declaration
                else "has only a private"
            )
            raise AttributeError(f"the module {why} @{name}; public functions: {', '.join(self.functions) or '(none)'}")
        return sig

    # --- calls ----------------------------------------------------------------------------

    def call(self, name: str, *args):
        """Calls public function `name` with NumPy arrays and Python/NumPy scalars."""
        invoke = self._invokers.get(name) or self._invoker(name)
        return invoke(*args)

    def _invoker(self, name: str):
        """Builds (once) the call plan of `name`, linking the module on the first call."""
        sig = self._callable_signature(name)
        with self._lock:
            invoke = self._invokers.get(name)
            if invoke is None:
                linked = self._link()
                invoke = make_invoker(build_plan(sig, self), sig, linked, owner=self)
                self._invokers[name] = invoke
                recording.first_call(self._recorded, name)
                # jit.<name> becomes the plain function (no dispatch), unless the name is taken:
                # a function called `engine` must not replace the ExecutionEngine (jit.call works).
                attrs = self.__dict__
                if isinstance(attrs.get(name), JitFunction) or (name not in attrs and not hasattr(type(self), name)):
                    attrs[name] = invoke
            return invoke

    def _link(self) -> LinkedEngine:
        """The linked engine: at the first call an equal module's from the cache, or this one's
        own, linked by looking up every function once (the JIT links on the first lookup)."""
        if self._linked is not None:
            return self._linked
        if self._compiled:  # the first link failed, and an engine cannot link again
            raise RuntimeError(self._broken or "the JIT could not link the module (its first link failed)")
        self._compiled = True
        linked = self._shared or jit_cache.take_at_first_call(self._cache_key, has_callbacks=bool(self._callbacks))
        if linked is None:
            linked = self._link_own_engine()
        self.engine = linked.engine
        jit_cache.offer(self._cache_key, linked)
        self._linked = linked
        return linked

    def _link_own_engine(self) -> LinkedEngine:
        """Links this module's own engine: LLVM's errors captured, a missing symbol explained."""
        llvm_errors: list[str] = []
        with _captured_stderr(llvm_errors):
            self.engine.initialize()
            addresses = {name: self.engine.raw_lookup("_mlir_ciface_" + name) for name in self.functions}
        if not all(addresses.values()):
            self._broken = self._link_error("".join(llvm_errors))
            raise RuntimeError(self._broken)
        guard = Guard(self.engine) if self._asserts else None
        return LinkedEngine(self.engine, addresses, guard, self._callbacks, self._callback_errors)

    def _link_error(self, errors: str) -> str:
        """Why the JIT could not link: LLVM's errors, and the symbols nothing defines."""
        pending = [f"@{s.name}" for s in self._signatures.values() if s.declaration and s.name not in self._callbacks]
        symbols = re.findall(r"Symbols not found: \[([^\]]*)\]", errors)
        return (
            "the JIT could not link the module"
            + (f": {errors.strip()}" if errors.strip() else "")
            + missing_runner_utils_hint(" ".join(symbols).replace(",", " ").split(), self.shared_libs)
            + (f"\n  declarations without a registered callback: {', '.join(pending)}" if pending else "")
            + "\n  register callbacks with register_callback() before the first call, or pass "
            "shared_libs= with the libraries that define these symbols"
        )

    # --- callbacks ------------------------------------------------------------------------

    def register_callback(self, name: str, fn):
        """Makes `fn` the implementation of the private declaration @name; call before the first call.

        Memref arguments arrive as NumPy views of the caller's memory (writes reach it),
        scalars as numbers; a scalar result is passed back. An exception raised by `fn` is
        re-raised by the `call` during which it happened. Returns `fn`.
        """
        if not callable(fn):
            raise TypeError(f"register_callback({name!r}, fn): expected a callable, got {type(fn).__name__}")
        sig = self._signatures.get(name)
        if sig is None or not sig.declaration:
            declared = [f"@{s.name}" for s in self._signatures.values() if s.declaration]
            raise ValueError(
                f"register_callback({name!r}): the module "
                + ("defines" if sig is not None else "has no declaration")
                + f" @{name}; a callback "
                f"implements a private func.func declaration (no body); declarations: "
                f"{', '.join(declared) or '(none)'}"
            )
        with self._lock:
            if self._compiled:
                raise RuntimeError(
                    f"register_callback({name!r}): the module was compiled by a first call already and "
                    "the JIT resolves symbols only once; register every callback before the first call"
                )
            # Under the guard, Python runs with the thread's jump buffer cleared (verification.py).
            called = Guard.outside(fn) if self._asserts else fn
            cfunc, symbol = make_trampoline(sig, called, self._callback_errors.record)
            # The address alone: ctypes.cast would store `cfunc` in its own _objects (a cycle
            # that outlives the engine until the next garbage collection); _callbacks keeps it.
            address = ctypes.c_void_p.from_address(ctypes.addressof(cfunc)).value
            self.engine.raw_register_runtime(symbol, ctypes.c_void_p(address))
            self._callbacks[name] = (fn, cfunc)
        return fn
