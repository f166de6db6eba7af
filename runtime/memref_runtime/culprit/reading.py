"""Reading a module in this process: its signatures, its ops, counted."""

from __future__ import annotations

import os

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


def read_module(module) -> str:
    """MLIR text from `module`: the text itself, or a path to read (a str without a newline or a
    brace, or an os.PathLike); FileNotFoundError or TypeError naming the argument otherwise."""
    if isinstance(module, str) and ("\n" in module or "{" in module):
        return module
    if not isinstance(module, (str, os.PathLike)):
        raise TypeError(f"module: expected MLIR text or a path, got {type(module).__name__}")
    if not os.path.isfile(module):
        raise FileNotFoundError(
            f"module: expected MLIR text or the path of a file, got {os.fspath(module)!r}, which is no file"
        )
    with open(module) as f:
        return f.read()
