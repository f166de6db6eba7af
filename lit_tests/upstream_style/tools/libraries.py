"""What a runtime-library substitution names: the file, and a symbol it must export."""

import ctypes
import os


def describe(path: str, lib_dir: str, shlibext: str, symbol: str) -> str:
    """`%mlir_lib_dir/<name>%shlibext: <symbol> found`, or what differs from that."""
    name = os.path.basename(path)
    if not os.path.isfile(path):
        return f"{path}: no such file"
    folder = "%mlir_lib_dir" if os.path.samefile(os.path.dirname(path), lib_dir) else os.path.dirname(path)
    stem = name[: -len(shlibext)] + "%shlibext" if name.endswith(shlibext) else name
    found = "found" if hasattr(ctypes.CDLL(path), symbol) else "MISSING"
    return f"{folder}/{stem}: {symbol} {found}"
