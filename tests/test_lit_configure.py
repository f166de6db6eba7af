"""memref_runtime.lit.configure() for any suite: its options, upstream folders copied whole (site
attributes, a lit.local.cfg that raises), where lit writes, and the -D table and its docs."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest
from support.paths import LIT, REPO

from memref_runtime.lit import discovery
from memref_runtime.lit.parameters import PARAMETERS

pytestmark = pytest.mark.harness

needs_lit = pytest.mark.skipif(LIT is None, reason="lit is not installed")

# A test that prints what a substitution expands to, checked against what the suite should give.
ECHO_TEST = "# RUN: echo {what} | FileCheck %s\n# CHECK: {check}\n"


def write(root: Path, files: dict) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def run_lit(suite: Path, *args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LIT, "-v", "-D", "python_server=0", *args, str(suite)], capture_output=True, text=True, timeout=300, env=env
    )


def config_calling(**options) -> str:
    args = "".join(f", {k}={v!r}" for k, v in options.items())
    return f"import memref_runtime.lit\nmemref_runtime.lit.configure(config, lit_config{args})\n"


@needs_lit
def test_the_options_shape_the_suite(tmp_path):
    suite = write(
        tmp_path / "proj",
        {
            "lit.cfg.py": config_calling(
                name="proj",
                test_dirs=["tests"],
                suffixes=[".py", ".txt"],
                mlir_inputs="shared",
                excludes=["skip_me.py"],
                substitutions=[("%greeting", "hello-from-proj")],
                features=["proj-feature"],
                pythonpath=["pylib"],
            ),
            "shared/m.mlir": "module {}\n",
            "pylib/proj_helpers.py": "ANSWER = 42\n",
            "tests/inputs_and_substitution.txt": ECHO_TEST.format(
                what="%greeting %mlir_inputs", check=f"hello-from-proj {tmp_path}/proj/shared"
            ),
            "tests/feature.py": "# RUN: %PYTHON %s | FileCheck %s\n# REQUIRES: proj-feature\n"
            "import proj_helpers, os\nprint(proj_helpers.ANSWER, os.environ['MLIR_INPUTS'])\n"
            f"# CHECK: 42 {tmp_path}/proj/shared\n",
            "tests/skip_me.py": "# RUN: false\n",
            "elsewhere/not_a_test.py": "# RUN: false\n",  # outside test_dirs
        },
    )
    out = run_lit(suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS: proj :: tests/inputs_and_substitution.txt" in out.stdout
    assert "PASS: proj :: tests/feature.py" in out.stdout
    assert "Total Discovered Tests: 2" in out.stdout  # not lit.cfg.py, skip_me.py, shared/, elsewhere/
    assert (suite / "Output").is_dir()  # the exec root: Output/ of the suite's folder


@needs_lit
def test_a_suite_in_its_own_folder_needs_no_options(tmp_path):
    suite = write(
        tmp_path / "plain",
        {
            "lit.cfg.py": config_calling(),
            "mlir_inputs/m.mlir": "module {}\n",
            "sub/echo.txt": "x\n",
            "sub/t.py": ECHO_TEST.format(what="%mlir_inputs", check=f"{tmp_path}/plain/mlir_inputs"),
        },
    )
    out = run_lit(suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS: plain :: sub/t.py" in out.stdout and "Total Discovered Tests: 1" in out.stdout


@needs_lit
def test_bad_options_stop_lit_naming_them(tmp_path):
    suite = write(tmp_path / "bad", {"lit.cfg.py": config_calling(test_dirs=["nope"]), "t.py": "# RUN: true\n"})
    out = run_lit(suite)
    assert out.returncode != 0 and "configure(test_dirs=...): expected folders under" in out.stderr
    (suite / "lit.cfg.py").write_text(config_calling(mlir_inputs="missing"))
    out = run_lit(suite)
    assert out.returncode != 0 and "configure(mlir_inputs=...): expected a folder" in out.stderr


# --- upstream folders copied whole ----------------------------------------------------------

# What upstream's mlir/test/mlir-runner/lit.local.cfg does with the site config, written anew:
# a feature from config.root.native_target, and `unsupported` without the JIT.
RUNNER_LOCAL_CFG = """\
if "host-supports-jit" not in config.available_features:
    config.unsupported = True
config.available_features.add(config.root.native_target.lower() + "-native-target")
"""
# Every attribute upstream's mlir/test/lit.site.cfg.py.in defines (LLVM 22).
UPSTREAM_SITE_ATTRIBUTES = (
    "target_triple llvm_src_root llvm_tools_dir lit_tools_dir spirv_tools_tests llvm_shlib_ext llvm_shlib_dir "
    "python_executable enable_assertions expensive_checks native_target host_os host_cc host_cxx "
    "host_c_compiler_launcher host_cxx_compiler_launcher enable_libcxx host_cmake host_cmake_generator "
    "cmake_build_type llvm_use_linker llvm_use_sanitizer host_arch mlir_src_root mlir_obj_root mlir_tools_dir "
    "mlir_cmake_dir mlir_lib_dir build_examples run_nvptx_tests enable_cuda_runner run_rocm_tests "
    "enable_rocm_runner gpu_compilation_format rocm_test_chipset run_xevm_tests enable_sycl_runner "
    "enable_levelzero_runner enable_spirv_cpu_runner enable_vulkan_runner enable_bindings_python "
    "enable_python_stable_abi intel_sde_executable mlir_run_x86_amx_tests mlir_run_arm_sve_tests "
    "mlir_run_arm_sme_tests mlir_run_x86_tests mlir_run_riscv_vector_tests mlir_run_cuda_tensor_core_tests "
    "mlir_run_cuda_sm80_tests mlir_run_cuda_sm80_lt_tests mlir_run_cuda_sm90_tests mlir_include_integration_tests "
    "llvm_shared_libs_build arm_emulator_executable arm_emulator_options arm_emulator_mlir_runner_executable "
    "arm_emulator_lli_executable arm_emulator_utils_lib_dir arm_sme_abi_routines_shlib "
    "riscv_vector_emulator_executable riscv_vector_emulator_options riscv_emulator_lli_executable "
    "riscv_emulator_utils_lib_dir host_triple"
).split()


# What no installed toolchain knows: paths into an llvm-project checkout (-D mlir_src_root=...),
# and MLIR's CMake folder where the LLVM in use has none (the wheels).
UNKNOWN_WITHOUT_A_SOURCE_TREE = ["llvm_src_root", "mlir_src_root", "mlir_cmake_dir"]


@needs_lit
def test_an_upstream_folder_keeps_loading(tmp_path):
    missing = (
        "[n for n in {names!r} if not hasattr(config.root, n) or getattr(config.root, n) is None"
        f" and n not in {UNKNOWN_WITHOUT_A_SOURCE_TREE!r}]"
    )
    suite = write(
        tmp_path / "up",
        {
            "lit.cfg.py": config_calling(),
            "mlir-runner/lit.local.cfg": RUNNER_LOCAL_CFG,
            "mlir-runner/native.mlir": "// RUN: echo ok | FileCheck %s\n// REQUIRES: x86-native-target || "
            "aarch64-native-target\n// CHECK: ok\n",
            "site/lit.local.cfg": f"config.substitutions.append(('%missing', repr({missing.format(names=UPSTREAM_SITE_ATTRIBUTES)})))\n"
            "config.substitutions.append(('%native', config.root.native_target))\n",
            "site/attributes.py": "# RUN: echo '%missing %native' | FileCheck %s\n# CHECK: {{^}}[] {{X86|AArch64}}\n",
        },
    )
    out = run_lit(suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS: up :: mlir-runner/native.mlir" in out.stdout and "PASS: up :: site/attributes.py" in out.stdout


@needs_lit
def test_a_local_config_that_raises_fails_its_folder_only(tmp_path):
    suite = write(
        tmp_path / "raising",
        {
            "lit.cfg.py": config_calling(),
            "broken/lit.local.cfg": "config.available_features.add(config.root.no_such_attribute)\n",
            "broken/a.py": "# RUN: true\n",
            "broken/deeper/b.py": "# RUN: true\n",
            "fine/c.py": "# RUN: true\n",
        },
    )
    out = run_lit(suite)
    assert out.returncode == 1  # failures, not lit's fatal error (2)
    assert "PASS: raising :: fine/c.py" in out.stdout
    for name in ("broken/a.py", "broken/deeper/b.py"):
        assert f"FAIL: raising :: {name}" in out.stdout
    assert "broken/lit.local.cfg raised AttributeError, so the tests of its folder fail" in out.stdout
    assert "Traceback (most recent call last):" in out.stdout and "no_such_attribute" in out.stdout
    assert "broken/lit.local.cfg raised AttributeError" in out.stderr  # lit's warning, once


# --- where lit writes -------------------------------------------------------------------------


def test_the_exec_root_order(tmp_path, monkeypatch):
    def fatal(message):
        raise AssertionError(message)

    assert discovery.exec_root(str(tmp_path / "given"), "/site", str(tmp_path), fatal) == str(tmp_path / "given")
    assert discovery.exec_root(None, "/site", str(tmp_path), fatal) == "/site"
    assert discovery.exec_root(None, None, str(tmp_path), fatal) == str(tmp_path / "Output")
    monkeypatch.setattr(discovery.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(discovery.os, "access", lambda path, mode: False)  # a read-only, installed suite
    root = discovery.exec_root(None, None, str(tmp_path / "suite"), fatal)
    private = tmp_path / "tmp" / f"memref-runtime-{os.getuid()}"
    assert Path(root).parent == private and Path(root).name.startswith("suite-")
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


@pytest.mark.parametrize("trap", ["symlink", "mode", "owner"])
def test_a_private_exec_root_someone_else_can_touch_stops_lit(tmp_path, monkeypatch, trap):
    monkeypatch.setattr(discovery.tempfile, "gettempdir", lambda: str(tmp_path))
    folder = tmp_path / f"memref-runtime-{os.getuid()}"
    if trap == "symlink":
        (tmp_path / "planted").mkdir()
        folder.symlink_to(tmp_path / "planted")
    else:
        folder.mkdir(mode=0o700)
        if trap == "mode":
            folder.chmod(0o777)
        elif os.getuid() != 0:
            pytest.skip("making a folder another user's needs root")
        else:
            os.chown(folder, 12345, 12345)
    with pytest.raises(
        AssertionError,
        match={"symlink": "is a symlink", "mode": "others may write into it", "owner": "belongs to uid 12345"}[trap],
    ):
        discovery.private_folder(lambda message: (_ for _ in ()).throw(AssertionError(message)))


@needs_lit
def test_no_shared_folder_in_tmp_by_default(tmp_path):
    suite = write(tmp_path / "s", {"lit.cfg.py": config_calling(), "t.py": "# RUN: true\n"})
    before = set(os.listdir(tempfile_dir := os.environ.get("TMPDIR", "/tmp")))
    out = run_lit(suite)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not [n for n in set(os.listdir(tempfile_dir)) - before if n.startswith("memref-runtime-lit")]
    assert (suite / "Output").is_dir()


# --- the -D table ------------------------------------------------------------------------------


def test_every_parameter_is_documented():
    text = (REPO / "docs" / "lit-config.md").read_text()
    documented = set(re.findall(r"^\| `(\w+)=", text, re.M)) | set(re.findall(r", `(\w+)=", text))
    assert set(PARAMETERS) - documented == set()


@needs_lit
def test_an_unsupported_test_names_each_missing_feature_once(tmp_path):
    suite = write(
        tmp_path / "u", {"lit.cfg.py": config_calling(), "t.py": "# RUN: true\n# REQUIRES: no-such-feature\n"}
    )
    out = subprocess.run([LIT, "-a", str(suite)], capture_output=True, text=True, timeout=300)
    assert "Test requires the following unavailable features: no-such-feature\n" in out.stdout, out.stdout


# Each test writes `<name> start|end <time>` around a sleep: which tests ran at once.
OVERLAP_TEST = """# RUN: %PYTHON %s
# REQUIRES: {requires}
import os, time
log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "times.log")
with open(log, "a") as f:
    f.write(f"{{os.path.basename(__file__)}} start {{time.time()}}\\n")
time.sleep(0.4)
with open(log, "a") as f:
    f.write(f"{{os.path.basename(__file__)}} end {{time.time()}}\\n")
"""


def spans(log: Path) -> dict:
    times: dict = {}
    for line in log.read_text().splitlines():
        name, edge, at = line.split()
        times.setdefault(name, {})[edge] = float(at)
    return {name: (t["start"], t["end"]) for name, t in times.items()}


def overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@needs_lit
def test_performance_tests_run_one_at_a_time_and_others_beside_them(tmp_path):
    suite = write(
        tmp_path / "timed",
        {
            "lit.cfg.py": config_calling(),
            **{f"perf_{i}.py": OVERLAP_TEST.format(requires="perf-tests") for i in range(3)},
            **{f"plain_{i}.py": OVERLAP_TEST.format(requires="host-supports-jit") for i in range(3)},
        },
    )
    out = run_lit(suite, "-j", "3")
    assert out.returncode == 0, out.stdout + out.stderr
    got = spans(suite / "times.log")
    perf = [got[f"perf_{i}.py"] for i in range(3)]
    assert not any(overlap(a, b) for i, a in enumerate(perf) for b in perf[i + 1 :]), got
    # The others are not held back: at least two of the six tests ran at once.
    everything = list(got.values())
    assert any(overlap(a, b) for i, a in enumerate(everything) for b in everything[i + 1 :]), got


# A test that passes when its process sees OPENBLAS_NUM_THREADS={expected}.
BLAS_THREADS_TEST = """# RUN: %PYTHON %s
import os, sys
seen = os.environ.get("OPENBLAS_NUM_THREADS")
sys.exit(0 if seen == "{expected}" else f"OPENBLAS_NUM_THREADS is {{seen!r}}, expected {expected!r}")
"""


@needs_lit
@pytest.mark.parametrize("server", ["0", "1"])
@pytest.mark.parametrize("outer", [None, "3"])
def test_a_tests_openblas_gets_one_thread_unless_lits_environment_says(tmp_path, server, outer):
    """lit runs a test per core: NumPy's OpenBLAS gets one thread in each test process, fresh or
    forked from the pre-started interpreter, unless lit's own environment says how many."""
    expected = outer or "1"
    suite = write(
        tmp_path / "blas", {"lit.cfg.py": config_calling(), "t.py": BLAS_THREADS_TEST.format(expected=expected)}
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if outer:
        env["OPENBLAS_NUM_THREADS"] = outer
    out = run_lit(suite, "-D", f"python_server={server}", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS: blas :: t.py" in out.stdout
