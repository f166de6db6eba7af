"""The pieces of upstream's lit config that need no lit run: where %mlir_src_dir points, the
host compilers, the CPU features RUN lines ask for and the hardware switches, python-ge-3NN,
and the notes on a toolchain's known defects."""

from __future__ import annotations

from pathlib import Path

import pytest

from memref_runtime.upstream import capabilities, hardware, source_tree, toolchain_defects

X86_CPUINFO = "processor\t: 0\nflags\t\t: fpu sse4_1 sse4_2 avx avx2 fma avx512f avx512bw avx512_bf16\n"
AMX_CPUINFO = X86_CPUINFO.replace("avx512_bf16", "avx512_bf16 avx512_vp2intersect amx_tile amx_int8 amx_bf16")
ARM_CPUINFO = "processor\t: 0\nFeatures\t: fp asimd sve sve2 i8mm bf16\n"


# --- %mlir_src_dir ------------------------------------------------------------------------------


def data_folder(root: Path) -> Path:
    (root / "Integration" / "data").mkdir(parents=True)
    return root


@pytest.mark.parametrize("layout", ["test", "mlir/test"])
def test_a_copy_of_upstreams_test_folder_below_the_suite_is_what_mlir_src_dir_holds(tmp_path, layout):
    data_folder(tmp_path / layout)
    found = source_tree.source_root(tmp_path)
    assert found.root == str((tmp_path / layout).parent) and found.test_copy is None
    assert Path(found.root, "test", "Integration", "data").is_dir()


def test_a_suite_inside_a_copy_named_test_takes_its_parent(tmp_path):
    suite = data_folder(tmp_path / "mlir" / "test") / "Integration"
    assert source_tree.source_root(suite).root == str(tmp_path / "mlir")


def test_a_suite_that_is_the_copy_under_another_name_maps_test_onto_itself(tmp_path):
    suite = data_folder(tmp_path / "upstream-tests")
    found = source_tree.source_root(suite)
    assert (found.root, found.test_copy) == (str(suite), str(suite))


def test_without_a_copy_mlir_src_dir_is_the_suites_own_folder(tmp_path):
    found = source_tree.source_root(tmp_path)
    assert (found.root, found.test_copy) == (str(tmp_path), None)
    assert "own folder" in found.how


def test_host_compilers_come_from_the_parameter_else_the_system(monkeypatch):
    monkeypatch.setattr(source_tree.shutil, "which", lambda name: f"/usr/bin/{name}" if name == "gcc" else None)
    assert source_tree.host_compilers({"host_cxx": "/opt/c++"}) == {"host_cc": "/usr/bin/gcc", "host_cxx": "/opt/c++"}


# --- CPU features and the hardware switches -----------------------------------------------------


def test_cpuinfo_flags_become_llvm_feature_names():
    cpu = hardware.host(AMX_CPUINFO, "x86_64")
    assert {"avx512f", "avx512bw", "avx512bf16", "avx512vp2intersect", "amx-tile", "amx-int8"} <= cpu.features
    assert "sve" not in cpu.features
    arm = hardware.host(ARM_CPUINFO, "aarch64")
    assert arm.features == {"neon", "sve", "sve2", "i8mm", "bf16"}
    assert hardware.host("nothing useful", "x86_64").features is None


def commands(*lines: str) -> list:
    return list(enumerate(lines, start=1))


def test_a_run_line_that_runs_code_needs_its_mattr_features():
    needed = hardware.required_features(
        commands(
            "mlir-opt %s | mlir-translate --mlir-to-llvmir | %lli --entry-function=entry "
            '--mattr="avx512bw,avx512vp2intersect" --dlopen=%mlir_c_runner_utils | FileCheck %s'
        )
    )
    assert needed == {"avx512bw": 1, "avx512vp2intersect": 1}


def test_what_does_not_run_here_or_turns_a_feature_off_or_is_unknown_needs_nothing():
    assert (
        hardware.required_features(
            commands(
                "mlir-opt %s | llc -mattr=+avx512f",  # compiles only
                "%mcr_aarch64_cmd --march=aarch64 --mattr=+sve -e main",  # another target
                "mlir-runner %s -mattr=+foo_bar,-avx512f -e entry",  # unknown, turned off
            )
        )
        == {}
    )


def test_options_that_emit_a_features_instructions_need_it_where_the_code_runs():
    line = 'mlir-opt %s -test-math-polynomial-approximation="enable-avx2" | mlir-runner -e main'
    assert hardware.required_features(commands(line)) == {"avx2": 1}
    assert hardware.required_features(commands(line.split("|")[0])) == {}


def test_missing_features_name_what_this_cpu_lacks():
    cpu = hardware.host(X86_CPUINFO, "x86_64")
    lines = commands("%lli --mattr=avx512bw", '%lli --mattr="+amx-tile,+amx-int8"', "%lli --mattr=+sve")
    assert hardware.missing_features(lines, cpu) == [("amx-tile", 2), ("amx-int8", 2), ("sve", 3)]
    unknown = hardware.Host("x86_64", None)  # no /proc/cpuinfo: only another architecture's features
    assert hardware.missing_features(lines, unknown) == [("sve", 3)]


def test_auto_turns_on_the_suites_this_cpu_can_run():
    x86, amx, arm = (
        hardware.host(X86_CPUINFO, "x86_64"),
        hardware.host(AMX_CPUINFO, "x86_64"),
        hardware.host(ARM_CPUINFO, "aarch64"),
    )
    auto = {"hardware_tests": "auto"}
    assert hardware.switches(auto, x86) == {
        "mlir_run_x86vector_tests": True,
        "mlir_run_amx_tests": False,
        "mlir_run_arm_sve_tests": False,
        "mlir_run_arm_sme_tests": False,
    }
    assert hardware.switches(auto, amx)["mlir_run_amx_tests"] is True
    assert hardware.switches(auto, arm)["mlir_run_arm_sve_tests"] is True
    assert hardware.switches(auto, arm)["mlir_run_arm_sme_tests"] is False
    # One switch alone; 1 regardless of the CPU; a switch's own value wins over hardware_tests.
    assert hardware.switches({"mlir_run_amx_tests": "1"}, x86) == {"mlir_run_amx_tests": True}
    assert (
        hardware.switches({"hardware_tests": "auto", "mlir_run_x86vector_tests": "0"}, x86)["mlir_run_x86vector_tests"]
        is False
    )
    assert hardware.switches({}, amx) == {}  # upstream's default: off, left to the site config


def test_a_switch_value_that_means_nothing_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"-D mlir_run_amx_tests: expected one of auto, 1, 0, got 'yes'"):
        hardware.switches({"mlir_run_amx_tests": "yes"}, hardware.Host("x86_64", frozenset()))


# --- features from the Python version -----------------------------------------------------------


def test_python_version_features_are_every_version_up_to_the_tests_one():
    assert capabilities.python_features((3, 11)) == {"python-ge-38", "python-ge-39", "python-ge-310", "python-ge-311"}
    assert "python-ge-312" not in capabilities.python_features((3, 11))


# --- known defects of a toolchain -----------------------------------------------------------


def failure(**overrides) -> toolchain_defects.Failure:
    fields = dict(
        output="", source="", mlir_opt="/w/mlir-opt", suites_own=True, packs_sub_byte=True, uses_test_passes=False
    )
    return toolchain_defects.Failure(**{**fields, **overrides})


def test_the_sub_byte_abort_is_named_with_what_runs_the_test_instead():
    output = "mlir-opt: .../MemRefToLLVM.cpp:1007: ...: Assertion `integralElementType.getWidth() >= 8' failed."
    note = toolchain_defects.explain(failure(output=output))
    assert note.startswith(toolchain_defects.MARKER)
    assert "integralElementType.getWidth() >= 8" in note and "Debian's 22.1.8 mlir-opt" in note
    assert "-DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir" in note and "test_pass_mlir_opt" not in note
    with_passes = toolchain_defects.explain(failure(output=output, uses_test_passes=True))
    assert "lit -D test_pass_mlir_opt=/usr/lib/llvm-22/bin/mlir-opt" in with_passes


def test_sub_byte_packing_is_named_only_where_the_test_stores_sub_byte_memrefs_with_a_packing_mlir_opt():
    source = "%A = memref.alloc(%c6) : memref<?xi4>\nmemref.store %v, %A[%i] : memref<?xi4>\n"
    assert "most likely" in toolchain_defects.explain(failure(source=source))
    assert toolchain_defects.explain(failure(source=source, packs_sub_byte=False)) is None
    assert toolchain_defects.explain(failure(source=source, suites_own=False)) is None
    assert toolchain_defects.explain(failure(source="memref<4xi8>, vector<8xi4>")) is None
    assert toolchain_defects.explain(failure(source="memref<2x?xi1, strided<[?, 1]>>")) is not None
