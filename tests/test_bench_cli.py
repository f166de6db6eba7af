"""memref-bench: inputs from the signature, the table, the JSON, the plot file and its extra,
and the errors that name what is wrong."""

from __future__ import annotations

import builtins
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.paths import REPO, mlir_input

pytest.importorskip("mlir.execution_engine")

from memref_runtime.bench.cli import main  # noqa: E402
from memref_runtime.bench.inputs import InputError, make_inputs, takes_size  # noqa: E402

pytestmark = pytest.mark.jit

BENCH_KERNELS = str(mlir_input("bench_kernels.mlir"))
SIGNATURES = r"""
func.func @mixed(%a: memref<?x16xf32>, %b: memref<4xi32>, %n: index, %k: i8, %s: f64, %flag: i1,
                 %v: memref<?xf64, strided<[?], offset: ?>>) { return }
func.func @unranked(%a: memref<*xf32>) { return }
func.func @fixed(%a: memref<8xf32>, %s: f32) { return }
"""


@pytest.fixture(scope="module")
def signatures():
    from memref_runtime import JitModule

    return JitModule(SIGNATURES).signatures


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_inputs_take_every_dynamic_size_and_integer_scalar_from_n(signatures):
    a, b, n, k, s, flag, v = make_inputs(signatures["mixed"], 32, seed=1)
    assert a.shape == (32, 16) and a.dtype == np.float32 and a.flags.c_contiguous
    assert b.shape == (4,) and b.dtype == np.int32 and 0 <= b.min() and b.max() < 10
    assert (n, k, flag) == (32, 32, True)
    assert -1 <= s < 1 and v.shape == (32,) and v.dtype == np.float64 and -1 <= v.min() and v.max() < 1
    again = make_inputs(signatures["mixed"], 32, seed=1)
    assert np.array_equal(again[0], a)  # the seed decides
    assert make_inputs(signatures["mixed"], 1000, fixed={3: 7})[3] == 7
    assert make_inputs(signatures["mixed"], 1000)[3] == 127  # N clamped to the type's range
    assert takes_size(signatures["mixed"]) and not takes_size(signatures["fixed"])
    a, s = make_inputs(signatures["fixed"], None)
    assert a.shape == (8,) and isinstance(s, float)


@pytest.mark.parametrize(
    "name, size, fixed, message",
    [
        ("unranked", 8, None, "argument 0 is memref<\\*xf32>, whose rank the signature does not say"),
        ("mixed", None, None, "argument 0 \\(memref<\\?x16xf32>\\) has dynamic sizes: give --sizes"),
        ("mixed", 8, {0: 1}, "--arg 0=...: @mixed has no scalar argument 0"),
    ],
)
def test_inputs_it_cannot_make_are_named(signatures, name, size, fixed, message):
    with pytest.raises(InputError, match=message):
        make_inputs(signatures[name], size, fixed=fixed)


def test_an_argument_over_the_size_limit_is_refused_before_it_is_allocated(signatures, monkeypatch):
    from memref_runtime.bench import inputs

    monkeypatch.setattr(inputs, "MAX_ARGUMENT_BYTES", 1 << 20)
    with pytest.raises(
        InputError,
        match=r"argument 0 \(memref<\?x16xf32>\) would be \(32768, 16\), 0.0 GiB, "
        r"at size 32768: over memref-bench's 0 GiB per argument",
    ):
        make_inputs(signatures["mixed"], 1 << 15)


def test_the_table_has_a_row_per_size_and_opt_level(capsys):
    status, out, _ = run(
        capsys, BENCH_KERNELS, "-f", "matmul", "--sizes", "8,16", "--opt-levels", "0,2", "--flops", "2*n**3", "--quick"
    )
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == f"@matmul in {BENCH_KERNELS}"
    assert lines[1].split() == [
        "size",
        "opt",
        "median",
        "94%",
        "interval",
        "min",
        "samples",
        "x",
        "calls",
        "GFLOP/s",
        "vs",
        "-O0",
    ]
    rows = [line.split() for line in lines[2:6]]
    assert [(r[0], r[1]) for r in rows] == [("8", "-O0"), ("16", "-O0"), ("8", "-O2"), ("16", "-O2")]
    assert [r[-1] for r in rows[:2]] == ["1.00x", "1.00x"]  # each size against its -O0 row
    assert all(r[11:13] == ["5", "x"] and r[6] == "to" for r in rows)  # --quick: 5 samples
    assert lines[6].startswith("per call, in a native loop, of thread CPU time; the loop itself costs ")
    assert len(lines) == 7


def test_json_gives_the_same_rows_with_every_statistic(capsys):
    status, out, _ = run(
        capsys,
        BENCH_KERNELS,
        "-f",
        "matmul",
        "--sizes",
        "8",
        "--opt-levels",
        "0,3",
        "--flops",
        "2*n**3",
        "--bytes",
        "3*4*n*n",
        "--quick",
        "--json",
    )
    assert status == 0
    report = json.loads(out)
    assert (report["function"], Path(report["file"])) == ("matmul", Path(BENCH_KERNELS))
    assert "linalg" in report["pipeline"] and report["machine"]["cpus"] >= 1
    rows = report["rows"]
    assert [(r["size"], r["opt_level"]) for r in rows] == [(8, 0), (8, 3)]
    for r in rows:
        assert r["flops"] == 1024 and r["bytes"] == 768 and r["repeats"] == 5 and len(r["samples"]) == 5
        assert r["gflops"] == pytest.approx(1024 / r["median"] / 1e9)
        assert r["min"] <= r["ci_low"] <= r["median"] <= r["ci_high"] <= r["max"]


def test_a_function_without_sizes_gets_one_row_per_opt_level(capsys):
    status, out, _ = run(capsys, BENCH_KERNELS, "-f", "empty", "--opt-levels", "1", "--quick", "--json")
    assert status == 0 and [(r["size"], r["opt_level"]) for r in json.loads(out)["rows"]] == [(None, 1)]


@pytest.mark.parametrize("flops", [None, "2*n**3"])
def test_the_plot_is_written(capsys, tmp_path, flops):
    pytest.importorskip("matplotlib")
    path = tmp_path / "matmul.png"
    extra = ["--flops", flops] if flops else []
    status, _, err = run(
        capsys,
        BENCH_KERNELS,
        "-f",
        "matmul",
        "--sizes",
        "4,8",
        "--opt-levels",
        "0,3",
        "--quick",
        "--plot",
        str(path),
        *extra,
    )
    assert status == 0 and err == f"memref-bench: wrote {path}\n"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_without_matplotlib_plot_names_the_extra_before_measuring(capsys, monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_matplotlib(name, *args, **kwargs):
        if name.split(".")[0] == "matplotlib":
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(SystemExit) as stopped:
        main([BENCH_KERNELS, "-f", "matmul", "--sizes", "8", "--plot", str(tmp_path / "x.png")])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "--plot needs matplotlib, which is not installed" in err and "pip install 'memref-runtime[plot]'" in err
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["-f", "nothere"], "has no public function @nothere; it has: empty, chain, matmul, axpy, axpy_vector"),
        (
            ["-f", "matmul"],
            r"@matmul\(memref<\?x\?xf32>, memref<\?x\?xf32>, memref<\?x\?xf32>\) takes sizes: give --sizes",
        ),
        (["-f", "matmul", "--sizes", "8", "--flops", "2*x"], "expected an arithmetic expression in n"),
        (["-f", "matmul", "--sizes", "8", "--flops", "__import__('os')"], "expected an arithmetic expression in n"),
        (["-f", "matmul", "--sizes", "8,-1"], "expected comma-separated sizes"),
        (["-f", "matmul", "--sizes", "8", "--opt-levels", "4"], "expected opt levels from 0 to 3"),
        (["-f", "chain", "--sizes", "8", "--arg", "x=1"], "expected INDEX=VALUE"),
    ],
)
def test_bad_input_stops_with_status_2_and_the_reason(capsys, argv, message):
    with pytest.raises(SystemExit) as stopped:
        main([BENCH_KERNELS, *argv])
    assert stopped.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_file_that_does_not_lower_fails_with_status_1(capsys, tmp_path):
    broken = tmp_path / "broken.mlir"
    broken.write_text("func.func @f(%a: memref<?xf32>) {\n  %x = arith.addf %a, %a : f32\n  return\n}\n")
    status, out, err = run(capsys, str(broken), "-f", "f", "--sizes", "8")
    assert status == 1 and out == "" and err.startswith("memref-bench: ")


def test_the_console_script_and_the_plot_extra_are_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'memref-bench = "memref_runtime.bench.cli:main"' in text
    assert 'plot = ["matplotlib"]' in text


def test_python_dash_m_runs_it():
    out = subprocess.run(
        [sys.executable, "-m", "memref_runtime.bench", BENCH_KERNELS, "-f", "empty", "--quick", "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "runtime")},
    ).stdout
    assert json.loads(out)["rows"][0]["name"] == "empty"


def test_one_opt_level_has_no_speed_up_column(capsys):
    status, out, _ = run(capsys, BENCH_KERNELS, "-f", "chain", "--sizes", "10", "--opt-levels", "2", "--quick")
    assert status == 0 and out.splitlines()[1].split()[-2:] == ["x", "calls"]
