"""Upstream's lit conventions in a throw-away copy of the suite: substitutions that are missing
or mistyped, test-only passes with and without a same-version mlir-opt that has them (and
through memref_runtime.upstream.test_passes, which provides some),
FILECHECK_OPTS, upstream-style lit.local.cfg files and helper folders."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support.lit_suites import make_lit_suite
from support.paths import LIT, REPO

DEBIAN_MLIR_OPT = Path("/usr/lib/llvm-22/bin/mlir-opt")

pytestmark = pytest.mark.skipif(LIT is None, reason="lit is not installed")
# torch-mlir ships no mlir-opt: the suite copy (which follows MEMREF_RUNTIME_BINDINGS) has none.
NO_MLIR_OPT = os.environ.get("MEMREF_RUNTIME_BINDINGS", "mlir") != "mlir"
needs_mlir_opt = pytest.mark.skipif(NO_MLIR_OPT, reason="the provider ships no mlir-opt (torch-mlir)")

TESTS = {
    # %sharedlib is no substitution: lit would expand %s and leave "haredlib".
    "half_expanded.py": "# RUN: %PYTHON -c pass %sharedlib\n",
    # A typo: %mlir_inputs would eat the front of it.
    "typo.py": "# RUN: %PYTHON -c pass %mlir_inputs_dir\n",
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
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    root = make_lit_suite(tmp_path_factory.mktemp("suite"), TESTS)
    for folder, text in LOCAL_CONFIGS.items():
        (root / "lit_tests" / folder / "lit.local.cfg").write_text(text)
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


def test_a_name_lit_would_half_expand_fails_and_says_so(suite):
    out = lit(suite, "lit_tests/half_expanded.py", "lit_tests/typo.py")
    assert result(out, "half_expanded.py") == "FAIL"
    assert "line 1: %sharedlib: unknown substitution (lit would expand its front %s and leave 'haredlib')" in out
    assert result(out, "typo.py") == "FAIL"
    assert "%mlir_inputs_dir: unknown substitution (lit would expand its front %mlir_inputs and leave '_dir')" in out
    assert "Exit Code" not in out  # nothing ran


def test_an_upstream_library_the_toolchain_lacks_fails_naming_where_it_looked(suite):
    out = lit(suite, "lit_tests/missing_library.py")
    assert result(out, "missing_library.py") == "FAIL"
    message = next(line for line in out.splitlines() if "%mlir_levelzero_runtime" in line)
    assert "upstream's substitution, not defined here: libmlir_levelzero_runtime.so was looked for in" in message
    assert os.path.join("mlir", "lib") in message  # the wheel's library folder
    assert "the toolchain in use does not ship it" in message


def test_source_tree_paths_come_from_a_parameter(suite):
    out = lit(suite, "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "FAIL"
    assert (
        "%mlir_src_root: upstream's substitution, not defined here: it names a path no installed"
        " toolchain knows: pass lit -D mlir_src_root=..." in out
    )
    out = lit(suite, "-D", "mlir_src_root=/nowhere/llvm-project/mlir", "lit_tests/source_root.py")
    assert result(out, "source_root.py") == "PASS", out


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
    wheel_opt = next(
        line.split()[0]
        for line in lit(suite, "-a", "lit_tests/no_such_test_pass.mlir").splitlines()
        if line.endswith("-test-no-such-pass") and "executed command" not in line
    )
    out = lit(suite, "-D", f"test_pass_mlir_opt={wheel_opt}", "lit_tests/unprovided_test_pass.mlir")
    assert result(out, "unprovided_test_pass.mlir") == "UNSUPPORTED", out
    assert "built without MLIR's test passes" in out


@needs_mlir_opt
def test_mlir_opt_check_ir_roundtrip_adds_verify_roundtrip(suite):
    out = lit(suite, "lit_tests/no_such_test_pass.mlir", env={"MLIR_OPT_CHECK_IR_ROUNDTRIP": "1"})
    assert "mlir-opt --verify-roundtrip " in out


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
