"""The README's typed-call example runs as written and gives what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mlir.execution_engine")

README = Path(__file__).resolve().parent.parent / "README.md"


def test_typed_call_example_runs():
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.S) if "JitModule(" in b]
    assert blocks, "the README has no typed-call example"
    names: dict = {}
    exec(compile(blocks[0], "README.md example", "exec"), names)
    np.testing.assert_array_equal(names["out"], [0, 2, 4, 6])
    np.testing.assert_array_equal(names["r"], np.arange(10.0))
    assert names["r"].base.owner is not None  # owns the JIT-allocated memory


@pytest.mark.jit
def test_benchmark_example_runs(capsys):
    section = README.read_text().split("## Benchmark a kernel, and test its speed")[1]
    block = re.search(r"```py\n(.*?)```", section, re.S)[1]
    names: dict = {}
    exec(compile(block, "README.md benchmark example", "exec"), names)
    assert names["r"].gflops > 0 and names["r"].flops == 2 * 128**3
    out, err = capsys.readouterr()
    assert out.startswith("matmul: median ") and err == "-O3 matmul is at least 2x -O0: faster, ok\n"
