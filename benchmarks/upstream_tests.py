#!/usr/bin/env python3
"""Upstream MLIR's own Integration, mlir-runner and python tests, run side by side: upstream's lit
config with an LLVM build's site config (the reference) and the harness from the wheels alone.

    python benchmarks/upstream_tests.py                 # counts, reasons, and the timed runs
    python benchmarks/upstream_tests.py --markdown      # the same tables in Markdown
    python benchmarks/upstream_tests.py --write-figures # and into docs/figures/upstream_tests.md (docs include it)
    python benchmarks/upstream_tests.py --quick         # every 8th test: checks the script works

Run it from the venv that has memref-runtime (the README's first command), on a machine with
Debian's LLVM (`/usr/lib/llvm-22`, packages llvm-22-dev and mlir-22-tools, or `--llvm PREFIX`):
- the reference: upstream's `mlir/test/lit.cfg.py`, loaded by a site config for that LLVM
  (benchmarks/upstream_suites.py), its Python tests on this interpreter's MLIR bindings;
- the harness: the same folders in a suite whose lit.cfg.py calls `memref_runtime.lit.configure`,
  with `-D test_pass_mlir_opt=none`, so that nothing of Debian's LLVM is used (pip only).

It prints the results by folder, the UNSUPPORTED reasons grouped, the known toolchain failures
the harness's reports name, the tests the reference passes and the harness does not (those
failures apart) and the other way round, then the speed: the full runs' wall times, and both
suites again on the tests both run, one after the other, with their wall times and the ratio.
Each table is a named section of the Markdown (docs/upstream-compat.md includes them). A speed
figure asserts nothing; the exit status is 1 only when a run could not be made.
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
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import add_figures_option, render, section, write, write_figures, write_machine  # noqa: E402
from upstream_suites import (  # noqa: E402
    FOLDERS,
    TOOLCHAIN_MARKER,
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


def titled(title: str, name: str, markdown: bool, lines: list[str]) -> None:
    """A title, then `lines` as the named section, then a blank line."""
    write(f"**{title}**" if markdown else title)
    write()
    with section(name, markdown):
        for line in lines:
            write(line)
    write()


def folders_table(comparison: Comparison, markdown: bool) -> str:
    """PASS, FAIL and UNSUPPORTED per folder, reference / harness."""
    ref, harness = counts(comparison.reference), counts(comparison.harness)

    def get(t: dict, folder: str | None, code: str) -> int:
        return sum(c[code] for c in t.values()) if folder is None else t[folder][code]

    rows = []
    for folder in (*FOLDERS, None):
        label = f"all ({len(comparison.harness)})" if folder is None else folder
        rows.append([label] + [f"{get(ref, folder, c)} / {get(harness, folder, c)}" for c in CODES])
    return render(["folder"] + [f"{c} reference / harness" for c in CODES], rows, markdown)


def shown_reason(reason: str, markdown: bool) -> str:
    """`off in F/lit.local.cfg` as `off in F/`; in Markdown the folder or feature as code."""
    code = "`{}`".format if markdown else str
    if reason.startswith("off in ") and reason.endswith("/lit.local.cfg"):
        return "off in " + code(reason[len("off in ") : -len("lit.local.cfg")])
    if reason.startswith("requires "):
        return "requires " + code(reason[len("requires ") :])
    return reason


def reasons_table(comparison: Comparison, roots: tuple[Path, Path], markdown: bool) -> str:
    """The UNSUPPORTED tests of both runs grouped by reason, the most frequent first."""
    grouped = [
        Counter(unsupported_reason(n, r, root) for n, r in results.items() if r.code == "UNSUPPORTED")
        for results, root in zip((comparison.reference, comparison.harness), roots)
    ]
    reasons = sorted(set(grouped[0]) | set(grouped[1]), key=lambda r: (-max(g[r] for g in grouped), r))
    rows = [[shown_reason(r, markdown), str(grouped[0][r]), str(grouped[1][r])] for r in reasons]
    rows.append(["total", str(grouped[0].total()), str(grouped[1].total())])
    return render(["reason", "reference", "harness"], rows, markdown)


def defect_named(output: str) -> str:
    """The known defect a harness report names, in its first words (without the source file)."""
    text = " ".join(output.split())
    _, found, note = text.partition(f"{TOOLCHAIN_MARKER}, not of this test: ")
    parts = re.split(r": |, ", note) if found else ["?"]
    named = ": ".join(parts[:2]) if parts[0] == "most likely" and len(parts) > 1 else parts[0]
    return re.sub(r"\s*\([^()]*\)$", "", named)


def listing(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    """How many `rows`, then their table; `none` when there are none."""
    if not rows:
        return ["none"]
    return [f"{len(rows)} tests:", "", render(headers, rows, markdown, right=lambda i: False)]


def code_of(results: dict, name: str) -> str:
    return results[name].code if name in results else "not run"


def report_results(comparison: Comparison, roots: tuple[Path, Path], markdown: bool) -> None:
    """The tables of what both runs gave."""
    ref, harness = comparison.reference, comparison.harness
    titled("Results by folder", "folders", markdown, [folders_table(comparison, markdown)])
    titled("UNSUPPORTED, by reason", "unsupported", markdown, [reasons_table(comparison, roots, markdown)])
    named = sorted(n for n, r in harness.items() if r.toolchain_failure)
    rows = [[n, code_of(ref, n), defect_named(harness[n].output)] for n in named]
    title = "Known toolchain failures named in the harness's reports"
    titled(title, "toolchain", markdown, listing(["test", "reference", "the report names"], rows, markdown))
    rows = [[n, harness[n].code] for n in comparison.lost()]
    title = "The reference passes, the harness does not, and no known toolchain failure explains it"
    titled(title, "lost", markdown, listing(["test", "harness"], rows, markdown))
    gained = sorted(n for n, r in harness.items() if r.code == "PASS" and code_of(ref, n) != "PASS")
    title = "The harness passes, the reference does not"
    titled(title, "gained", markdown, listing(["test", "reference"], [[n, code_of(ref, n)] for n in gained], markdown))


def timed_side_by_side(comparison: Comparison, ref_tests: Path, suite: Path, work: Path, repeat: int) -> list:
    """Both suites on the tests both run, alternating; [(reference s, harness s)] per repeat."""
    names = comparison.both_run()
    times = []
    for i in range(repeat):
        ref = run_lit([ref_tests / n for n in names], [], work / f"time-reference-{i}.txt")
        ours = run_lit([suite / "test" / n for n in names], HARNESS_ARGS, work / f"time-harness-{i}.txt")
        times.append((ref, ours))
    return times


def report_speed(full: tuple[float, float], timed: list, comparison: Comparison, markdown: bool) -> None:
    """The full runs' wall times, then the timed runs on the tests both run with their ratio."""
    load = os.getloadavg()[0]
    rows = [[str(i + 1), f"{r:.1f} s", f"{h:.1f} s", f"{h / r:.2f}x"] for i, (r, h) in enumerate(timed)]
    lines = [
        f"Full runs ({len(comparison.harness)} tests, lit -j2): reference {full[0]:.1f} s, harness {full[1]:.1f} s.",
        "",
        f"On the {len(comparison.both_run())} tests both run (lit -j2, the reference first, then the harness):",
        "",
        render(["run", "reference", "harness", "harness / reference"], rows, markdown),
        "",
        f"1-minute load average after the runs: {load:.1f} (on {os.cpu_count()} cores).",
    ]
    titled("Wall time", "speed", markdown, lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archive", nargs="?", type=Path, default=ARCHIVE)
    parser.add_argument("--llvm", type=Path, default=Path("/usr/lib/llvm-22"))
    parser.add_argument("--work", type=Path, help="the folder to unpack and run in (default: a temporary one)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs of each suite on the tests both run")
    parser.add_argument("--quick", action="store_true", help="every 8th test, one timed run")
    parser.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    add_figures_option(parser)
    args = parser.parse_args(argv)
    if not args.archive.is_file() or not (args.llvm / "bin" / "mlir-opt").exists() or LIT is None:
        print(f"needs {args.archive}, {args.llvm}/bin/mlir-opt and lit", file=sys.stderr)
        return 1
    return write_figures(
        args, "upstream_tests", argv, lambda: report(args), quick_means="every 8th test, one timed run"
    )


def report(args: argparse.Namespace) -> int:
    """Unpacks and runs both suites, and writes the tables; 1 when a run gave no results."""
    work = args.work or Path(tempfile.mkdtemp(prefix="upstream-tests-"))
    print(f"work folder (lit's output): {work}", file=sys.stderr)
    write_machine(args.markdown, [("upstream tests", args.archive.name), ("reference LLVM", str(args.llvm))])
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
    report_results(comparison, (ref_tests.parent.parent / "src/mlir/test", suite / "test"), args.markdown)
    timed = timed_side_by_side(comparison, ref_tests, suite, work, 1 if args.quick else args.repeat)
    report_speed((ref_time, harness_time), timed, comparison, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
