"""benchmarks/compare_python_server.py (CI's torch-mlir and server routes): its lit runs write
in a folder of their own, never in the suite's Output/, which a lit run beside them writes too."""

from __future__ import annotations

import pytest
from support.paths import LIT, REPO, load_script

pytestmark = pytest.mark.harness

compare = load_script(REPO / "benchmarks" / "compare_python_server.py")


def test_each_run_has_an_exec_root_of_its_own(tmp_path):
    codes, inputs = compare.run(LIT, [], False, tmp_path, ["lit_tests/check_close.py"])
    assert codes == {"memref-runtime :: lit_tests/check_close.py": "PASS"}
    assert inputs == tmp_path / "fresh" and (inputs / "lit_tests_check_close.py.input").is_file()
    # lit keeps one exec root per suite: its test times there say this run wrote its Output/ there.
    assert "lit_tests/check_close.py" in (tmp_path / "fresh-output" / ".lit_test_times.txt").read_text()
