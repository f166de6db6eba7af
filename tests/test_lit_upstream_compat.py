"""Upstream's lit conventions in a throw-away copy of the suite: substitutions that are missing
or mistyped, %mlir_src_dir, .c tests with %host_cc, features of the Python version and of the
LLVM targets, CPU features and the hardware switches, test-only passes with and without a
same-version mlir-opt that has them (and through memref_runtime.upstream.test_passes, which
provides some), the named known defects of the toolchain, FILECHECK_OPTS, upstream-style
lit.local.cfg files and helper folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT, REPO

from memref_runtime.bindings import package_folders, package_opt_tool
from memref_runtime.upstream import hardware

DEBIAN_MLIR_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")
# The wheel's own mlir-opt (no test passes): the suite's mlir-opt, Debian's LLVM installed or not.
WHEEL_MLIR_OPT = package_opt_tool("mlir", package_folders("mlir"))

pytestmark = pytest.mark.skipif(LIT is None, reason="lit is not installed")
# torch-mlir ships no mlir-opt: the suite copy (which follows MEMREF_RUNTIME_BINDINGS) has none.
NO_MLIR_OPT = os.environ.get("MEMREF_RUNTIME_BINDINGS", "mlir") != "mlir"
needs_mlir_opt = pytest.mark.skipif(NO_MLIR_OPT, reason="the provider ships no mlir-opt (torch-mlir)")

# A CPU feature this host's architecture does not have at all.
FOREIGN_FEATURE = "sve" if hardware.host().family != "aarch64" else "avx512f"

TESTS = {
    # %sharedlib is no substitution: lit expands %s and leaves "haredlib".
    "half_expanded.py": "# RUN: %PYTHON -c pass %sharedlib\n",
    # A typo: %mlir_inputs eats the front of it.
    "typo.py": "# RUN: %PYTHON -c pass %mlir_inputs_dir\n",
    # Upstream's own typo (Integration/Dialect/Tensor/*-runtime-verification.mlir): lit's %t, then text.
    "upstream_typo.py": '# RUN: %PYTHON -c "import sys; print(sys.argv[1])" %tlir_runner_utils | FileCheck %s\n'
    "# CHECK: {{.*}}upstream_typo.py.tmplir_runner_utils\n",
    # Upstream's SparseTensor tests read their inputs through %mlir_src_dir (the fixture copies one).
    "source_dir.py": "# RUN: cat %mlir_src_dir/test/Integration/data/numbers.txt | FileCheck %s\n# CHECK: 1 2 3\n",
    # Upstream collects .c files and compiles them with %host_cc (Integration/Dialect/MemRef/memref_abi.c).
    "host_cc.c": '// RUN: "%host_cc" %s -o %t.exe\n// RUN: %t.exe | FileCheck %s\n// CHECK: from C\n'
    '#include <stdio.h>\nint main(void) { puts("from C"); return 0; }\n',
    # Code run on this host with a CPU feature it lacks.
    "cpu_feature.mlir": f"// RUN: %lli --mattr=+{FOREIGN_FEATURE} %s\n",
    "x86vector/switched.py": "# RUN: %PYTHON -c pass\n",
    "python_version.py": "# REQUIRES: python-ge-310\n# RUN: %PYTHON -c pass\n",
    "nvptx.py": "# REQUIRES: host-supports-nvptx\n# RUN: %PYTHON -c pass\n",
    "amdgpu.py": "# REQUIRES: host-supports-amdgpu\n# RUN: %PYTHON -c pass\n",
    # The wheels' MLIR aborts lowering a load of i1 from a memref; upstream's 22.1.8 lowers it.
    "sub_byte_abort.mlir": "// RUN: mlir-opt %s --finalize-memref-to-llvm | FileCheck %s\n// CHECK: llvm.load\n"
    "func.func @f(%m: memref<4xi1>, %i: index) -> i1 {\n"
    "  %v = memref.load %m[%i] : memref<4xi1>\n  return %v : i1\n}\n",
    # ... and packs i4 elements where upstream's stores each one alone.
    "sub_byte_packing.mlir": "// RUN: mlir-opt %s --finalize-memref-to-llvm | FileCheck %s\n"
    "// CHECK: llvm.store %{{.*}}, %{{.*}} : i4, !llvm.ptr\n"
    "func.func @f(%m: memref<4xi4>, %v: i4, %i: index) {\n"
    "  memref.store %v, %m[%i] : memref<4xi4>\n  return\n}\n",
    # Upstream's, for a runtime no wheel ships.
    "missing_library.py": "# RUN: %PYTHON -c pass %mlir_levelzero_runtime\n",
    # A path into an llvm-project checkout: only -D mlir_src_root gives it.
    "source_root.py": '# RUN: %PYTHON -c "import sys; print(sys.argv[1])" %mlir_src_root | FileCheck %s\n'
    "# CHECK: /nowhere/llvm-project/mlir\n",
    # What is not a substitution: %% (a literal percent), %t_out (lit's %t, then text), a name
    # in a %if branch that is not taken; DEFINE'd names are substitutions.
    "not_substitutions.py": "# DEFINE: %{greeting} = hello\n"
    '# RUN: %PYTHON -c "import sys; print(sys.argv[1:])" 100%% %t_out'
    " %if no-such-feature %{%nosuch%} %{greeting} | FileCheck %s\n"
    "# CHECK: ['100%', '{{.*}}_out', 'hello']\n",
    "test_pass.mlir": "// RUN: mlir-opt %s -test-lower-to-llvm | FileCheck %s\n"
    "// CHECK: llvm.func @f\nfunc.func @f() { return }\n",
    # A test pass that memref_runtime.upstream.test_passes does not provide (Debian's has it).
    "unprovided_test_pass.mlir": "// RUN: mlir-opt %s -test-print-nesting | FileCheck %s\n"
    "// CHECK: visiting op: 'func.func' with 0 operands and 0 results\n"
    "func.func @f() { return }\n",
    # One provided, one not: what is missing is the one not provided.
    "mixed_test_passes.mlir": "// RUN: mlir-opt %s -test-cf-assert -test-print-nesting\nfunc.func @f() { return }\n",
    # Not a pass of any mlir-opt: a typo must fail, not hide as UNSUPPORTED.
    "no_such_test_pass.mlir": "// RUN: mlir-opt %s -test-no-such-pass\nfunc.func @f() { return }\n",
    # The suite's own mlir-opt, no test pass: lit -a shows the command it ran.
    "plain_mlir_opt.mlir": "// RUN: mlir-opt %s | FileCheck %s\n// CHECK: func.func @f()\nfunc.func @f() { return }\n",
    # FileCheck's options from FILECHECK_OPTS: -enable-var-scope (MLIR's default) forgets X
    # at the CHECK-LABEL, so the second use of it fails.
    "var_scope.py": "# RUN: %PYTHON -c \"print('1'); print('L'); print('1')\" | FileCheck %s\n"
    "# CHECK: [[X:[0-9]+]]\n# CHECK-LABEL: L\n# CHECK: [[X]]\n",
    "forbidden.py": "# RUN: %PYTHON -c \"print('fine'); print('forbidden')\" | FileCheck %s\n# CHECK: fine\n",
    # A lit.local.cfg in upstream's style reads the site-config attributes of an LLVM build.
    "arm/sve.py": "# RUN: %PYTHON -c pass\n",
    # Helpers next to the tests that import them (upstream's tools/ pattern).
    "uses_helper.py": "# RUN: %PYTHON %s | FileCheck %s\n# CHECK: helped\n"
    "import os, sys\nsys.path.append(os.path.dirname(os.path.abspath(__file__)))\n"
    "from tools.helper import help\nhelp()\n",
    "tools/helper.py": "# RUN: false\ndef help():\n    print('helped')\n",
    "tools/__init__.py": "",
}
LOCAL_CONFIGS = {
    "arm": "from lit.llvm import llvm_config  # noqa: F401 - upstream's files import it\n"
    "if not config.mlir_run_arm_sve_tests or config.arm_emulator_executable:\n"
    "    config.unsupported = True\n"
    "config.substitutions.append(('%native_lib', config.mlir_lib_dir + '/libx' + config.llvm_shlib_ext))\n",
    "tools": "config.suffixes = set()\n",
    "x86vector": "if not config.mlir_run_x86vector_tests:\n    config.unsupported = True\n",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = make_lit_suite(tmp_path_factory.mktemp("suite"), TESTS)
    for folder, text in LOCAL_CONFIGS.items():
        (root / "lit_tests" / folder / "lit.local.cfg").write_text(text)
    # A copy of (a file of) upstream's test/ folder next to the tests, as a downstream suite has it.
    (root / "test" / "Integration" / "data").mkdir(parents=True)
    (root / "test" / "Integration" / "data" / "numbers.txt").write_text("1 2 3\n")
    return root


def lit(suite: Path, *args: str, env: dict | None = None) -> str:
    """lit -a (every test's output, UNSUPPORTED reasons too) on `args`; stdout and stderr."""
    environment = {k: v for k, v in os.environ.items() if k not in ("FILECHECK_OPTS", "MLIR_OPT_CHECK_IR_ROUNDTRIP")}
    out = subprocess.run(
        [LIT, "-a", *args], cwd=suite, capture_output=True, text=True, timeout=300, env={**environment, **(env or {})}
    )
    return out.stdout + out.stderr


def result(out: str, test: str) -> str:
    """The result word lit printed for `lit_tests/<test>`."""
    for line in out.splitlines():
        if line.endswith(f":: lit_tests/{test}") or f":: lit_tests/{test} (" in line:
            return line.split(":", 1)[0]
    raise AssertionError(f"{test} not in:\n{out}")


def test_a_name_upstreams_lit_would_not_expand_either_runs_as_lit_expands_it_with_a_warning(suite):
    out = lit(suite, "lit_tests/half_expanded.py", "lit_tests/typo.py", "lit_tests/upstream_typo.py")
    for test in ("half_expanded.py", "typo.py", "upstream_typo.py"):
        assert result(out, test) == "PASS", out
    # In the test's output (lit -a, -v on a failure), and from lit itself.
    assert (
        "memref-runtime: warning: line 1: %tlir_runner_utils is no substitution of this suite or of upstream's;"
        " as upstream's lit, the RUN line runs with %t followed by the text 'lir_runner_utils'; did you mean"
        " %mlir_runner_utils?"
    ) in out
    assert "warning: memref-runtime: line 1: %tlir_runner_utils is no substitution" in out
    assert (
        "%mlir_inputs_dir is no substitution of this suite or of upstream's; as upstream's lit, the RUN line"
        " runs with %mlir_inputs followed by the text '_dir'" in out
    )
    assert (
        "%sharedlib is no substitution of this suite or of upstream's; as upstream's lit, the RUN line runs"
        " with %s followed by the text 'haredlib'" in out
    )


def test_an_upstream_library_the_toolchain_lacks_fails_naming_where_it_looked(suite):
    out = lit(suite, "lit_tests/missing_library.py")
    assert result(out, "missing_library.py") == "FAIL"
    message = next(line for line in out.splitlines() if "%mlir_levelzero_runtime" in line)
    assert "upstream's substitution, not defined here: libmlir_levelzero_runtime.so was looked for in" in message
    assert os.path.join("mlir", "lib") in message  # the wheel's library folder
    assert "the toolchain in use does not ship it" in message


def test_source_tree_paths_come_from_a_parameter_else_from_a_copy_of_upstreams_test_folder(suite, tmp_path):
    # No copy of upstream's test/ in this suite: nothing can tell %mlir_src_root.
    bare = make_lit_suite(tmp_path, {"source_root.py": TESTS["source_root.py"]})
    out = lit(bare, "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "FAIL"
    assert (
        "%mlir_src_root: upstream's substitution, not defined here: it names a path no installed"
        " toolchain knows: pass lit -D mlir_src_root=..." in out
    )
    out = lit(bare, "-D", "mlir_src_root=/nowhere/llvm-project/mlir", "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "PASS", out
    # The fixture's suite holds one (test/Integration/data): %mlir_src_root is the folder holding it.
    out = lit(suite, "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "FAIL"  # the CHECK line wants the -D path
    assert f'print(sys.argv[1])" {suite} ' in out, out
    out = lit(suite, "-D", "mlir_src_root=/nowhere/llvm-project/mlir", "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "PASS", out


def test_mlir_src_dir_is_the_folder_that_holds_a_copy_of_upstreams_test_folder(suite):
    out = lit(suite, "lit_tests/source_dir.py")
    assert result(out, "source_dir.py") == "PASS", out
    assert f"cat {suite / 'test' / 'Integration' / 'data' / 'numbers.txt'}" in out


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) on this machine")
def test_c_tests_are_collected_and_compiled_with_the_systems_compiler(suite):
    out = lit(suite, "lit_tests/host_cc.c")
    assert result(out, "host_cc.c") == "PASS", out
    assert f'"{shutil.which("cc")}" {suite / "lit_tests" / "host_cc.c"}' in out


def test_without_a_compiler_a_test_that_needs_one_is_unsupported_saying_so(suite, tmp_path):
    # A PATH with lit's interpreter and nothing else: no cc, gcc or clang.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python3").symlink_to(sys.executable)
    out = lit(suite, "lit_tests/host_cc.c", env={"PATH": str(tmp_path / "bin")})
    assert result(out, "host_cc.c") == "UNSUPPORTED", out
    assert "needs a C compiler (%host_cc): none was found (cc, gcc, clang on PATH); pass lit -D host_cc=PATH" in out


def test_code_run_with_a_cpu_feature_this_host_lacks_is_unsupported_naming_it(suite):
    out = lit(suite, "lit_tests/cpu_feature.mlir")
    assert result(out, "cpu_feature.mlir") == "UNSUPPORTED", out
    assert f"runs code on this host that needs the CPU feature {FOREIGN_FEATURE} (RUN line 1), which this CPU" in out


def test_hardware_switches_are_off_by_default_and_auto_follows_the_cpu(suite):
    switched = "x86vector/switched.py"
    assert result(lit(suite, f"lit_tests/{switched}"), switched) == "UNSUPPORTED"
    assert result(lit(suite, "-D", "mlir_run_x86vector_tests=1", f"lit_tests/{switched}"), switched) == "PASS"
    can = hardware.host().can_run("mlir_run_x86vector_tests")
    for param in ("hardware_tests=auto", "mlir_run_x86vector_tests=auto"):
        assert result(lit(suite, "-D", param, f"lit_tests/{switched}"), switched) == ("PASS" if can else "UNSUPPORTED")
    out = lit(suite, "-D", "hardware_tests=yes", f"lit_tests/{switched}")
    assert "-D hardware_tests: expected one of auto, 1, 0, got 'yes'" in out


def test_features_of_the_python_version_and_of_the_llvm_targets(suite):
    out = lit(suite, "lit_tests/python_version.py", "lit_tests/nvptx.py", "lit_tests/amdgpu.py")
    assert result(out, "python_version.py") == "PASS", out
    if NO_MLIR_OPT:
        return  # torch-mlir: its own LLVM's targets
    # The 22.1.8 wheels' LLVM has the NVPTX target and not the AMDGPU one (llc --version says so).
    assert result(out, "nvptx.py") == "PASS", out
    assert result(out, "amdgpu.py") == "UNSUPPORTED", out


@needs_mlir_opt
def test_a_known_defect_of_the_toolchain_is_named_in_the_failure_report(suite):
    out = lit(
        suite, "-D", "test_pass_mlir_opt=none", "lit_tests/sub_byte_abort.mlir", "lit_tests/sub_byte_packing.mlir"
    )
    if "integralElementType.getWidth() >= 8" not in out:
        pytest.skip("the suite's mlir-opt does not have the wheels' sub-byte lowering (Debian's, a fixed wheel)")
    for test in ("sub_byte_abort.mlir", "sub_byte_packing.mlir"):
        assert result(out, test) == "FAIL", out
    notes = [line for line in out.splitlines() if line.startswith("memref-runtime: a known failure of the toolchain")]
    assert len(notes) == 2, out
    assert "it aborted on the known assertion `integralElementType.getWidth() >= 8`" in notes[0] + notes[1]
    assert "most likely: the test stores into memrefs of sub-byte integers" in notes[0] + notes[1]
    assert all("Debian's 22.1.8 mlir-opt (package mlir-22-tools) runs it" in note for note in notes)


@needs_mlir_opt
@pytest.mark.debian_llvm
@pytest.mark.skipif(not DEBIAN_MLIR_OPT.exists(), reason="Debian's mlir-22-tools is not installed")
def test_what_the_note_says_holds_debians_mlir_opt_runs_those_tests(suite):
    for test in ("sub_byte_abort.mlir", "sub_byte_packing.mlir"):
        path = suite / "lit_tests" / test
        lowered = subprocess.run([DEBIAN_MLIR_OPT, path, "--finalize-memref-to-llvm"], capture_output=True, text=True)
        assert lowered.returncode == 0, lowered.stderr
        check = subprocess.run(
            [DEBIAN_MLIR_OPT.parent / "FileCheck", path], input=lowered.stdout, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stderr


def test_literal_percents_path_suffixes_and_untaken_branches_are_not_substitutions(suite):
    out = lit(suite, "lit_tests/not_substitutions.py")
    assert result(out, "not_substitutions.py") == "PASS", out


@needs_mlir_opt
@pytest.mark.debian_llvm
@pytest.mark.skipif(not DEBIAN_MLIR_OPT.exists(), reason="Debian's mlir-22-tools is not installed")
def test_a_test_pass_runs_through_a_same_version_mlir_opt_that_has_it(suite):
    out = lit(suite, "lit_tests/test_pass.mlir", "lit_tests/unprovided_test_pass.mlir")
    assert result(out, "test_pass.mlir") == "PASS", out
    assert result(out, "unprovided_test_pass.mlir") == "PASS", out
    assert f"{DEBIAN_MLIR_OPT} " in out  # the command lit ran
    assert "memref_runtime.upstream.test_passes" not in out  # the real passes run where there are some
    # A name no mlir-opt knows is a mistake, not a missing test pass: it fails.
    out = lit(suite, "lit_tests/no_such_test_pass.mlir")
    assert result(out, "no_such_test_pass.mlir") == "FAIL"
    assert "Unknown command line argument '-test-no-such-pass'" in out


@needs_mlir_opt
def test_without_an_mlir_opt_that_has_it_a_provided_test_pass_runs_through_the_wrapper(suite):
    out = lit(suite, "-D", "test_pass_mlir_opt=none", "lit_tests/test_pass.mlir")
    assert result(out, "test_pass.mlir") == "PASS", out
    # lit -a shows which mlir-opt ran: the wrapper, with the suite's own mlir-opt.
    command = next(line for line in out.splitlines() if line.startswith("# executed command:") and "test-lower" in line)
    assert " -m memref_runtime.upstream.test_passes --mlir-opt=" in command
    assert "/usr/lib/llvm-22" not in command


@needs_mlir_opt
def test_without_an_mlir_opt_that_has_it_a_test_pass_is_unsupported_with_the_reason(suite):
    out = lit(
        suite,
        "-D",
        "test_pass_mlir_opt=none",
        "lit_tests/unprovided_test_pass.mlir",
        "lit_tests/mixed_test_passes.mlir",
    )
    assert result(out, "unprovided_test_pass.mlir") == "UNSUPPORTED", out
    reasons = [line for line in out.splitlines() if line.startswith("needs the mlir-opt")]
    assert len(reasons) == 2, out
    for reason in reasons:
        # Only the pass the wrapper does not provide is named (-test-cf-assert is provided).
        assert reason.startswith("needs the mlir-opt test-only pass -test-print-nesting: the suite's mlir-opt ("), (
            reason
        )
        assert (
            "Get one from Debian's mlir-22-tools (/usr/lib/llvm-22/bin/mlir-opt) or an LLVM build tree's bin/" in reason
        )
        assert "lit -D test_pass_mlir_opt=PATH" in reason
    assert result(out, "mixed_test_passes.mlir") == "UNSUPPORTED", out
    # An mlir-opt of the same version without test passes (the wheel's own) is no help.
    out = lit(suite, "-D", f"test_pass_mlir_opt={WHEEL_MLIR_OPT}", "lit_tests/unprovided_test_pass.mlir")
    assert result(out, "unprovided_test_pass.mlir") == "UNSUPPORTED", out
    assert "built without MLIR's test passes" in out


@needs_mlir_opt
def test_mlir_opt_check_ir_roundtrip_adds_verify_roundtrip(suite):
    out = lit(suite, "lit_tests/plain_mlir_opt.mlir", env={"MLIR_OPT_CHECK_IR_ROUNDTRIP": "1"})
    assert result(out, "plain_mlir_opt.mlir") == "PASS", out
    assert f"{WHEEL_MLIR_OPT} --verify-roundtrip {suite / 'lit_tests' / 'plain_mlir_opt.mlir'}" in out
    out = lit(suite, "lit_tests/plain_mlir_opt.mlir")
    assert result(out, "plain_mlir_opt.mlir") == "PASS", out
    assert "--verify-roundtrip" not in out


@pytest.mark.skipif(not NO_MLIR_OPT, reason="the provider ships an mlir-opt")
def test_without_any_mlir_opt_a_test_pass_test_is_unsupported_for_that(suite):
    out = lit(suite, "lit_tests/test_pass.mlir")
    assert result(out, "test_pass.mlir") == "UNSUPPORTED", out
    assert "the RUN lines run mlir-opt, which the toolchain in use does not have" in out


def test_filecheck_opts_default_to_mlirs_and_the_environment_wins(suite):
    out = lit(suite, "lit_tests/var_scope.py", "lit_tests/forbidden.py")
    if "filecheck-llvm" not in lit(suite, "--show-used-features", "lit_tests") and "FileCheck" not in out:
        pytest.skip("no LLVM FileCheck")
    assert result(out, "var_scope.py") == "FAIL"  # -enable-var-scope, as MLIR's lit.cfg.py sets
    assert "undefined variable: X" in out
    assert result(out, "forbidden.py") == "PASS"
    out = lit(
        suite,
        "lit_tests/var_scope.py",
        "lit_tests/forbidden.py",
        env={"FILECHECK_OPTS": "--implicit-check-not=forbidden"},
    )
    assert result(out, "var_scope.py") == "PASS"  # the user's options replace MLIR's
    assert result(out, "forbidden.py") == "FAIL"
    assert "error: IMPLICIT-CHECK-NOT: excluded string found in input" in out


def test_upstream_style_local_configs_and_helper_folders(suite):
    out = lit(suite, "lit_tests/arm", "lit_tests/uses_helper.py")
    # mlir_run_arm_sve_tests is False, as in a default LLVM build.
    assert result(out, "arm/sve.py") == "UNSUPPORTED", out
    assert result(out, "uses_helper.py") == "PASS", out
    listed = lit(suite, "--show-tests", "lit_tests")
    assert "lit_tests/tools/" not in listed and "lit_tests/uses_helper.py" in listed


def test_the_suites_helper_folder_holds_no_tests():
    out = subprocess.run(
        [LIT, "--show-tests", "lit_tests/upstream_style"], cwd=REPO, capture_output=True, text=True, timeout=300
    ).stdout
    assert "upstream_style/runtime_libraries.py" in out
    assert "upstream_style/tools/" not in out
