"""memref_runtime.upstream.test_passes: upstream's test-only mlir-opt passes for the wheel's mlir-opt.

Without Debian's tools: the command line, pass options and pipelines as read; how a command
is cut into runs; the exit status, diagnostics and output of the wrapper around the wheel's
mlir-opt. With Debian's mlir-22-tools (mlir-opt built with the test passes), each pass on this
repository's own modules (mlir_inputs/test_passes/) against the real one: the same output, or
for the math approximations the same IR but for the order of hoisted constants and the same
program output under mlir-runner.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memref_runtime.bindings import package_folders, package_opt_tool
from memref_runtime.upstream.test_passes import pipeline
from memref_runtime.upstream.test_passes.catalog import PROVIDED
from memref_runtime.upstream.test_passes.command_line import OptHelp, ProvidedStep, parse, read_help
from memref_runtime.upstream.test_passes.plan import PythonRun, RealRun, plan

REPO = Path(__file__).resolve().parent.parent
WHEEL_OPT = package_opt_tool("mlir", package_folders("mlir"))
DEBIAN_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")
needs_wheel_opt = pytest.mark.skipif(WHEEL_OPT is None, reason="the MLIR bindings ship no mlir-opt")
_no_debian = pytest.mark.skipif(
    not DEBIAN_OPT.exists(),
    reason="Debian's mlir-22-tools is not installed "
    "(/usr/lib/llvm-22/bin/mlir-opt, the mlir-opt with MLIR's test passes)",
)


def needs_debian(test):
    """Compared with Debian's mlir-opt: marked debian_llvm (.ci/run's debian route), skipped without it."""
    return pytest.mark.debian_llvm(_no_debian(test))


# What mlir-opt --help would say, for the command-line tests that run no mlir-opt.
HELP = OptHelp(
    passes=frozenset({"canonicalize", "cse", "convert-scf-to-cf", "convert-to-llvm"}),
    valued=frozenset({"o", "mlir-print-ir-tree-dir"}),
)


def wrapper(*args: str, stdin: bytes | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    """python -m memref_runtime.upstream.test_passes --mlir-opt=<the wheel's> ARGS."""
    return subprocess.run(
        [sys.executable, "-m", "memref_runtime.upstream.test_passes", f"--mlir-opt={WHEEL_OPT}", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


# -- reading command lines, options and pipelines (no mlir-opt runs) -------------------------


def test_help_text_gives_the_passes_and_the_options_that_take_a_value():
    text = (
        "OPTIONS:\nGeneral options:\n\n  --allow-unregistered-dialect   - Allow\n  -o <filename>   - Output\n"
        "  --split-input-file[=<string>]   - Split\n  Compiler passes to run\n    Passes:\n"
        "      --canonicalize   - Canonicalize\n        --max-iterations=<long>   - Max\n"
        "    Pass Pipelines:\n      --sparsifier   - The pipeline\n  --x86-asm-syntax=<value>  - Syntax\n"
    )
    found = read_help(text)
    assert found.passes == {"canonicalize", "sparsifier"}  # not the pass's own option
    assert found.valued == {"o", "x86-asm-syntax"}  # an optional value is never the next word


def test_a_command_line_is_sorted_by_what_each_word_is_for():
    inv = parse(
        [
            "in.mlir",
            "-allow-unregistered-dialect",
            "-canonicalize",
            "--test-cf-assert",
            "-test-arith-emulate-wide-int=widest-int-supported=8 function-prefix=f_",
            "-o",
            "out.mlir",
            "--mlir-print-debuginfo",
            "-split-input-file",
            "--mlir-print-ir-tree-dir",
            "dumps",
            "-cse",
            "-verify-diagnostics",
        ],
        HELP,
    )
    assert inv.inputs == ["in.mlir"]
    assert inv.common == ["-allow-unregistered-dialect", "--mlir-print-ir-tree-dir", "dumps"]
    assert inv.allow_unregistered and inv.output == "out.mlir" and inv.printing == ["--mlir-print-debuginfo"]
    assert inv.split_marker == "// -----" and inv.verify == "all"
    assert inv.steps[0] == "-canonicalize" and inv.steps[3] == "-cse"
    assert [s.test_pass.name for s in inv.steps[1:3]] == ["test-cf-assert", "test-arith-emulate-wide-int"]
    assert inv.steps[2].options == "widest-int-supported=8 function-prefix=f_"


def test_a_pass_pipeline_keeps_its_nesting_when_cut_and_written_back():
    text = "builtin.module(func.func(canonicalize{max-iterations=3 test-convergence=true},cse),convert-to-llvm)"
    steps = pipeline.parse(text)
    assert [(s.anchors, s.text) for s in steps] == [
        (("builtin.module", "func.func"), "canonicalize{max-iterations=3 test-convergence=true}"),
        (("builtin.module", "func.func"), "cse"),
        (("builtin.module",), "convert-to-llvm"),
    ]
    assert pipeline.write(steps) == text
    # Two groups of the same op stay two groups.
    text = "builtin.module(func.func(cse),func.func(canonicalize))"
    assert pipeline.write(pipeline.parse(text)) == text
    with pytest.raises(pipeline.PipelineError, match="unbalanced"):
        pipeline.parse("builtin.module(func.func(cse)")


def test_pass_options_are_read_as_mlir_opts_option_parser_reads_them():
    wide_int = PROVIDED["test-arith-emulate-wide-int"]
    assert pipeline.read_options(wide_int, None) == {"function-prefix": "emulate_", "widest-int-supported": 32}
    assert pipeline.read_options(wide_int, 'function-prefix="my fn" widest-int-supported=0x10') == {
        "function-prefix": "my fn",
        "widest-int-supported": 16,
    }
    assert pipeline.read_options(PROVIDED["test-math-polynomial-approximation"], "enable-avx2") == {"enable-avx2": True}
    assert pipeline.read_options(PROVIDED["test-lower-to-llvm"], "reassociate-fp-reductions=false") == {
        "reassociate-fp-reductions": False
    }
    with pytest.raises(pipeline.PipelineError, match="<Pass-Options-Parser>: no such option widest"):
        pipeline.read_options(wide_int, "widest=8")
    with pytest.raises(pipeline.PipelineError, match="'eight' value invalid for uint argument"):
        pipeline.read_options(wide_int, "widest-int-supported=eight")


def test_a_command_is_cut_into_runs_in_the_order_of_its_passes():
    runs = plan(parse(["-canonicalize", "-test-cf-assert", "-cse", "-test-lower-to-llvm", "-convert-to-llvm"], HELP))
    assert [type(r).__name__ for r in runs] == ["RealRun", "PythonRun", "RealRun", "RealRun", "RealRun"]
    assert runs[0].pass_arguments() == ["-canonicalize"] and runs[2].pass_arguments() == ["-cse"]
    assert runs[1].anchors == (None,)  # the top-level module
    # A pipeline-defined test pass given as a flag: upstream's pipeline, nesting and all.
    expansion = runs[3].pass_arguments()[0]
    assert expansion.startswith(
        "--pass-pipeline=builtin.module(func.func(convert-vector-to-scf),"
        "func.func(convert-linalg-to-loops),lower-affine,convert-scf-to-cf,canonicalize,cse,"
        "convert-vector-to-llvm{reassociate-fp-reductions=false},func.func(convert-math-to-llvm),"
    )
    assert expansion.endswith(",convert-ub-to-llvm,reconcile-unrealized-casts)")
    assert runs[4].pass_arguments() == ["-convert-to-llvm"]


def test_in_a_pipeline_test_passes_keep_their_nesting_and_pipelines_join_their_neighbours():
    inv = parse(
        [
            (
                "--pass-pipeline=builtin.module(func.func(cse,test-vector-scan-lowering),"
                "test-lower-to-llvm{reassociate-fp-reductions},convert-to-llvm)"
            )
        ],
        HELP,
    )
    first, scan, rest = plan(inv)
    assert first.pass_arguments() == ["--pass-pipeline=builtin.module(func.func(cse))"]
    assert isinstance(scan, PythonRun) and scan.anchors == ("builtin.module", "func.func")
    text = rest.pass_arguments()[0]
    assert "convert-vector-to-llvm{reassociate-fp-reductions=true}" in text
    assert text.endswith("reconcile-unrealized-casts,convert-to-llvm)")  # one run, upstream's pipeline then ours
    # A command that starts or ends with a Python pass still reads and prints through mlir-opt.
    runs = plan(parse(["-test-cf-assert"], HELP))
    assert [type(r) for r in runs] == [RealRun, PythonRun, RealRun] and not runs[0].pass_arguments()
    with pytest.raises(
        pipeline.PipelineError,
        match="restricted to 'func.func' on a PassManager intended to run on 'builtin.module', did you intend to nest",
    ):
        plan(parse(["--pass-pipeline=builtin.module(test-vector-scan-lowering)"], HELP))
    assert isinstance(parse(["--pass-pipeline=builtin.module(test-cf-assert)"], HELP).steps[0], ProvidedStep)


# -- the wrapper around the wheel's mlir-opt ------------------------------------------------

UNBUFFERIZABLE = """func.func @f(%c: i1) -> f32 {
  cf.assert %c, "message"
  %t = "test.make"() : () -> tensor<4xf32>
  %i = arith.constant 0 : index
  %x = tensor.extract %t[%i] : tensor<4xf32>
  return %x : f32
}
"""


@needs_wheel_opt
def test_a_failing_public_pass_after_a_python_one_fails_with_its_diagnostic_in_the_original_file(tmp_path):
    source = tmp_path / "unbufferizable.mlir"
    source.write_text(UNBUFFERIZABLE)
    (tmp_path / "out.mlir").write_text("an older output")
    done = wrapper(
        str(source),
        "-allow-unregistered-dialect",
        "-test-cf-assert",
        "-one-shot-bufferize",
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert done.returncode == 1
    assert done.stdout == b"" and not (tmp_path / "out.mlir").exists()  # mlir-opt keeps it on success only
    # Line 3, column 8 of the input, and its source line, though the run that failed read bytecode.
    assert done.stderr.decode().splitlines() == [
        f"{source}:3:8: error: op was not bufferized",
        '  %t = "test.make"() : () -> tensor<4xf32>',
        "       ^",
        f'{source}:3:8: note: see current operation: %0 = "test.make"() : () -> tensor<4xf32>',
    ]


@needs_wheel_opt
def test_bad_options_and_a_silent_pass_failure_end_as_mlir_opt_ends(tmp_path):
    source = tmp_path / "f.mlir"
    source.write_text("func.func @emulate_f(%a: i64) -> i64 { return %a : i64 }\n")
    done = wrapper(str(source), "-test-arith-emulate-wide-int=nope=1")
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == "<unknown>:0: error: <Pass-Options-Parser>: no such option nope\n"
    # Upstream's pass fails without a message for a width that is no power of two.
    done = wrapper(str(source), "-test-arith-emulate-wide-int=widest-int-supported=6")
    assert (done.returncode, done.stdout, done.stderr) == (1, b"", b"")


@needs_wheel_opt
def test_input_that_does_not_parse_fails_with_mlir_opts_own_errors(tmp_path):
    # A Python pass first: the bindings would parse the file; what does not parse, mlir-opt reads.
    source = tmp_path / "broken.mlir"
    source.write_text('func.func @f(%c: i1) {\n  cf.assert %c, "m"\n  return %nothing : i32\n}\n')
    ours = wrapper(str(source), "-test-cf-assert")
    real = subprocess.run([WHEEL_OPT, str(source)], capture_output=True, check=False)
    assert (ours.returncode, ours.stdout) == (1, b"")
    assert ours.stderr == real.stderr and b"use of undeclared SSA value name" in ours.stderr


@needs_wheel_opt
def test_stdin_and_printing_options_reach_the_last_run(tmp_path):
    text = b'func.func @f(%c: i1) {\n  cf.assert %c, "m"\n  return\n}\n'
    done = wrapper("-test-cf-assert", "--mlir-print-debuginfo", "-o", str(tmp_path / "out.mlir"), stdin=text)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    out = (tmp_path / "out.mlir").read_text()
    assert "llvm.cond_br %arg0, ^bb1, ^bb2 loc(#loc" in out
    assert 'loc("<stdin>":2:3)' in out  # the assertion's location, from the run that read stdin
    # Without the option no location is printed, though the runs between kept them all.
    done = wrapper("-test-cf-assert", stdin=text)
    assert done.returncode == 0 and b"loc(" not in done.stdout and b"llvm.cond_br" in done.stdout


@needs_wheel_opt
def test_expected_diagnostics_are_verified_across_runs(tmp_path):
    source = tmp_path / "v.mlir"
    source.write_text(
        "func.func @emulate_f(%a: i64) -> i64 {\n"
        "  // expected-error@+1 {{failed to legalize operation 'arith.divui'}}\n"
        "  %q = arith.divui %a, %a : i64\n  return %q : i64\n}\n"
    )
    done = wrapper(str(source), "-test-arith-emulate-wide-int", "-verify-diagnostics", "-canonicalize")
    assert (done.returncode, done.stderr) == (0, b""), done.stderr.decode()
    source.write_text(source.read_text().replace("divui'", "divsi'"))
    done = wrapper(str(source), "-test-arith-emulate-wide-int", "-verify-diagnostics", "-canonicalize")
    assert done.returncode == 1
    errors = done.stderr.decode()
    assert f"{source}:3:8: error: unexpected error: failed to legalize operation 'arith.divui'" in errors
    assert (
        f"{source}:2:6: error: expected error \"failed to legalize operation 'arith.divsi'\" was not produced" in errors
    )


@needs_wheel_opt
def test_a_crash_of_the_real_mlir_opt_ends_the_wrapper_by_the_same_signal(tmp_path):
    # The wheel's assertions build aborts when it lowers an i1 memref store (a known abort).
    source = tmp_path / "i1.mlir"
    source.write_text(
        'func.func @f(%m: memref<i1>, %b: i1) {\n  cf.assert %b, "m"\n'
        "  memref.store %b, %m[] : memref<i1>\n  return\n}\n"
    )
    done = wrapper(str(source), "-test-cf-assert", "-finalize-memref-to-llvm")
    assert done.returncode == -signal.SIGABRT, done.stderr.decode()[-2000:]
    assert b"integralElementType.getWidth() >= 8" in done.stderr


@needs_wheel_opt
def test_a_command_without_a_provided_pass_is_the_real_mlir_opt(tmp_path):
    source = tmp_path / "f.mlir"
    source.write_text("func.func @f() { return }\n")
    done = wrapper(str(source), "-test-no-such-pass")
    assert done.returncode == 1
    assert b"Unknown command line argument '-test-no-such-pass'" in done.stderr
    listing = subprocess.run(
        [sys.executable, "-m", "memref_runtime.upstream.test_passes", "--list"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [line.split("{")[0].split(":")[0] for line in listing.splitlines()] == [f"-{p}" for p in PROVIDED]


# -- against Debian's mlir-opt, which has the real passes -----------------------------------

# (input under mlir_inputs/test_passes, mlir-opt arguments): the same output, exit status and
# diagnostics. The op that a "see current operation" note prints is numbered in the IR it is in,
# which here holds the wide-int emulation's scaffolding: its value numbers are not compared (nor,
# so, its locations under --mlir-print-debuginfo, which it prints without here).
SAME_AS_DEBIAN = [
    ("asserts.mlir", ["-test-cf-assert"]),
    ("asserts.mlir", ["-test-cf-assert", "--mlir-print-debuginfo"]),
    ("asserts.mlir", ["-test-cf-assert", "-convert-func-to-llvm", "--mlir-print-op-generic"]),
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int"]),
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int", "--mlir-print-debuginfo"]),
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int=function-prefix=narrow_"]),
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int=function-prefix=narrow_ widest-int-supported=16"]),
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int=function-prefix=vector_"]),  # fails in both
    ("wide_ints.mlir", ["-test-arith-emulate-wide-int=widest-int-supported=8"]),  # fails in both
    ("wide_ints.mlir", ["-test-cf-assert", "-test-arith-emulate-wide-int", "-test-lower-to-llvm"]),
    ("schedules.mlir", ["-test-transform-dialect-erase-schedule", "--mlir-print-debuginfo"]),
    ("schedules.mlir", ["-transform-interpreter", "-test-transform-dialect-erase-schedule"]),
    ("lowering.mlir", ["-test-lower-to-llvm"]),
    ("lowering.mlir", ["-test-lower-to-llvm=reassociate-fp-reductions", "--mlir-print-debuginfo"]),
    ("lowering.mlir", ["--pass-pipeline=builtin.module(test-lower-to-llvm{reassociate-fp-reductions},cse)"]),
]


def without_note_numbers(text: str) -> str:
    return "\n".join(
        re.sub(r"%\d+", "%N", line) if "see current operation:" in line else line for line in text.splitlines()
    )


def debian(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(DEBIAN_OPT), *args], capture_output=True, cwd=REPO, timeout=300, check=False)


@needs_wheel_opt
@needs_debian
@pytest.mark.parametrize(("name", "args"), SAME_AS_DEBIAN, ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_the_same_as_debians_mlir_opt(name, args):
    path = f"mlir_inputs/test_passes/{name}"
    ours, real = wrapper(path, *args), debian(path, *args)
    assert without_note_numbers(ours.stderr.decode()) == without_note_numbers(real.stderr.decode())
    assert ours.stdout.decode() == real.stdout.decode()
    assert ours.returncode == real.returncode


def ops_with_constants_inlined(text: str) -> str:
    """`text` with each function's arith.constant ops dropped and their uses spelled by value."""
    out = []
    for function in re.split(r"(?=^  func\.func)", text, flags=re.MULTILINE):
        constants = dict(re.findall(r"(%c\w*) = arith\.constant (.*)", function))
        body = "\n".join(line for line in function.splitlines() if "arith.constant" not in line)
        out.append(re.sub(r"%c\w*\b", lambda m, known=constants: f"<{known.get(m.group(0), m.group(0))}>", body))
    return "\n".join(out)


@needs_wheel_opt
@needs_debian
@pytest.mark.parametrize("option", ["", "=enable-avx2"])
def test_polynomial_approximations_are_debians_but_for_the_order_of_constants(option):
    args = ["mlir_inputs/test_passes/math_functions.mlir", f"-test-math-polynomial-approximation{option}"]
    ours, real = wrapper(*args), debian(*args)
    assert ours.returncode == real.returncode == 0, ours.stderr.decode()
    assert sorted(re.findall(r"arith\.constant .*", ours.stdout.decode())) == sorted(
        re.findall(r"arith\.constant .*", real.stdout.decode())
    )
    assert ops_with_constants_inlined(ours.stdout.decode()) == ops_with_constants_inlined(real.stdout.decode())


@needs_wheel_opt
@needs_debian
def test_polynomial_approximations_print_what_debians_print():
    args = ["mlir_inputs/test_passes/math_functions.mlir", "-test-math-polynomial-approximation", "-test-lower-to-llvm"]
    runner = os.path.join(os.path.dirname(WHEEL_OPT), "mlir-runner")
    library = os.path.join(package_folders("mlir")[0], "lib", "libmlir_c_runner_utils.so")

    def run(lowered: bytes) -> str:
        done = subprocess.run(
            [runner, "-e", "main", "-entry-point-result=void", f"-shared-libs={library}"],
            input=lowered,
            capture_output=True,
            timeout=300,
            check=True,
        )
        return done.stdout.decode()

    ours, real = wrapper(*args), debian(*args)
    assert ours.returncode == real.returncode == 0
    printed = run(ours.stdout)
    assert printed == run(real.stdout)
    assert (
        printed.count("\n") == 16
        and "( 0.0301974, 0.472367, 0.9999, 1, 1.34986, 2.71556, 12.1825, 2.35385e+17 )" in printed
    )  # exp of the first row, as printed by both
