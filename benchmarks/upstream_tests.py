#!/usr/bin/env python3
"""Upstream MLIR's own Integration, mlir-runner and python tests, run side by side: upstream's lit
config with an LLVM build's site config (the reference) and the harness from the wheels alone.

    python benchmarks/upstream_tests.py                 # counts, reasons, and the timed runs
    python benchmarks/upstream_tests.py --markdown      # the same tables in Markdown (docs/upstream-compat.md)
    python benchmarks/upstream_tests.py --quick         # every 8th test: checks the script works

Run it from the venv that has memref-runtime (the README's first command), on a machine with
Debian's LLVM (`/usr/lib/llvm-22`, packages llvm-22-dev and mlir-22-tools, or `--llvm PREFIX`):
- the reference: upstream's `mlir/test/lit.cfg.py`, loaded by a site config for that LLVM
  (benchmarks/upstream_suites.py), its Python tests on this interpreter's MLIR bindings;
- the harness: the same folders in a suite whose lit.cfg.py calls `memref_runtime.lit.configure`,
  with `-D test_pass_mlir_opt=none`, so that nothing of Debian's LLVM is used (pip only).

It prints the results by folder, the UNSUPPORTED reasons grouped, the tests the reference passes
and the harness does not (known toolchain failures apart, named), then the speed: both suites
again on the tests both run, one after the other, with their wall times and the ratio. A speed
figure asserts nothing; the exit status is 1 only when a run could not be made.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import machine  # noqa: E402
from upstream_suites import (  # noqa: E402
    FOLDERS,
    Comparison,
    LLVMInstall,
    counts,
    parse,
    unpack_harness_suite,
    unpack_reference,
    unsupported_reason,
)

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT.parent / "shared" / "upstream" / "mlir-test-22.1.8.tar.gz"
LIT = shutil.which("lit", path=str(Path(sys.executable).parent)) or shutil.which("lit")
HARNESS_ARGS = ["-D", "test_pass_mlir_opt=none"]
CODES = ("PASS", "FAIL", "UNSUPPORTED")


def run_lit(paths: list, args: list, log: Path) -> float:
    """lit -a -j2 on `paths`, its output in `log`; the wall time."""
    env = {k: v for k, v in os.environ.items() if k not in ("FILECHECK_OPTS", "MLIR_OPT_CHECK_IR_ROUNDTRIP")}
    started = time.perf_counter()
    with open(log, "w") as out:
        subprocess.run([LIT, "-a", "-j2", *args, *map(str, paths)], stdout=out, stderr=subprocess.STDOUT, env=env)
    return time.perf_counter() - started


def gpu_features() -> set:
    """The host-supports-* features of this interpreter's MLIR bindings (their opt tool)."""
    sys.path.insert(0, str(ROOT / "runtime"))
    from memref_runtime.bindings import opt_tool
    from memref_runtime.upstream.capabilities import gpu_target_features

    return gpu_target_features(opt_tool())


def table(title: str, comparison: Comparison, markdown: bool) -> str:
    rows = []
    ref, harness = counts(comparison.reference), counts(comparison.harness)

    def get(t: dict, folder: str, code: str) -> int:
        return sum(c[code] for c in t.values()) if folder == "all" else t[folder][code]

    for folder in (*FOLDERS, "all"):
        rows.append([folder] + [f"{get(ref, folder, c)} / {get(harness, folder, c)}" for c in CODES])
    header = ["folder"] + [f"{c} (reference / harness)" for c in CODES]
    return render(title, header, rows, markdown)


def render(title: str, header: list, rows: list, markdown: bool) -> str:
    if markdown:
        lines = [f"**{title}**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    lines = [title, "  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(r, widths)) for r in rows]
    return "\n".join(lines) + "\n"


def reasons(title: str, results: dict, root: Path, markdown: bool) -> str:
    grouped = Counter(unsupported_reason(n, r, root) for n, r in results.items() if r.code == "UNSUPPORTED")
    return render(title, ["tests", "reason"], [[n, r] for r, n in grouped.most_common()], markdown)


def timed_side_by_side(comparison: Comparison, ref_tests: Path, suite: Path, work: Path, repeat: int) -> list:
    """Both suites on the tests both run, alternating; [(reference s, harness s)] per repeat."""
    names = comparison.both_run()
    times = []
    for i in range(repeat):
        ref = run_lit([ref_tests / n for n in names], [], work / f"time-reference-{i}.txt")
        ours = run_lit([suite / "test" / n for n in names], HARNESS_ARGS, work / f"time-harness-{i}.txt")
        times.append((ref, ours))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", nargs="?", type=Path, default=ARCHIVE)
    parser.add_argument("--llvm", type=Path, default=Path("/usr/lib/llvm-22"))
    parser.add_argument("--work", type=Path, help="the folder to unpack and run in (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each suite on the tests both run")
    parser.add_argument("--quick", action="store_true", help="every 8th test, one timed run")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if not args.archive.is_file() or not (args.llvm / "bin" / "mlir-opt").exists() or LIT is None:
        print(f"needs {args.archive}, {args.llvm}/bin/mlir-opt and lit", file=sys.stderr)
        return 1
    work = args.work or Path(tempfile.mkdtemp(prefix="upstream-tests-"))
    print(machine())
    print(f"archive {args.archive}; reference LLVM {args.llvm}; work folder {work}\n")
    suite = unpack_harness_suite(args.archive, work / "harness")
    ref_tests = unpack_reference(
        args.archive, work / "reference", LLVMInstall(args.llvm), sys.executable, gpu_features()
    )
    everything = sorted(
        str(p.relative_to(suite / "test"))
        for folder in FOLDERS
        for p in (suite / "test" / folder).rglob("*")
        if p.is_file()
    )
    subset = everything[::8] if args.quick else None
    ref_paths = [ref_tests / n for n in subset] if subset else [ref_tests / f for f in FOLDERS]
    harness_paths = [suite / "test" / n for n in subset] if subset else [suite / "test" / f for f in FOLDERS]
    ref_time = run_lit(ref_paths, [], work / "reference.txt")
    harness_time = run_lit(harness_paths, HARNESS_ARGS, work / "harness.txt")
    comparison = Comparison(
        parse((work / "reference.txt").read_text(), strip=""), parse((work / "harness.txt").read_text(), strip="test/")
    )
    if not comparison.reference or not comparison.harness:
        print(f"a run gave no results: see {work}/reference.txt and {work}/harness.txt", file=sys.stderr)
        return 1
    print(table("Results by folder", comparison, args.markdown))
    print(
        reasons(
            "UNSUPPORTED, reference", comparison.reference, ref_tests.parent.parent / "src/mlir/test", args.markdown
        )
    )
    print(reasons("UNSUPPORTED, harness", comparison.harness, suite / "test", args.markdown))
    named = sorted(n for n, r in comparison.harness.items() if r.toolchain_failure)
    print(f"known toolchain failures named in the harness's reports ({len(named)}):")
    print(
        "".join(
            f"  {n} (reference: {comparison.reference[n].code if n in comparison.reference else '-'})\n" for n in named
        )
    )
    lost = comparison.lost()
    print(f"the reference passes, the harness does not, and no known toolchain failure explains it: {len(lost)}")
    print("".join(f"  {n}: {comparison.harness[n].code}\n" for n in lost))
    print(f"full runs: reference {ref_time:.1f} s, harness {harness_time:.1f} s (lit -j2)\n")
    times = timed_side_by_side(comparison, ref_tests, suite, work, 1 if args.quick else args.repeat)
    rows = [[i + 1, f"{r:.1f} s", f"{h:.1f} s", f"{h / r:.2f}x"] for i, (r, h) in enumerate(times)]
    print(
        render(
            f"Wall time on the {len(comparison.both_run())} tests both run (lit -j2)",
            ["run", "reference", "harness", "harness / reference"],
            rows,
            args.markdown,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
