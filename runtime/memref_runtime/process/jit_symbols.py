"""Where each JIT-compiled function lies, recorded before a crash can happen (jit_frames.py names
the native frames of a crash report with it).

LLVM's JIT tells debuggers about the code it links through the GDB JIT interface: a list, headed
by `__jit_debug_descriptor` (exported by the library that holds LLVM), of in-memory ELF objects
whose sections carry the addresses they were loaded at. MLIR's ExecutionEngine registers every
object it links there, so the symbol table of each says where every function of the module
lies, and how long it is: private functions and C-interface wrappers too.

A crash handler cannot run Python, so the functions are written down beforehand: `record(path)`
wraps the bindings' ExecutionEngine (its C++ class, which every provider's Python subclass and
every caller, JitModule, memref_runtime.testing and upstream-style tests alike, goes through) so
that after each `raw_lookup` and `initialize` (the ORC JIT links a module at its first lookup)
the objects registered since are read, and their functions appended to `path` as perf's map
files have them: `START SIZE NAME`, hexadecimal start and size. The site hook calls it in a test
process under the failure report (`<folder>/<pid>.jit`), the pytest plugin in an isolated child.

A lookup with nothing new costs one read of the list's head. Nothing here imports numpy or MLIR;
ctypes and struct are imported at the first read, by then MLIR is loaded anyway.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Any

DESCRIPTOR = "__jit_debug_descriptor"
_ENGINE_MODULE = "._mlir_libs._mlirExecutionEngine"  # the extension of every provider's ExecutionEngine
_LINKING_METHODS = ("raw_lookup", "initialize")
_FUNC = 2  # STT_FUNC
_SYMTAB = 2  # SHT_SYMTAB


def elf_functions(data: bytes) -> list[tuple[int, int, str]]:
    """(address, size, name) of each function defined in ELF object `data` (64-bit, little-endian:
    x86-64 and AArch64 Linux), at its section's address; [] for any other object. A size of 0 is
    a function LLVM compiled to nothing (its body was undefined behaviour, a store to null)."""
    import struct

    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    # (type, address, offset, size, link) of each section header (its name, flags, info left out)
    sections = [struct.unpack_from("<4xI8xQQQI", data, shoff + i * shentsize) for i in range(shnum)]
    found = []
    for kind, _, offset, size, link in sections:
        if kind != _SYMTAB:
            continue
        strings = sections[link][2]
        for at in range(offset, offset + size, 24):
            name, info, _, index, value, length = struct.unpack_from("<IBBHQQ", data, at)
            if info & 0xF != _FUNC or not 0 < index < len(sections):
                continue
            end = data.index(b"\0", strings + name)
            found.append((sections[index][1] + value, length, data[strings + name : end].decode(errors="replace")))
    return found


def _descriptor_type():
    import ctypes

    class Entry(ctypes.Structure):
        pass

    Entry._fields_ = [
        ("next", ctypes.POINTER(Entry)),
        ("prev", ctypes.POINTER(Entry)),
        ("symfile_addr", ctypes.c_void_p),
        ("symfile_size", ctypes.c_uint64),
    ]

    class Descriptor(ctypes.Structure):
        _fields_ = [
            ("version", ctypes.c_uint32),
            ("action_flag", ctypes.c_uint32),
            ("relevant_entry", ctypes.POINTER(Entry)),
            ("first_entry", ctypes.POINTER(Entry)),
        ]

    return Descriptor


def find_descriptor(libraries: list[str]):
    """`__jit_debug_descriptor` of the first loaded library in `libraries` that exports it, or None."""
    import ctypes

    mode = getattr(os, "RTLD_NOLOAD", 0) | getattr(os, "RTLD_LOCAL", 0)
    for path in libraries:
        try:
            return _descriptor_type().in_dll(ctypes.CDLL(path, mode=mode), DESCRIPTOR)
        except (OSError, ValueError):
            continue
    return None


def registered_objects(descriptor) -> list[tuple[int, int, int]]:
    """(entry address, object address, object size) of each object in the list, newest first."""
    import ctypes

    objects, entry = [], descriptor.first_entry
    while entry:
        found = entry.contents
        objects.append((ctypes.addressof(found), found.symfile_addr or 0, found.symfile_size))
        entry = found.next
    return objects


class Recorder:
    """Appends the functions of newly registered JIT objects to a map file."""

    def __init__(self, path: str, notify=None):
        self.path, self.notify = path, notify  # notify(text): says once why nothing is recorded
        self.descriptor: Any = None  # the ctypes Descriptor, once found
        self.head: int | None = None  # the list's first entry when last read
        self.seen: set[tuple[int, int, int]] = set()
        self.problem: str | None = None  # why nothing can be recorded, once known

    def _find(self) -> bool:
        from .native_stack import loaded_libraries

        if self.descriptor is None and self.problem is None:
            self.descriptor = find_descriptor(loaded_libraries())
            if self.descriptor is None:
                self._failed(f"no loaded library exports {DESCRIPTOR} (LLVM's GDB JIT interface)")
        return self.descriptor is not None

    def _failed(self, problem: str) -> None:
        if self.problem is None and self.notify is not None:
            self.notify(f"frames of JIT-compiled code unnamed: {problem}")
        self.problem = problem

    def update(self) -> None:
        """Reads the objects registered since the last call; never raises (a report helper must
        not fail the test)."""
        try:
            if not self._find():
                return
            import ctypes

            head = ctypes.cast(self.descriptor.first_entry, ctypes.c_void_p).value
            if head == self.head:
                return
            self.head = head
            new = [o for o in registered_objects(self.descriptor) if o not in self.seen]
            lines = []
            for entry in reversed(new):  # oldest first: a later line wins where addresses were reused
                self.seen.add(entry)
                if entry[1] and entry[2]:
                    lines += [
                        f"{start:x} {size:x} {name}\n"
                        for start, size, name in elf_functions(ctypes.string_at(entry[1], entry[2]))
                    ]
            if lines:
                with open(self.path, "a") as f:
                    f.writelines(lines)
        except Exception as e:  # noqa: BLE001
            self._failed(f"{type(e).__name__}: {e}")


_recorder: Recorder | None = None
_wrappers: set = set()  # the methods wrapped already (a forked child records again, with the same class)


def _after_each_call(method):
    @functools.wraps(method)
    def linking(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        finally:
            if _recorder is not None:
                _recorder.update()

    _wrappers.add(linking)
    return linking


def _wrap_engine_class(module) -> None:
    cls = getattr(module, "ExecutionEngine", None)
    for name in _LINKING_METHODS:
        method = getattr(cls, name, None)
        if method is not None and method not in _wrappers:
            setattr(cls, name, _after_each_call(method))


class _WrapOnImport:
    """Wraps the ExecutionEngine class of an extension module as it is imported (a plain finder:
    importlib.abc costs every test process ~14 ms)."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.endswith(_ENGINE_MODULE):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec: Any = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _WrappingLoader(spec.loader)
                return spec
        return None


class _WrappingLoader:
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _wrap_engine_class(module)


def record(path: str, notify=None) -> Recorder:
    """Records into `path` the functions of every object the JIT links from now on, and of those
    it linked already (an isolated child has its parent's engines); returns the Recorder.
    `notify(text)` is called once if nothing can be recorded, saying why."""
    global _recorder
    _recorder = Recorder(path, notify)
    for name, module in list(sys.modules.items()):
        if name.endswith(_ENGINE_MODULE):
            _wrap_engine_class(module)
    if not any(isinstance(f, _WrapOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _WrapOnImport())
    if any(name.endswith(_ENGINE_MODULE) for name in sys.modules):
        _recorder.update()
    return _recorder
