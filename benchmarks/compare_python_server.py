#!/usr/bin/env python3
"""Proves the pre-started Python server changes nothing: every route of the lit suite, run
with fresh interpreters and through the server, must give the same result for every test
and pipe identical input into every FileCheck (and count): byte for byte, but for
addresses (0x...), which differ between any two runs. It is also CI's run of those routes: a
test that fails (in either run) is a problem too.

    python benchmarks/compare_python_server.py                 # every route this machine has
    python benchmarks/compare_python_server.py -D opt_level=0  # one extra route of your own
    python benchmarks/compare_python_server.py --routes default mlir_python=torch_mlir

Exit status 0 when every route agrees; otherwise the differences are printed and it is 1.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TORCH_MLIR_LIT = ROOT / ".venv-torch-mlir" / "bin" / "lit"
# Addresses differ between any two runs (ASLR), fresh or not: compared as "0x<address>".
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
# lit's result codes of a test that did what it should.
GOOD = {"PASS", "UNSUPPORTED", "XFAIL"}


def normalised(path: Path) -> str:
    return ADDRESS.sub("0x<address>", path.read_text(errors="replace")) if path.exists() else "(no input)\n"


def routes(extra: list[str]) -> dict[str, tuple[str, list[str]]]:
    """name -> (lit executable, -D parameters): the suite's routes that run on this machine."""
    lit = shutil.which("lit", path=str(BIN)) or shutil.which("lit")
    table = {
        "default": (lit, []),
        "mlir_runtime=memref_runtime": (lit, ["-D", "mlir_runtime=memref_runtime"]),
        "opt_level=0": (lit, ["-D", "opt_level=0"]),
        "runtime_verification=1": (lit, ["-D", "runtime_verification=1"]),
    }
    python_filecheck = shutil.which("filecheck", path=str(BIN))
    if python_filecheck:
        table["filecheck=python"] = (lit, ["-D", f"filecheck={python_filecheck}"])
    if TORCH_MLIR_LIT.exists():
        table["mlir_python=torch_mlir"] = (str(TORCH_MLIR_LIT), ["-D", "mlir_python=torch_mlir"])
    if extra:
        table[" ".join(extra)] = (lit, [w for p in extra for w in ("-D", p)])
    return table


def run(lit: str, params: list[str], server: bool, folder: Path, tests: list[str]) -> tuple[dict, Path]:
    """Per test its result code, and the folder of what it fed FileCheck."""
    inputs = folder / ("server" if server else "fresh")
    results = folder / f"{inputs.name}.json"
    # Without the performance tests: they time kernels for seconds and print one stable line
    # either way; every other lit route of CI runs them. Each run writes its tests' Output/ in
    # `folder` (exec_root), never in the checkout's: a lit run of the same suite beside it (CI's
    # other lane, yours) would share every %t, and one test's `rm -rf %t` deletes the other's.
    command = [
        lit,
        "-s",
        *params,
        "-D",
        "perf_tests=0",
        "-D",
        f"python_server={int(server)}",
        "-D",
        f"record_check_input={inputs}",
        "-D",
        f"exec_root={folder / (inputs.name + '-output')}",
        "-o",
        str(results),
        *tests,
    ]
    subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    codes = {t["name"]: t["code"] for t in json.loads(results.read_text())["tests"]}
    return codes, inputs


def compare(name: str, lit: str, params: list[str], tests: list[str]) -> list[str]:
    """The differences between the fresh and the server run of one route (none: identical)."""
    problems = []
    with tempfile.TemporaryDirectory(prefix="compare-") as tmp:
        fresh_codes, fresh_inputs = run(lit, params, False, Path(tmp), tests)
        server_codes, server_inputs = run(lit, params, True, Path(tmp), tests)
        for test in sorted(set(fresh_codes) | set(server_codes)):
            a, b = fresh_codes.get(test), server_codes.get(test)
            if a != b:
                problems.append(f"[{name}] {test}: {a} with fresh interpreters, {b} through the server")
            elif a not in GOOD:
                problems.append(f"[{name}] {test}: {a} in both runs (lit -v -D ... {test} says why)")
        files = sorted({p.name for p in fresh_inputs.glob("*.input")} | {p.name for p in server_inputs.glob("*.input")})
        for file in files:
            a, b = fresh_inputs / file, server_inputs / file
            a_text, b_text = normalised(a), normalised(b)
            if a_text != b_text:
                diff = difflib.unified_diff(a_text.splitlines(True), b_text.splitlines(True), "fresh", "server", n=1)
                problems.append(f"[{name}] {file} differs:\n" + "".join(list(diff)[:40]))
        print(
            f"{name}: {len(fresh_codes)} tests, {len(files)} FileCheck inputs, "
            f"{'identical' if not problems else f'{len(problems)} differences'}",
            flush=True,
        )
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-D", dest="params", action="append", default=[], help="an extra route: lit -D parameters")
    parser.add_argument(
        "--routes",
        nargs="+",
        metavar="NAME",
        help="only these routes (default: every one this machine has: " + ", ".join(routes([])) + ")",
    )
    parser.add_argument("tests", nargs="*", default=["lit_tests"])
    args = parser.parse_args(argv)
    table = routes(args.params)
    unknown = sorted(set(args.routes or ()) - set(table))
    if unknown:
        parser.error(f"--routes: no route {', '.join(unknown)} on this machine; there are {', '.join(table)}")
    problems = []
    for name, (lit, params) in table.items():
        if args.routes is None or name in args.routes:
            problems += compare(name, lit, params, args.tests)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
