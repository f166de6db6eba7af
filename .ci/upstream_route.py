"""CI route: upstream MLIR's own tests of one release, unchanged, from a plain pip install.

    python3 .ci/upstream_route.py [--venv VENV] ARCHIVE

ARCHIVE is LLVM's `mlir/test` of the release the wheels are (../shared/upstream/
mlir-test-22.1.8.tar.gz). In a temporary folder outside the checkout this makes what a
downstream project would: a fresh venv with a plain, non-editable `pip install <checkout>` (or
VENV, one made so already: .ci/run's plain route's), and a
suite whose lit.cfg.py is the two lines of the README, holding upstream's `Integration/`,
`mlir-runner/` and `python/` folders under `test/` (benchmarks/upstream_suites.py). lit runs
them with nothing of Debian's LLVM in reach: where /usr/lib/llvm-NN is installed, a private
mount namespace puts an empty folder over it (root and unshare), else `-D test_pass_mlir_opt=none`
keeps the harness from using it.

It prints PASS/FAIL/UNSUPPORTED per folder and the failures that the harness's report names as a
known defect of the toolchain, and exits 1 when a folder passes fewer tests than EXPECTED_PASSES,
when more tests than TOOLCHAIN_FAILURES fail that way, or when a folder has more other failures
than OTHER_FAILURES allows (their output shown). The expectations are counts, never a list of
tests. The standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(CHECKOUT / "benchmarks"))
from upstream_suites import FOLDERS, counts, folder_of, parse, unpack_harness_suite  # noqa: E402

# What the route passed when these were last raised (LLVM 22.1.8's tests, the 22.1.8 wheels).
EXPECTED_PASSES = {"Integration": 221, "mlir-runner": 22, "python": 92}
# The tests that fail on the wheels' known defects (toolchain_defects.py), at most: 18 abort on
# the sub-byte assertion, one computes with the wheels' packed sub-byte memrefs.
TOOLCHAIN_FAILURES = 19
# Other failures a folder may have, at most: python/ has 7 that upstream's own lit config fails
# too on the same bindings (the wheels have no python_test dialect; their messages differ from
# an LLVM build's; docs/upstream-compat.md names them).
OTHER_FAILURES = {"Integration": 0, "mlir-runner": 0, "python": 7}
FAILED = ("FAIL", "XPASS", "UNRESOLVED", "TIMEOUT")


def hidden_llvm_command(command: list, major: str) -> tuple:
    """`command` run where /usr/lib/llvm-`major` is an empty folder, and what was done to hide it."""
    prefix = Path(f"/usr/lib/llvm-{major}")
    if not prefix.exists():
        return command, f"{prefix} is not installed"
    if os.geteuid() == 0 and shutil.which("unshare"):
        empty = tempfile.mkdtemp()
        script = 'mount --bind "$0" "$1" && shift && exec "$@"'
        return (
            ["unshare", "-m", "bash", "-c", script, empty, str(prefix), *command],
            f"{prefix} hidden (unshare -m, an empty folder mounted over it)",
        )
    return command + ["-D", "test_pass_mlir_opt=none"], f"{prefix} not hidden (not root): -D test_pass_mlir_opt=none"


def install(work: Path) -> Path:
    """A fresh venv with a plain install of the checkout; its lit."""
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True)
    # ml_dtypes and PyYAML, which upstream's python tests use (bf16 arrays; the opdsl tests).
    pip = [str(work / "venv" / "bin" / "pip"), "install", "-q"]
    subprocess.run([*pip, str(CHECKOUT), "ml_dtypes", "PyYAML"], check=True)
    return work / "venv" / "bin" / "lit"


def judge(results: dict) -> list:
    """What is wrong with `results` against the expectations (module docstring)."""
    problems = []
    table = counts(results)
    for folder, expected in EXPECTED_PASSES.items():
        if table[folder]["PASS"] < expected:
            problems.append(f"{folder}: {table[folder]['PASS']} passed, expected at least {expected}")
    named = [n for n, r in results.items() if r.toolchain_failure]
    if len(named) > TOOLCHAIN_FAILURES:
        problems.append(f"{len(named)} tests failed on known toolchain defects, expected at most {TOOLCHAIN_FAILURES}")
    for folder, allowed in OTHER_FAILURES.items():
        failed = sorted(
            (n, r)
            for n, r in results.items()
            if folder_of(n) == folder and r.code in FAILED and not r.toolchain_failure
        )
        if len(failed) > allowed:
            problems.append(f"{folder}: {len(failed)} failed (no known toolchain defect), expected at most {allowed}")
            problems += [f"{r.code}: {n}\n{r.output.strip()}" for n, r in failed]
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", type=Path, help="a venv with a plain install of the checkout (default: make one)")
    parser.add_argument("archive", type=Path)
    args = parser.parse_args()
    archive = args.archive
    started = time.monotonic()
    version = re.search(r"(\d+)\.\d+\.\d+", archive.name)
    major = version.group(1) if version else "22"
    work = Path(tempfile.mkdtemp(prefix="upstream-route-"))
    print(f"upstream's tests read from {archive}; suite and venv in {work}")
    lit = args.venv / "bin" / "lit" if args.venv else install(work)
    if not lit.exists():
        parser.error(f"--venv: expected a venv with memref-runtime installed (its bin/lit), got {args.venv}")
    suite = unpack_harness_suite(archive, work / "suite")
    command, hidden = hidden_llvm_command([str(lit), "-a", "-j2", *(str(suite / "test" / f) for f in FOLDERS)], major)
    print(hidden)
    log = work / "lit.txt"
    with open(log, "w") as out:
        subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=work)
    results = parse(log.read_text(), strip="test/")
    table = counts(results)
    for folder in FOLDERS:
        row = table[folder]
        print(f"{folder:12} {row['PASS']:4} passed  {row['FAIL']:3} failed  {row['UNSUPPORTED']:4} unsupported")
    for title, chosen in (
        ("failed on known toolchain defects (the report names them)", True),
        ("failed otherwise", False),
    ):
        names = sorted(n for n, r in results.items() if r.code in FAILED and r.toolchain_failure == chosen)
        print(f"{title}: {len(names)}" + "".join(f"\n  {n}" for n in names))
    problems = judge(results) if results else [f"lit gave no results: {log}"]
    for problem in problems:
        print(problem)
    print(f"upstream route: {time.monotonic() - started:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
