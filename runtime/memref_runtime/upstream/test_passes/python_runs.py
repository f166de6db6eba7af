"""The Python side of a run: parse a chunk, run one provided test pass on its anchor ops, verify, print.

Like mlir-opt's pass manager: the pass runs on every op at its nesting, the IR is verified
after it, and a failed pass (or verifier) leaves no output. The IR comes and goes as
bytecode, which keeps every location, for the next run of the real mlir-opt to read back.
"""

from __future__ import annotations

import importlib
import io

from mlir import ir

from . import diagnostics


class NestingError(ValueError):
    """A pass nested under an op that is not there (mlir-opt's own error for it)."""


def anchored_ops(top: ir.Operation, anchors: tuple) -> list:
    """The ops a pass nested at `anchors` (op names from the top op down; None: any) runs on."""
    first = anchors[0]
    if first is not None and top.name != first:
        raise NestingError(f"can't run '{first}' pass manager on '{top.name}' op")
    ops = [top]
    for name in anchors[1:]:
        ops = [
            op
            for parent in ops
            for region in parent.regions
            for block in region.blocks
            for op in block.operations
            if name is None or op.operation.name == name
        ]
    return [op.operation for op in ops]


class PythonSide:
    """One MLIR context for the command; `run(test pass run, chunk bytecode)` -> bytecode or None."""

    def __init__(self, allow_unregistered: bool, collector: diagnostics.Collector):
        self.collector = collector
        self.context = ir.Context()
        self.context.allow_unregistered_dialects = allow_unregistered
        self.context.attach_diagnostic_handler(self.on_diagnostic)

    def on_diagnostic(self, diagnostic) -> bool:
        diagnostics.report(diagnostic, self.collector)
        return True

    def report_error(self, error: ir.MLIRError) -> None:
        for diagnostic in error.error_diagnostics:
            diagnostics.report(diagnostic, self.collector)

    def parse_file(self, path: str) -> ir.Module | None:
        """The input file, parsed as mlir-opt parses it (None, and nothing reported, if it cannot:
        then mlir-opt reads it, and says why)."""
        try:
            return ir.Module.parseFile(path, self.context)
        except ir.MLIRError:
            return None

    def run(self, run, data: bytes | ir.Module) -> bytes | None:
        implementation = importlib.import_module(f".{run.test_pass.implementation}", __package__)
        with self.context, ir.Location.unknown():
            try:
                module = data if isinstance(data, ir.Module) else ir.Module.parse(data)
                anchors = anchored_ops(module.operation, run.anchors)
            except ir.MLIRError as e:
                self.report_error(e)
                return None
            except NestingError as e:
                self.collector.add(diagnostics.Diagnostic("error", None, 0, 0, str(e)))
                return None
            ok = True
            for op in anchors:  # each, as the pass manager runs a pass on every op it nests on
                try:
                    ok = implementation.run(op, run.options) is not False and ok
                except ir.MLIRError as e:
                    self.report_error(e)
                    ok = False
            try:
                if not ok:
                    return None
                module.operation.verify()
            except ir.MLIRError as e:
                self.report_error(e)
                return None
            out = io.BytesIO()
            module.operation.write_bytecode(out)
            return out.getvalue()
