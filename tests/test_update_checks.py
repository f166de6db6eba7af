"""memref-update-checks: CHECK lines generated from a test's real output, in a scratch lit suite
that loads this repository's lit.cfg.py (so the substitutions and environment are the real ones)
and whose tests live in a temp folder, never in lit_tests/."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support.paths import REPO

from memref_runtime import update_checks
from memref_runtime.update_checks import Masks, check_pattern, split_sections

pytestmark = pytest.mark.harness

BIN = os.path.dirname(sys.executable)
LIT = shutil.which("lit", path=BIN) or shutil.which("lit")
PYTHON_FILECHECK = shutil.which("filecheck", path=BIN) or shutil.which("filecheck")

needs_lit = pytest.mark.skipif(LIT is None, reason="lit is not installed")

SUITE_CONFIG = f"""\
import os

# This repository's configuration (substitutions, features, environment), for tests kept here.
lit_config.load_config(config, {str(REPO / "lit.cfg.py")!r})
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
config.test_exec_root = os.path.join(config.test_source_root, "Output")
config.excludes = ["lit.cfg.py", "Output"]
"""

HEADER = "# RUN: %PYTHON %s 2>&1 | FileCheck %s\nfrom memref_runtime.testing import log, run\n"


@pytest.fixture
def suite(tmp_path) -> Path:
    root = tmp_path / "suite"
    root.mkdir()
    (root / "lit.cfg.py").write_text(SUITE_CONFIG)
    return root


def write(suite: Path, name: str, text: str) -> Path:
    path = suite / name
    path.write_text(text)
    return path


def case(body: str) -> str:
    """A test of HEADER and `body` (dedented)."""
    return HEADER + textwrap.dedent(body)


def update(capsys, *args) -> tuple[int, str, str]:
    status = update_checks.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def lit_passes(path: Path, *params: str) -> None:
    out = subprocess.run([LIT, "-v", *params, str(path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "Passed" in out.stdout, out.stdout + out.stderr


def passes_both_filechecks(path: Path) -> None:
    """lit passes with the suite's FileCheck (LLVM's where installed) and the Python one."""
    lit_passes(path)
    if PYTHON_FILECHECK:
        lit_passes(path, "-D", f"filecheck={PYTHON_FILECHECK}")


def check_lines(text: str) -> list[str]:
    """The CHECK lines of a test (any prefix), stripped."""
    return [
        line.strip()
        for line in text.splitlines()
        if re.match(r"\s*(#|//) [A-Z]+[-A-Z{}]*:", line) and not re.match(r"\s*(#|//) (RUN|REQUIRES):", line)
    ]


# ---------------------------------------------------------------------------
# Patterns: no lit needed.
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("rows [1, 2]", (False, "rows [1, 2]")),
        ("sum 19.0", (False, "sum 19.0{{$}}")),  # sum 19.0625 must not match
        ("[[1. 5.]", (True, "[[1. 5.]")),
        ("x {{y}}", (True, "x {{y}}")),
        ("[[1 2]] count 2", (False, "{{\\[\\[}}1 2]] count 2{{$}}")),
        ("{{a}} 7", (False, "{{\\{\\{}}a}} 7{{$}}")),
        ("base@ = 0x55d5c3a0b2c0 rank = 2", (False, "base@ = 0x{{[0-9a-f]+}} rank = 2{{$}}")),
        ("<object at 0x7f00aa>", (False, "<object at 0x{{[0-9a-f]+}}>")),
        ("bits 0x3f800000", (False, "bits 0x3f800000{{$}}")),  # 8 hex digits and no `at`: a value
        ("pointer 0xdeadbeef12", (False, "pointer 0x{{[0-9a-f]+}}")),  # 10 digits: an address, not anchored
        ("[[0x7fabcdef1234]]", (False, "{{\\[\\[}}0x{{[0-9a-f]+}}]]")),
        ("{0x7fabcdef1234}", (False, "{0x{{[0-9a-f]+}}{{[}]}}")),
        ("lit sees RUN: and CHECK-NEXT: and END.", (False, "lit sees RUN{{:}} and CHECK-NEXT{{:}} and END{{[.]}}")),
        ('  File "x.py", line 12, in f', (False, '  File "x.py", line {{[0-9]+}}, in f')),
        ("trailing 3  ", (False, "trailing 3")),  # `{{$}}` would not match the spaces
        ("   ", (False, "{{^[[:blank:]]+$}}")),
    ],
)
def test_check_pattern(line, expected):
    assert check_pattern(line) == expected


def test_paths_under_the_roots_are_masked():
    masks = Masks(whole_paths=("/tmp", "/tmp/suite/Output"), source_roots=("/tmp/suite",)).pattern()
    assert check_pattern("wrote /tmp/tmpab12/repro.mlir: ok", masks) == (False, "wrote {{.*}}: ok")
    assert check_pattern("in /tmp/suite/Output/Output/a.py.tmp", masks) == (False, "in {{.*}}")
    assert check_pattern("from /tmp/suite/lib/a.py", masks) == (False, "from {{.*}}/lib/a.py")
    assert check_pattern("not /tmpfoo/x", masks) == (False, "not /tmpfoo/x")


def test_split_sections():
    output = "before\n\nTEST: f\na\n\nb\n\n\nTEST: g\n\nTEST: f\nc\n"
    sections = [(s.name, s.lines) for s in split_sections(output)]
    assert sections == [(None, ["before"]), ("f", ["a", "", "b"]), ("g", []), ("f", ["c"])]
    assert [s.name for s in split_sections("\nTEST: f\nx\n")] == ["f"]


def test_importing_needs_no_mlir():
    code = "import sys, memref_runtime.update_checks; sys.exit('mlir' in sys.modules or 'lit' in sys.modules)"
    env = dict(os.environ, PYTHONPATH=str(REPO / "runtime"))
    assert subprocess.run([sys.executable, "-c", code], env=env, timeout=60).returncode == 0


def test_console_script_and_module():
    # Read as text: tomllib is Python >= 3.11, and pyproject.toml allows 3.10.
    scripts = (REPO / "pyproject.toml").read_text().split("\n[project.scripts]\n", 1)[1].split("\n[", 1)[0]
    entry = dict(line.replace('"', "").split(" = ") for line in scripts.splitlines() if line.strip())
    module, _, name = entry["memref-update-checks"].partition(":")
    assert getattr(importlib.import_module(module), name) is update_checks.main
    env = dict(os.environ, PYTHONPATH=str(REPO / "runtime"))
    out = subprocess.run(
        [sys.executable, "-m", "memref_runtime.update_checks", "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "--check" in out.stdout and "-D NAME=VALUE" in out.stdout and "--timeout SECONDS" in out.stdout


def test_each_module_is_short():
    """The package is split by concern (DESIGN.md: a module past ~500 lines holds two)."""
    package = REPO / "runtime" / "memref_runtime" / "update_checks"
    lengths = {path.name: len(path.read_text().splitlines()) for path in package.glob("*.py")}
    assert {
        "running.py",
        "failures.py",
        "checks.py",
        "rewrite.py",
        "update.py",
        "cli.py",
        "__main__.py",
        "lit_updater.py",
    } <= set(lengths)
    assert max(lengths.values()) < 400, lengths


# ---------------------------------------------------------------------------
# Whole files, through lit.
# ---------------------------------------------------------------------------

FRESH = case('''
"""A fresh regression case: no CHECK lines yet."""


def testFirst():
    # The comment stays.
    log("sum", 19.0)
    log("")
    log("rows [1, 2]")


run(testFirst)


def testSecond():
    log("done")


run(testSecond)
''')

FRESH_GENERATED = FRESH.replace(
    "run(testFirst)\n",
    """run(testFirst)
# CHECK-LABEL: TEST: testFirst
# CHECK-NEXT: sum 19.0{{$}}
# CHECK-EMPTY:
# CHECK-NEXT: rows [1, 2]
""",
).replace(
    "run(testSecond)\n",
    """run(testSecond)
# CHECK-LABEL: TEST: testSecond
# CHECK-NEXT: done
""",
)


@needs_lit
def test_fresh_test_idempotence_and_check(suite, capsys):
    path = write(suite, "fresh.py", FRESH)
    # A new test: what it writes is its CHECK lines, each with its line number in the new file.
    written = "".join(
        f"  {n:>2} | {line}\n" for n, line in enumerate(FRESH_GENERATED.splitlines(), 1) if "# CHECK" in line
    )
    status, out, err = update(capsys, "--check", path)
    assert status == 1 and path.read_text() == FRESH, err
    assert out == (
        f"out-of-date: {path}: 6 CHECK lines to write (a new test)\n{written}"
        f"out of date: {path} (run memref-update-checks {path})\nmemref-update-checks: 1 out-of-date\n"
    )

    status, out, err = update(capsys, path)
    assert status == 0 and not err, err
    assert out == f"updated: {path}: 6 CHECK lines written (a new test)\n{written}memref-update-checks: 1 updated\n"
    assert "  15 | # CHECK-LABEL: TEST: testFirst\n  16 | # CHECK-NEXT: sum 19.0{{$}}\n" in written
    assert path.read_text() == FRESH_GENERATED

    # A second run changes nothing; --check agrees.
    assert update(capsys, path)[:2] == (0, f"unchanged: {path}\nmemref-update-checks: 1 unchanged\n")
    assert update(capsys, "--check", path)[0] == 0
    assert path.read_text() == FRESH_GENERATED
    passes_both_filechecks(path)


@needs_lit
def test_changed_output_is_rewritten_in_place(suite, capsys):
    """Lines that still match keep their place among the comments; a changed one is replaced
    where it was, a new one goes after its neighbour."""
    path = write(
        suite,
        "changed.py",
        case("""
        # CHECK-LABEL: TEST: testValues
        def testValues():
            # CHECK: first 1{{$}}
            log("first", 1)
            # Why the second value is 2.
            # CHECK: second 2{{$}}
            log("second", 2)
            # CHECK-NOT: Traceback
            log("third", 3)


        run(testValues)
    """),
    )
    assert update(capsys, path)[0] == 0
    generated = path.read_text()
    assert (
        '    # CHECK-NEXT: first 1{{$}}\n    log("first", 1)\n    # Why the second value is 2.\n'
        '    # CHECK-NEXT: second 2{{$}}\n    # CHECK-NEXT: third 3{{$}}\n    log("second", 2)\n'
        "    # CHECK-NOT: Traceback\n" in generated
    )

    path.write_text(generated.replace('log("second", 2)', 'log("second", 20)'))
    status, out, _ = update(capsys, "--check", path)
    assert status == 1
    diff = [line for line in out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert diff == ["-    # CHECK-NEXT: second 2{{$}}", "+    # CHECK-NEXT: second 20{{$}}"]
    # A changed test: what it writes is a unified diff, the same one --check printed.
    status, written, _ = update(capsys, path)
    assert status == 0
    assert (
        written
        == f"updated: {path}\n"
        + out.split(f"out of date: {path}")[0].split("\n", 1)[1]
        + "memref-update-checks: 1 updated\n"
    )
    assert f"--- a/{path}\n+++ b/{path}\n@@ " in written
    assert update(capsys, "--check", path)[0] == 0
    passes_both_filechecks(path)


@needs_lit
def test_escaping_of_brackets_and_braces(suite, capsys):
    path = write(
        suite,
        "escapes.py",
        case("""
        def testEscapes():
            log("[[1. 5.]")
            log(" [6. 7.]]")
            log("{{not a regex}} and [[NOT_A_VARIABLE]]")
            log("[[0, 1], [2, 3]] total 6")
            log("RU" "N: and CHECK" ": inside the output")  # not a RUN line of this file


        run(testEscapes)
    """),
    )
    assert update(capsys, path)[0] == 0
    assert check_lines(path.read_text()) == [
        "# CHECK-LABEL: TEST: testEscapes",
        "# CHECK-NEXT{LITERAL}: [[1. 5.]",
        "# CHECK-NEXT:  [6. 7.]]",
        "# CHECK-NEXT{LITERAL}: {{not a regex}} and [[NOT_A_VARIABLE]]",
        "# CHECK-NEXT: {{\\[\\[}}0, 1], [2, 3]] total 6{{$}}",
        "# CHECK-NEXT: RUN{{:}} and CHECK{{:}} inside the output",
    ]
    assert update(capsys, "--check", path)[0] == 0
    passes_both_filechecks(path)


@needs_lit
def test_addresses_and_paths(suite, capsys):
    """Values that change from run to run: the same CHECK lines on every run."""
    path = write(
        suite,
        "addresses.py",
        case("""
        import os
        import tempfile


        def testRunToRun():
            log(f"Unranked Memref base@ = {hex(id(object()))} rank = 1")
            log(f"<thing at {hex(id(log))}>")
            log("scratch", tempfile.mkdtemp())
            log("cwd", os.getcwd())
            log("source", __file__)


        run(testRunToRun)
    """),
    )
    assert update(capsys, path)[0] == 0
    assert check_lines(path.read_text())[1:] == [
        "# CHECK-NEXT: Unranked Memref base@ = 0x{{[0-9a-f]+}} rank = 1{{$}}",
        "# CHECK-NEXT: <thing at 0x{{[0-9a-f]+}}>",
        "# CHECK-NEXT: scratch {{.*}}",
        "# CHECK-NEXT: cwd {{.*}}",
        "# CHECK-NEXT: source {{.*}}/addresses.py",
    ]
    assert update(capsys, "--check", path)[0] == 0  # new addresses and temp dirs, same lines
    passes_both_filechecks(path)


TWO_RUNS = """\
# RUN: %PYTHON %s small 2>&1 | FileCheck %s --check-prefixes=COMMON,SMALL
# RUN: %PYTHON %s big 2>&1 | FileCheck %s --check-prefixes=COMMON,BIG
import sys

from memref_runtime.testing import log, run

SIZE = {"small": 2, "big": 5}[sys.argv[1]]


def testSame():
    log("same for both")


def testSize():
    log("size", SIZE)
    log("last", list(range(SIZE))[-1])


run(testSame)
run(testSize)
"""


@needs_lit
def test_two_run_lines_with_their_prefixes(suite, capsys):
    path = write(suite, "two_runs.py", TWO_RUNS)
    status, _, err = update(capsys, path)
    assert status == 0 and not err, err
    assert check_lines(path.read_text()) == [
        "# COMMON-LABEL: TEST: testSame",
        "# COMMON-NEXT: same for both",
        "# SMALL-LABEL: TEST: testSize",
        "# SMALL-NEXT: size 2{{$}}",
        "# SMALL-NEXT: last 1{{$}}",
        "# BIG-LABEL: TEST: testSize",
        "# BIG-NEXT: size 5{{$}}",
        "# BIG-NEXT: last 4{{$}}",
    ]
    assert update(capsys, "--check", path)[0] == 0
    passes_both_filechecks(path)


@needs_lit
def test_prefixes_without_a_shared_one(suite, capsys):
    """Only SMALL and BIG: every section is written twice, once per prefix."""
    text = TWO_RUNS.replace("--check-prefixes=COMMON,SMALL", "--check-prefix=SMALL").replace(
        "--check-prefixes=COMMON,BIG", "--check-prefix BIG"
    )
    path = write(suite, "two_prefixes.py", text)
    assert update(capsys, path)[0] == 0
    lines = check_lines(path.read_text())
    assert lines[:4] == [
        "# SMALL-LABEL: TEST: testSame",
        "# SMALL-NEXT: same for both",
        "# BIG-LABEL: TEST: testSame",
        "# BIG-NEXT: same for both",
    ]
    assert len(lines) == 10
    passes_both_filechecks(path)


@needs_lit
def test_two_pipelines_on_one_run_line(suite, capsys):
    path = write(
        suite,
        "one_line.py",
        "# RUN: %PYTHON %s a | FileCheck %s --check-prefix=A && "
        "%PYTHON %s b | FileCheck %s --check-prefix=B\n"
        "import sys\nprint('argument', sys.argv[1])\n",
    )
    assert update(capsys, path)[0] == 0
    assert check_lines(path.read_text()) == ["# A: argument a", "# B: argument b"]
    passes_both_filechecks(path)


@needs_lit
def test_conflicting_and_unused_prefixes(suite, capsys):
    conflict = write(suite, "conflict.py", TWO_RUNS.replace("COMMON,SMALL", "COMMON").replace("COMMON,BIG", "COMMON"))
    status, _, err = update(capsys, conflict)
    assert status == 2 and "prints section TEST: testSize differently" in err
    assert conflict.read_text() == TWO_RUNS.replace("COMMON,SMALL", "COMMON").replace("COMMON,BIG", "COMMON")

    same = write(suite, "same.py", TWO_RUNS.replace(" big ", " small "))
    status, _, err = update(capsys, same)
    assert status == 0 and "prefix BIG has no CHECK lines" in err and "prefix SMALL has no CHECK lines" in err


@needs_lit
def test_lit_parameters_are_passed_on(suite, capsys):
    """`-D` reaches lit.cfg.py as `lit -D` does: here the runtime `import mlir.runtime` gives."""
    path = write(
        suite,
        "param.py",
        case("""
        import os

        log("runtime", os.environ["MEMREF_RUNTIME_MLIR_RUNTIME"])
    """),
    )
    assert update(capsys, "-D", "mlir_runtime=memref_runtime", path)[0] == 0
    assert check_lines(path.read_text()) == ["# CHECK: runtime memref_runtime"]
    status, out, _ = update(capsys, "--check", path)
    assert status == 1 and "+# CHECK: runtime upstream" in out
    assert update(capsys, "--param", "mlir_runtime=memref_runtime", "--check", path)[0] == 0
    with pytest.raises(SystemExit):
        update_checks.main(["-D", "=value", str(path)])
    assert "expected NAME=VALUE, got '=value'" in capsys.readouterr().err


@needs_lit
def test_hand_written_and_skipped_files_are_left_alone(suite, capsys):
    hand = write(
        suite, "hand.py", HEADER + "# UPDATE-CHECKS: hand-written: numeric variables\nlog('x')\n# CHECK: {{.}}\n"
    )
    skipped = write(suite, "skipped.py", HEADER + "# REQUIRES: no-such-feature\nlog('x')\n")
    before = hand.read_text(), skipped.read_text()
    status, out, _ = update(capsys, "--check", hand, skipped)
    assert status == 0
    assert f"hand-written: {hand}: numeric variables" in out
    assert f"skipped: {skipped}: " in out and "no-such-feature" in out
    assert (hand.read_text(), skipped.read_text()) == before

    bare = write(suite, "bare.py", HEADER + "# UPDATE-CHECKS: hand-written:\nlog('x')\n")
    status, _, err = update(capsys, bare)
    assert status == 2 and "needs a reason" in err


@needs_lit
def test_errors_name_the_file_and_the_cause(suite, tmp_path, capsys):
    outside = tmp_path / "outside.py"
    outside.write_text(HEADER)
    no_filecheck = write(suite, "no_filecheck.py", "# RUN: %PYTHON %s\nprint('x')\n")
    failing = write(suite, "failing.py", HEADER + "log('last words')\nraise SystemExit(3)\n")
    conditional = write(
        suite,
        "conditional.py",
        "# RUN: %PYTHON %s | FileCheck %s --check-prefixes=%if bindings-mlir %{A%} %else %{B%}\n",
    )
    status, out, err = update(capsys, outside, no_filecheck, failing, conditional, suite / "missing.py")
    assert status == 2
    assert f"skipped: {outside}: not a test of any lit suite" in out  # a pre-commit hook's list
    assert f"error: {no_filecheck}: no RUN line pipes into `FileCheck %s`" in err
    assert re.search(
        f"failed: {re.escape(str(failing))}: RUN line 1: `python[0-9.]*` exited with status 3; "
        "file left unchanged\n  \\$ %PYTHON %s 2>&1 \\| FileCheck %s\n",
        err,
    ), err
    assert "  | last words" in err
    assert f"error: {conditional}: RUN line 1 uses %if" in err
    assert f"error: {suite / 'missing.py'}: no such file or folder" in err
    assert "memref-update-checks: 1 skipped, 1 failed, 3 error" in out


@needs_lit
def test_placement_of_new_sections(suite, capsys):
    """@run-decorated functions get their lines after the function; a test without sections
    gets them at the end; a `//` test (MLIR style) gets `//` CHECK lines."""
    decorated = write(
        suite,
        "decorated.py",
        case("""
        @run
        def testDecorated():
            log("inside")

        # A comment after the function.
    """),
    )
    assert update(capsys, decorated)[0] == 0
    assert decorated.read_text().endswith(
        '    log("inside")\n# CHECK-LABEL: TEST: testDecorated\n# CHECK-NEXT: inside\n\n# A comment after the function.\n'
    )

    plain = write(suite, "plain.py", "# RUN: %PYTHON %s | FileCheck %s\nprint('one')\nprint('two')\n")
    assert update(capsys, plain)[0] == 0
    assert plain.read_text().endswith("print('two')\n# CHECK: one\n# CHECK-NEXT: two\n")

    mlir_style = write(suite, "tool.mlir", "// RUN: %PYTHON -c \"print('from a tool 42')\" | FileCheck %s\n")
    assert update(capsys, mlir_style)[0] == 0
    assert mlir_style.read_text().endswith("// CHECK: from a tool 42{{$}}\n")
    assert update(capsys, "--check", decorated, plain, mlir_style)[0] == 0
    passes_both_filechecks(mlir_style)


@needs_lit
@pytest.mark.jit
def test_a_real_jit_test(suite, capsys):
    path = write(
        suite,
        "jit_case.py",
        "# REQUIRES: host-supports-jit\n"
        + case('''
        import numpy as np

        from memref_runtime import JitModule


        def testScale():
            jit = JitModule("""
        func.func @scale(%a: memref<?x?xf32>, %s: f32) {
          linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
              outs(%a : memref<?x?xf32>) {
          ^bb0(%x: f32):
            %y = arith.mulf %x, %s : f32
            linalg.yield %y : f32
          }
          return
        }
        """)
            a = np.arange(6, dtype=np.float32).reshape(2, 3)
            jit.scale(a, 0.5)
            log(a)
            log("sum", a.sum())


        run(testScale)
    '''),
    )
    status, _, err = update(capsys, path)
    assert status == 0, err
    assert check_lines(path.read_text()) == [
        "# CHECK-LABEL: TEST: testScale",
        "# CHECK-NEXT{LITERAL}: [[0.  0.5 1. ]",
        "# CHECK-NEXT:  [1.5 2.  2.5]]",
        "# CHECK-NEXT: sum 7.5{{$}}",
    ]
    passes_both_filechecks(path)


@needs_lit
@pytest.mark.jit
def test_the_template_works(suite, capsys):
    """lit_tests/TEMPLATE.md: its test gets the CHECK lines it shows, passes, and keeps them
    where they are moved to."""
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "lit_tests" / "TEMPLATE.md").read_text(), re.S)
    template, generated = blocks[:2]
    path = write(suite, "from_template.py", template)
    status, _, err = update(capsys, path)
    assert status == 0, err
    assert path.read_text() == template + generated
    passes_both_filechecks(path)

    label, line = generated.splitlines()
    moved = template.replace("def testCallbackSeesTheArray", f"{label}\ndef testCallbackSeesTheArray").replace(
        "        engine.invoke(", f"        {line}\n        engine.invoke("
    )
    path.write_text(moved)
    assert update(capsys, "--check", path)[0] == 0
    assert path.read_text() == moved
