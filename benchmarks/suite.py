#!/usr/bin/env python3
"""Where the test loop's time goes: the lit suite per test and in total, in fresh interpreters
and in children of the pre-started Python server, and pytest serial against parallel, in one run.

    python benchmarks/suite.py                   # the full run (a few minutes on 2 cores)
    python benchmarks/suite.py --quick           # CI: one repeat, pytest on two files; asserts nothing about time
    python benchmarks/suite.py --markdown        # the same tables in Markdown
    python benchmarks/suite.py --write-figures   # and into docs/figures/suite.md, which docs/speed.md includes

Per test, its time (lit's) splits into:
  floor        interpreter start and the test's imports: the same imports timed in a bare process
               started the same way (fresh, or through the server's client; the best of a few),
               once per test process
  parse+lower  ir.Module.parse and PassManager.run          } recorded inside the test processes
  JIT          ExecutionEngine creation and lookups          } by memref_runtime.process.timing
  kernels      ExecutionEngine.invoke and JitModule calls    } (lit -D timing=DIR)
  test code    the rest of the test processes' own time
  FileCheck    FileCheck on the input the test gave it, timed alone (-D record_check_input=DIR)
  rest         what is left: lit, starting and ending processes, pipes: the harness's overhead
A test without Python (`.mlir`, run by mlir-opt/mlir-runner) counts its time but FileCheck's as
"tools". A figure that fails makes the run exit 1; a missed target never does.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import add_figures_option, render, section, write, write_figures, write_machine  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "runtime"))  # this checkout's runtime, installed or not
from memref_runtime import environment  # noqa: E402
from memref_runtime.lit.server_step import input_name  # noqa: E402
from memref_runtime.pyserver import lifecycle as server_lit  # noqa: E402

BIN = Path(sys.executable).parent
LIT = shutil.which("lit", path=str(BIN)) or shutil.which("lit")
ROUTES = {"fresh": ["-D", "python_server=0"], "server": ["-D", "python_server=1"]}
COLUMNS = ("floor", "parse_lower", "jit", "kernels", "code", "tools", "filecheck", "rest")
TITLES = {
    "floor": "floor",
    "parse_lower": "parse+lower",
    "jit": "JIT",
    "kernels": "kernels",
    "code": "test code",
    "tools": "tools",
    "filecheck": "FileCheck",
    "rest": "rest (harness)",
}
TARGETS = {"lit": 0.6, "pytest": 0.6, "harness": 0.10}


def run_wall(command: list[str], check: bool = True, **kwargs) -> float:
    """Seconds `command` takes; a failing command raises (with `check`) or is reported on stderr."""
    start = time.perf_counter()
    out = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    elapsed = time.perf_counter() - start
    if out.returncode:
        message = f"{shlex.join(command)} exited {out.returncode}:\n{out.stdout[-3000:]}"
        if check:
            raise RuntimeError(message)
        print(message, file=sys.stderr)
        FAILED_COMMANDS.append(shlex.join(command))
    return elapsed


FAILED_COMMANDS: list[str] = []  # timed all the same; the run exits 1


def lit_command(route: str, *args: str) -> list[str]:
    return [LIT, "-s", *ROUTES[route], *args]


# --- wall times ------------------------------------------------------------------------------


def lit_walls(repeats: int, jobs: int, tests: list[str]) -> dict[str, list[float]]:
    """The suite's wall time per route, the routes alternating, `repeats` times each."""
    walls = defaultdict(list)
    for _ in range(repeats):
        for route in ROUTES:
            walls[route].append(run_wall(lit_command(route, f"-j{jobs}", *tests), cwd=ROOT))
    return walls


def pytest_walls(repeats: int, jobs: int, paths: list[str]) -> tuple[dict[str, list[float]], Counter]:
    """pytest's wall time serial (-n 0) and parallel (-n jobs), alternating; and the JIT reuse
    counts of the processes of the last parallel run (memref_runtime.jit.cache)."""
    walls = defaultdict(list)
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths]
    with tempfile.TemporaryDirectory(prefix="suite-jit-") as stats:
        for _ in range(repeats):
            walls["serial"].append(run_wall(base + ["-n", "0"], check=False, cwd=ROOT))
            shutil.rmtree(stats, ignore_errors=True)
            env = dict(os.environ, MEMREF_RUNTIME_JIT_CACHE_STATS=stats)
            # As README command 2 runs it (tests/support/workers.py: every core, worksteal), unless told -j.
            parallel = [] if jobs == os.cpu_count() and not paths else ["-n", str(jobs), "--dist", "worksteal"]
            walls["parallel"].append(run_wall(base + parallel, check=False, cwd=ROOT, env=env))
        counts = Counter()
        for path in Path(stats).glob("*.json"):
            counts.update(json.loads(path.read_text()))
    return walls, counts


def hit_rate(counts: Counter) -> str:
    """'hits / JitModules built (rate), misses by reason'."""
    built = sum(v for k, v in counts.items() if k != "off")
    if not built:
        return "no JitModule built"
    misses = ", ".join(f"{k[len('miss: ') :]} {v}" for k, v in sorted(counts.items()) if k.startswith("miss"))
    return f"{counts['hit']} of {built} JitModules ({counts['hit'] / built:.0%}); misses: {misses}"


# --- attribution ----------------------------------------------------------------------------


def imports_of(script: Path) -> str:
    """The module-level import statements of `script`, as code for a bare process."""
    tree = ast.parse(script.read_text())
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))) or "pass"


class Floors:
    """Start-up plus imports, timed in a bare process started like the test's (cached)."""

    def __init__(self, repeats: int):
        self.repeats, self.cache = repeats, {}
        self.folder = server_lit.start_run()  # this run's own servers, stopped at exit

    def seconds(self, route: str, code: str, env: dict, cwd: Path = ROOT) -> float:
        """`code` run as `python -c` in `cwd` (a test's folder: its helper modules import)."""
        env = {k: v for k, v in env.items() if k not in ("LIT_CURRENT_TESTCASE",)}
        key = (route, code, str(cwd), tuple(sorted(env.items())))
        if key not in self.cache:
            if route == "server":
                env.update(
                    {environment.PYTHON_SERVER_DIR: self.folder, environment.PYTHON_SERVER_OWNER: str(os.getpid())}
                )
                command = shlex.split(server_lit.client_command(sys.executable)) + ["-c", code]
            else:
                command = [sys.executable, "-c", code]
            env.pop(environment.TIMING, None)
            run_wall(command, env=env, cwd=cwd)  # starts the server; warms the caches
            self.cache[key] = min(run_wall(command, env=env, cwd=cwd) for _ in range(self.repeats))
        return self.cache[key]


def executed_filechecks(output: str) -> list[list[str]]:
    """The FileCheck commands lit ran for a test that read their input (not --version)."""
    commands = []
    for line in output.splitlines():
        if line.startswith("# executed command: "):
            words = shlex.split(line[len("# executed command: ") :])
            if Path(words[0]).name.lower() == "filecheck" and "--version" not in words:
                commands.append(words)
    return commands


def time_filecheck(commands: list[list[str]], input_path: Path, repeats: int) -> float:
    total = 0.0
    for words in commands:
        samples = []
        for _ in range(repeats):
            with open(input_path, "rb") as stdin:
                start = time.perf_counter()
                subprocess.run(words, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
                samples.append(time.perf_counter() - start)
        total += statistics.median(samples)
    return total


def attribute(route: str, tests: list[str], floors: Floors, repeats: int) -> dict[str, dict]:
    """Per test: its time and the parts of it (see the module docstring), one test at a time."""
    with tempfile.TemporaryDirectory(prefix="suite-") as tmp:
        tmp = Path(tmp)
        command = lit_command(
            route,
            "-j1",
            "-D",
            f"timing={tmp / 'timing'}",
            "-D",
            f"record_check_input={tmp / 'input'}",
            "-o",
            str(tmp / "results.json"),
            *tests,
        )
        run_wall(command, cwd=ROOT)
        results = json.loads((tmp / "results.json").read_text())["tests"]
        records = defaultdict(list)
        for path in (tmp / "timing").glob("*.json") if (tmp / "timing").is_dir() else ():
            record = json.loads(path.read_text())
            records[record["test"]].append(record)
        rows = {}
        for result in results:
            if result["code"] != "PASS":
                continue
            name = result["name"]
            short = name.split("::", 1)[1].strip()
            row = dict.fromkeys(COLUMNS, 0.0)
            row["total"] = result["elapsed"]
            input_path = tmp / "input" / input_name(name)
            if input_path.exists():
                row["filecheck"] = time_filecheck(executed_filechecks(result["output"]), input_path, repeats)
            # A Python process that ran within another's time (one a test process started, such
            # as a replay script) is part of that one's time: only the outermost ones count.
            procs = [
                p
                for p in records.get(name, [])
                if not any(
                    q is not p
                    and q["started"] <= p["started"]
                    and p["started"] + p["seconds"] <= q["started"] + q["seconds"]
                    for q in records.get(name, [])
                )
            ]
            script = ROOT / short
            if procs:
                env = procs[0]["env"]
                bare = floors.seconds(route, "pass", env)
                floor = (
                    floors.seconds(route, imports_of(script), env, script.parent) if script.suffix == ".py" else bare
                )
                in_process_imports = floor - bare if route == "fresh" else 0.0
                row["floor"] = floor * len(procs)
                for part in ("parse_lower", "jit", "kernels"):
                    row[part] = sum(p["parts"][part] for p in procs)
                own = sum(p["seconds"] - sum(p["parts"].values()) for p in procs)
                row["code"] = max(0.0, own - in_process_imports * len(procs))
            else:
                row["tools"] = max(0.0, row["total"] - row["filecheck"])
            row["rest"] = row["total"] - sum(row[c] for c in COLUMNS if c != "rest")
            row["started"] = min((p["started"] for p in procs), default=float("inf"))
            rows[short] = row
        return rows


# --- output ---------------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}"


def attribution_table(rows: dict[str, dict], markdown: bool) -> str:
    headers = ["test (ms)", "total"] + [TITLES[c] for c in COLUMNS] + ["rest %"]
    body = []
    for name, row in sorted(rows.items(), key=lambda kv: -kv[1]["total"]):
        share = row["rest"] / row["total"] if row["total"] else 0.0
        body.append([name, ms(row["total"])] + [ms(row[c]) for c in COLUMNS] + [f"{share:.0%}"])
    totals = {c: sum(r[c] for r in rows.values()) for c in ("total",) + COLUMNS}
    body.append(
        ["total", ms(totals["total"])]
        + [ms(totals[c]) for c in COLUMNS]
        + [f"{totals['rest'] / totals['total']:.0%}" if totals["total"] else "-"]
    )
    body.append(
        ["share", "100%"] + [f"{totals[c] / totals['total']:.0%}" if totals["total"] else "-" for c in COLUMNS] + [""]
    )
    return render(headers, body, markdown)


def median_text(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s" + (f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")


def python_rest_shares(rows: dict[str, dict], route: str) -> list[float]:
    """The harness's share of each Python test; through the server, less the first test, which
    waits for the server's imports (once per lit run and configuration, reported apart)."""
    python = [r for r in rows.values() if r["tools"] == 0 and r["total"]]
    if route == "server" and python:
        python.remove(min(python, key=lambda r: r["started"]))
    return [r["rest"] / r["total"] for r in python]


def server_start_wait(rows: dict[str, dict]) -> float:
    """How long the first test through the server waited for it: its rest less the others' median."""
    python = [r for r in rows.values() if r["tools"] == 0 and r["total"]]
    if len(python) < 2:
        return 0.0
    first = min(python, key=lambda r: r["started"])
    return max(0.0, first["rest"] - statistics.median(r["rest"] for r in python if r is not first))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="CI: one repeat, pytest on two files")
    parser.add_argument("--markdown", action="store_true", help="print the tables in Markdown")
    parser.add_argument("--repeats", type=int, help="wall-time repeats per route (default 3, 1 with --quick)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="lit and pytest workers (default: every core)")
    parser.add_argument("--no-pytest", action="store_true", help="skip the pytest figures")
    parser.add_argument("tests", nargs="*", default=["lit_tests"], help="lit tests (default: lit_tests)")
    add_figures_option(parser)
    args = parser.parse_args(argv)
    return write_figures(args, "suite", argv, lambda: report(args, argv))


def report(args: argparse.Namespace, argv: list[str] | None) -> int:
    """Times the routes and prints the tables; 1 when a command failed."""
    repeats = args.repeats or (1 if args.quick else 3)
    command = " ".join(["python", "benchmarks/suite.py", *(argv if argv is not None else sys.argv[1:])])
    write_machine(args.markdown, [("command", command)])

    failed = False
    summary = []
    load_before = os.getloadavg()[0]
    print("[lit suite: wall time per route]", file=sys.stderr, flush=True)
    walls = lit_walls(repeats, args.jobs, args.tests)
    lit_ratio = statistics.median(walls["server"]) / statistics.median(walls["fresh"])
    summary.append(
        [
            f"lit suite wall, -j{args.jobs} (median of {repeats})",
            median_text(walls["fresh"]),
            median_text(walls["server"]),
            f"{lit_ratio:.2f}x",
            f"<= {TARGETS['lit']}x",
            "yes" if lit_ratio <= TARGETS["lit"] else "no",
        ]
    )

    floors = Floors(repeats=2 if args.quick else 5)
    tables = {}
    try:
        for route in ROUTES:
            print(f"[lit suite: where the time goes, {route}]", file=sys.stderr, flush=True)
            tables[route] = attribute(route, args.tests, floors, repeats=1 if args.quick else 3)
    finally:
        server_lit.stop_servers(floors.folder)
    for route, rows in tables.items():
        shares = python_rest_shares(rows, route)
        total = sum(r["total"] for r in rows.values())
        summary.append(
            [
                f"lit suite, -j1: sum of test times ({route})",
                f"{total:.2f} s" if route == "fresh" else "",
                f"{total:.2f} s" if route == "server" else "",
                "",
                "",
                "",
            ]
        )
        if shares:
            worst = max(shares)
            but_first = " but the first (below)" if route == "server" else ""
            summary.append(
                [
                    f"harness overhead ({route}): median / worst Python test{but_first}",
                    f"{statistics.median(shares):.0%} / {worst:.0%}" if route == "fresh" else "",
                    f"{statistics.median(shares):.0%} / {worst:.0%}" if route == "server" else "",
                    "",
                    f"<= {TARGETS['harness']:.0%}",
                    "yes" if worst <= TARGETS["harness"] else "no",
                ]
            )
            rest = sum(r["rest"] for r in rows.values()) - (server_start_wait(rows) if route == "server" else 0)
            share = f"{rest / total:.0%}" if total else "-"
            summary.append(
                [
                    f"harness overhead ({route}): whole suite",
                    share if route == "fresh" else "",
                    share if route == "server" else "",
                    "",
                    f"<= {TARGETS['harness']:.0%}",
                    "yes" if total and rest / total <= TARGETS["harness"] else "no",
                ]
            )
        if route == "server":
            summary.append(
                [
                    "the first test waits for the server's start (once per lit run and configuration)",
                    "",
                    f"{server_start_wait(rows):.2f} s",
                    "",
                    "",
                    "",
                ]
            )

    if not args.no_pytest:
        print("[pytest: serial and parallel]", file=sys.stderr, flush=True)
        paths = ["tests/test_jit_cache.py", "tests/test_jit_call.py"] if args.quick else []
        try:
            pwalls, jit_counts = pytest_walls(1 if args.quick else max(1, repeats - 1), args.jobs, paths)
            jit_line = hit_rate(jit_counts)
            ratio = statistics.median(pwalls["parallel"]) / statistics.median(pwalls["serial"])
            plain = args.jobs == os.cpu_count() and not paths  # README command 2: cores + 1 workers
            parallel = f"`pytest` ({args.jobs + 1} workers)" if plain else f"-n {args.jobs}"
            summary.append(
                [
                    f"pytest {' '.join(paths) or '(all)'} wall, serial -> {parallel}",
                    median_text(pwalls["serial"]),
                    median_text(pwalls["parallel"]),
                    f"{ratio:.2f}x",
                    f"<= {TARGETS['pytest']}x",
                    "yes" if ratio <= TARGETS["pytest"] else "no",
                ]
            )
        except RuntimeError as e:
            print(e, file=sys.stderr)
            summary.append(["pytest", "error", "", "", "", ""])
            jit_line = "pytest failed"
            failed = True

    with section("summary", args.markdown):
        write(
            render(
                ["figure", "before (fresh / serial)", "after (server / parallel)", "ratio", "target", "met?"],
                summary,
                args.markdown,
                right=lambda i: 0 < i < 4,
            )
        )
        if not args.no_pytest:
            write()
            write(
                f"JIT reuse in pytest {' '.join(paths) or '(all)'}: {jit_line}. Differential testing "
                "(memref_runtime.differential.check_against) builds one JitModule for all its examples."
            )
        write()
        write(
            f"Load average (1 min) before / after: {load_before:.2f} / {os.getloadavg()[0]:.2f} on "
            f"{os.cpu_count()} cores: other work on the machine slows both sides."
        )
    with section("attribution", args.markdown):
        for route, rows in tables.items():
            write()
            server = "python_server=1" if route == "server" else "python_server=0"
            write(f"Where each test's time goes, {route} interpreters ({server}), lit -j1, milliseconds:")
            write()
            write(attribution_table(rows, args.markdown))
    if FAILED_COMMANDS:
        write()
        write("Failed (timed all the same): " + "; ".join(FAILED_COMMANDS))
    return 1 if failed or FAILED_COMMANDS else 0


if __name__ == "__main__":
    sys.exit(main())
