"""Upstream's hardware-specific test suites and the CPU features a RUN line asks for.

An LLVM build runs the X86Vector, AMX and Arm SVE/SME folders of mlir/test/Integration only when
CMake switches them on (`MLIR_RUN_X86VECTOR_TESTS`, ...); their lit.local.cfg files read the
switch from the site config. Here `-D hardware_tests=auto` (or one switch, `-D
mlir_run_x86vector_tests=auto`) turns on those this CPU can run, `1` turns one on regardless and
`0`, the default as upstream's, leaves it off. Apart from the switches, a RUN line that runs code
on this host (`lli`, `mlir-runner`) with `-mattr=+avx512vp2intersect` or an option that emits such
instructions (`enable-avx2`) needs those CPU features: where the CPU lacks one the test is
UNSUPPORTED naming it, rather than killed by SIGILL. Only the features of the table are known;
another name (`-mattr=+foo_bar`) is LLVM's business.

The CPU's features are read from /proc/cpuinfo (Linux); elsewhere they are unknown: `auto`
switches nothing on and no test is judged by its features.
"""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass

# LLVM's feature name -> (the architecture family it belongs to, its name in /proc/cpuinfo).
CPU_FEATURES = {
    **{
        name: ("x86_64", flag)
        for name, flag in {
            "sse4.1": "sse4_1",
            "sse4.2": "sse4_2",
            "avx": "avx",
            "avx2": "avx2",
            "fma": "fma",
            "f16c": "f16c",
            "avx512f": "avx512f",
            "avx512bw": "avx512bw",
            "avx512dq": "avx512dq",
            "avx512vl": "avx512vl",
            "avx512cd": "avx512cd",
            "avx512ifma": "avx512ifma",
            "avx512vbmi": "avx512vbmi",
            "avx512vbmi2": "avx512_vbmi2",
            "avx512vnni": "avx512_vnni",
            "avx512bitalg": "avx512_bitalg",
            "avx512vpopcntdq": "avx512_vpopcntdq",
            "avx512bf16": "avx512_bf16",
            "avx512fp16": "avx512_fp16",
            "avx512vp2intersect": "avx512_vp2intersect",
            "avxvnni": "avx_vnni",
            "amx-tile": "amx_tile",
            "amx-int8": "amx_int8",
            "amx-bf16": "amx_bf16",
            "amx-fp16": "amx_fp16",
        }.items()
    },
    **{
        name: ("aarch64", flag)
        for name, flag in {
            "neon": "asimd",
            "fp16": "fphp",
            "dotprod": "asimddp",
            "i8mm": "i8mm",
            "bf16": "bf16",
            "sve": "sve",
            "sve2": "sve2",
            "sme": "sme",
            "sme2": "sme2",
            "sme-f64f64": "smef64f64",
            "sme-i16i64": "smei16i64",
        }.items()
    },
}
ARCH_FAMILY = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}

# Site attribute (and -D parameter) -> (architecture family, the LLVM features `auto` needs).
HARDWARE_SUITES = {
    "mlir_run_x86vector_tests": ("x86_64", ("avx512f",)),
    "mlir_run_amx_tests": ("x86_64", ("amx-tile", "amx-int8", "amx-bf16")),
    "mlir_run_arm_sve_tests": ("aarch64", ("sve",)),
    "mlir_run_arm_sme_tests": ("aarch64", ("sme",)),
}
SWITCH_VALUES = ("auto", "1", "0")

# Tools that run the code they are given on this host (bare, or as upstream's substitutions).
EXECUTING_TOOL = re.compile(
    r"(?<![\w/.-])(?:lli|mlir-runner|mlir-cpu-runner|%lli|%mcr_aarch64_cmd|%mlir_runner)(?![\w-])"
)
MATTR = re.compile(r"(?<![\w-])--?mattr[= ]\s*(\"[^\"]*\"|'[^']*'|\S+)")
# Code generated for another target (an emulator runs it, or nothing does): not this CPU's business.
OTHER_TARGET = re.compile(r"(?<![\w-])--?(?:march|mtriple)[= ]")
# Pass options that emit instructions of a CPU feature into the code a RUN line then runs.
IMPLIED_FEATURES = {"enable-avx2": ("avx2",)}


@dataclass(frozen=True)
class Host:
    """This CPU: its architecture family and its features by LLVM's names (None: unknown)."""

    family: str
    features: frozenset | None

    def lacks(self, feature: str) -> bool:
        family, _ = CPU_FEATURES[feature]
        if family != self.family:
            return True
        return self.features is not None and feature not in self.features

    def can_run(self, switch: str) -> bool:
        family, needed = HARDWARE_SUITES[switch]
        return self.features is not None and family == self.family and all(f in self.features for f in needed)


def cpuinfo_flags(text: str) -> set:
    """The words of the first `flags` (x86) or `Features` (AArch64) line of /proc/cpuinfo."""
    match = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.M)
    return set(match.group(1).split()) if match else set()


def host(cpuinfo: str | None = None, machine: str | None = None) -> Host:
    """This machine's CPU (or the given /proc/cpuinfo text and machine name, for tests)."""
    family = ARCH_FAMILY.get((machine or platform.machine()).lower(), (machine or platform.machine()).lower())
    if cpuinfo is None:
        try:
            with open("/proc/cpuinfo") as f:
                cpuinfo = f.read()
        except OSError:
            return Host(family, None)
    flags = cpuinfo_flags(cpuinfo)
    if not flags:
        return Host(family, None)
    names = (name for name, (arch, flag) in CPU_FEATURES.items() if arch == family and flag in flags)
    return Host(family, frozenset(names))


def switches(params, cpu: Host) -> dict:
    """Site attribute -> on/off for each hardware suite that -D asks about (-D hardware_tests=auto
    for all, a switch's own -D for one); a suite not asked about is left out (off by default).
    A value other than auto, 1 or 0 raises ValueError naming the parameter."""
    for name in ("hardware_tests", *HARDWARE_SUITES):
        value = params.get(name)
        if value is not None and value not in SWITCH_VALUES:
            raise ValueError(f"-D {name}: expected one of {', '.join(SWITCH_VALUES)}, got {value!r}")
    everywhere = params.get("hardware_tests")
    chosen = {}
    for switch in HARDWARE_SUITES:
        value = params.get(switch) or everywhere
        if value is not None:
            chosen[switch] = cpu.can_run(switch) if value == "auto" else value == "1"
    return chosen


def required_features(commands) -> dict:
    """LLVM feature -> the first RUN line (number) that runs code needing it on this host."""
    needed: dict = {}
    for number, command in commands:
        segments = re.split(r"\|\|?|&&|;", command)
        running = [s for s in segments if EXECUTING_TOOL.search(s) and not OTHER_TARGET.search(s)]
        if not running:
            continue
        names = [n for s in running for value in MATTR.findall(s) for n in value.strip("\"'").split(",")]
        names += [f for option, features in IMPLIED_FEATURES.items() if option in command for f in features]
        for name in names:
            name = name.strip()
            if name.startswith("-"):
                continue  # a feature turned off asks nothing of the CPU
            name = name.lstrip("+")
            if name in CPU_FEATURES:
                needed.setdefault(name, number)
    return needed


def missing_features(commands, cpu: Host) -> list:
    """[(feature, RUN line number)] that the RUN lines need and this CPU lacks."""
    return [(feature, line) for feature, line in required_features(commands).items() if cpu.lacks(feature)]
