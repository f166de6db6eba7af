"""Reading a module in this process: its signatures, its ops, counted."""

from __future__ import annotations

from ..bindings import bindings
from ..jit.mlir_source import parse_module
from ..jit.signatures import read_signatures


def parent_context():
    """A Context for reading modules here, single-threaded: a thread pool that ran here would
    hang in the children forked later (isolation.py)."""
    context = bindings().ir.Context()
    context.enable_multithreading(False)
    return context


def signature_of(source: str, name: str):
    """The FunctionSignature of public function `name` of `source`; ValueError naming the others."""
    with parent_context() as context:
        signatures = read_signatures(parse_module(bindings().ir, source, context))
    sig = signatures.get(name)
    if sig is None or sig.declaration or not sig.public:
        public = [f"@{s.name}" for s in signatures.values() if s.public and not s.declaration]
        raise ValueError(f"function: the module has no public function @{name}; it has {', '.join(public) or 'none'}")
    return sig
