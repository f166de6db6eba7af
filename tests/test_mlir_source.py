"""A parse error shows the MLIR lines it points at (mlir_source.py), for text and files."""

from __future__ import annotations

import sys
import traceback

import pytest

pytestmark = pytest.mark.jit

BAD = """
func.func @f(%a: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<?xf64>
  return
}
"""
needs_notes = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes are Python 3.11+")


def shown(error: BaseException) -> str:
    """What a traceback prints for `error` (message, diagnostics, notes)."""
    return "".join(traceback.format_exception_only(type(error), error))


def parse_error(source) -> BaseException:
    from mlir.ir import MLIRError

    from memref_runtime import JitModule

    with pytest.raises(MLIRError) as info:  # still the bindings' own exception
        JitModule(source)
    return info.value


@needs_notes
def test_text_shows_the_line_and_column_of_each_diagnostic():
    text = shown(parse_error(BAD))
    assert "error: \"-\":4:20: use of value '%a' expects different type" in text
    assert (
        "the MLIR source at line 4, column 20:\n"
        "     4 |   %x = memref.load %a[%c0] : memref<?xf64>\n"
        "       |                    ^\n"
    ) in text
    assert (
        "the MLIR source at line 2, column 14:\n"  # the note's location: the prior use
        "     2 | func.func @f(%a: memref<?xf32>) {\n"
        "       |              ^"
    ) in text


@needs_notes
def test_a_file_is_named_in_the_diagnostics_and_a_tab_counts_one_column(tmp_path):
    path = tmp_path / "kernel.mlir"
    path.write_text(BAD.replace("\n  %x", "\n\t%x"))
    text = shown(parse_error(path))
    assert f'error: "{path}":4:19: use of value' in text  # not "-"
    assert (
        "the MLIR source at line 4, column 19:\n     4 | \t%x = memref.load %a[%c0] : memref<?xf64>\n".expandtabs(1)
        + "       |                   ^\n"
    ) in text
    assert shown(parse_error(str(path))) == text  # a path given as text


@needs_notes
def test_lower_to_llvm_of_text_shows_the_line_too():
    from mlir.ir import MLIRError

    from memref_runtime.jit.lowering import lower_to_llvm

    with pytest.raises(MLIRError) as info:
        lower_to_llvm("func.func @g() {\n  return %nope : i32\n}\n")
    assert "     2 |   return %nope : i32\n       |          ^" in shown(info.value)


def test_bytecode_and_unknown_locations_add_nothing():
    from memref_runtime.jit.mlir_source import excerpts

    class Diagnostic:
        def __init__(self, location, notes=()):
            self.location, self.notes = location, list(notes)

    class Error:
        error_diagnostics = [
            Diagnostic('loc("other.mlir":1:1)'),
            Diagnostic("loc(unknown)"),
            Diagnostic('loc("-":9:1)'),
        ]  # past the end of the source

    assert excerpts(Error(), "one line\n", {"-"}) == []
    assert excerpts(Error(), b"ML\xefR\x00bytecode", {"-"}) == []


def test_a_module_that_parses_is_unchanged(tmp_path):
    from memref_runtime import JitModule

    path = tmp_path / "ok.mlir"
    path.write_text("func.func @one() -> i32 {\n  %c = arith.constant 1 : i32\n  return %c : i32\n}\n")
    assert JitModule(path).one() == 1
    assert JitModule(path.read_text()).one() == 1
