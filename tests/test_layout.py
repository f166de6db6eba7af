"""The package's layout rules: imports point down a table of layers and never form a cycle, no
module uses another's private names, what importing the lit side costs, nothing loaded by path,
small modules and functions, one home for each environment variable, and the public names that
outlive the moves into subpackages."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.harness

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "runtime" / "memref_runtime"
MAX_LINES = 520  # "under ~500": a module past it holds two concerns
MAX_FUNCTION_LINES = 80  # "under ~60"; past 80 a function must be split

# --8<-- [start:layers] (docs/architecture.md shows this table)
# The layers, lowest first: a module may import from its own group and from lower layers only.
# Groups of one layer do not import each other (lit/ and pytest_plugin/ are two front ends of
# the same machinery). The core's modules form one group; memref_runtime/__init__.py imports
# lazily, by name, and is not a node.
# Not formatted: the comments stay aligned, the table is read as one.
# fmt: off
LAYERS = [
    {"core"},                           # element types, descriptors, conversion, interop, bindings, ...
    {"process"},                        # a test process and how it ended (the site hook imports it)
    {"jit"},                            # parse, lower, JIT, call
    {"testing", "upstream", "pyserver"},  # test helpers; upstream's conventions; the pre-started interpreter
    {"update_checks", "bench"},         # tools: memref-update-checks, memref-bench
    {"culprit"},                        # memref-bisect, memref-reduce (they run lit tests as update_checks does)
    {"lit", "pytest_plugin"},           # the front ends of lit and pytest
    {"aliases_of_old_names"},           # memref_runtime.differential: an old public name
]
# fmt: on
# --8<-- [end:layers]
GROUP_OF_MODULE = {"differential": "aliases_of_old_names"}
RANK = {group: rank for rank, groups in enumerate(LAYERS) for group in groups}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def group(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "package"
    if (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return GROUP_OF_MODULE.get(parts[1], "core")


@cache
def sources() -> dict[str, ast.Module]:
    return {
        module_name(p): ast.parse(p.read_text(), str(p))
        for p in sorted(PACKAGE.rglob("*.py"))
        if "_site" not in p.parts
    }  # the site hook is a script, imported by file name


def imports(module: str, tree: ast.Module) -> set[tuple[str, tuple[str, ...], int]]:
    """(imported module, names taken from it, line) of every import anywhere in `tree`, lazy ones too."""
    package = module if module_is_package(module) else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {(a.name, (), node.lineno) for a in node.names if a.name.startswith("memref_runtime")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            if base.startswith("memref_runtime"):
                names = tuple(a.name for a in node.names)
                submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in sources()]
                found |= {(s, (), node.lineno) for s in submodules}
                rest = tuple(n for n in names if f"{base}.{n}" not in sources())
                if rest or not submodules:
                    found.add((base, rest, node.lineno))
    return found


def module_is_package(module: str) -> bool:
    return (PACKAGE.parent / module.replace(".", "/") / "__init__.py").is_file()


@cache
def graph() -> dict[str, set[str]]:
    return {
        m: {target for target, _, _ in imports(m, tree) if target in sources() and target != m}
        for m, tree in sources().items()
    }


def test_imports_point_down_the_layers():
    up = []
    for module, tree in sources().items():
        source = group(module)
        if source == "package":
            continue
        for target, _, line in imports(module, tree):
            target_group = group(target)
            if target_group in (source, "package") or target not in sources():
                continue
            if RANK[target_group] >= RANK[source]:
                up.append(f"{module}:{line} imports {target} ({source} -> {target_group})")
    assert up == []


def test_the_import_graph_has_no_cycle():
    edges, cycles = graph(), []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join(path[path.index(nxt) :] + [node, nxt]) if nxt in path else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [])
    assert cycles == []


def private_names_defined(tree: ast.Module) -> set[str]:
    """`_name`s a module defines: module-level names, class members, attributes set on self."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
    return {n for n in names if n.startswith("_") and not n.startswith("__") and not n.endswith("_")}


def test_no_module_uses_another_modules_private_names():
    defined_in: dict[str, set[str]] = {}
    for module, tree in sources().items():
        for name in private_names_defined(tree):
            defined_in.setdefault(name, set()).add(module)
    crossing = []
    for module, tree in sources().items():
        for target, names, line in imports(module, tree):
            crossing += [
                f"{module}:{line} imports {target}.{n}" for n in names if n.startswith("_") and not n.startswith("__")
            ]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in defined_in
                and module not in defined_in[node.attr]
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                crossing.append(f"{module}:{node.lineno} uses .{node.attr} of {sorted(defined_in[node.attr])}")
    assert crossing == []


def test_no_function_is_over_80_lines():
    long = []
    for module, tree in sources().items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {length} lines")
    assert long == []


def imported_after(code: str) -> set:
    """The modules a fresh interpreter has after `code` (the checkout's runtime first on the path)."""
    script = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(REPO / "runtime"))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import memref_runtime.lit",
        "import memref_runtime.lit.configuration",  # what configure() loads in lit's interpreter
        "import memref_runtime.process.report, memref_runtime.lit.test_format",
        "import memref_runtime.update_checks",
        "import memref_runtime, memref_runtime.settings, memref_runtime.aliases, memref_runtime.environment",
        "import memref_runtime.pytest_plugin",  # every pytest session where memref-runtime is installed
        "import memref_runtime.culprit.cli",  # memref-bisect --help, memref-reduce --help
    ],
)
def test_the_lit_side_imports_neither_numpy_nor_mlir(code):
    heavy = {
        m for m in imported_after(code) if m.split(".")[0] in ("numpy", "mlir", "torch_mlir", "ml_dtypes", "hypothesis")
    }
    assert heavy == set()


def test_the_runtime_loads_on_first_use():
    assert "numpy" in imported_after("import memref_runtime; memref_runtime.get_ranked_memref_descriptor")
    assert "memref_runtime.jit.module" in imported_after("from memref_runtime import JitModule")


def test_nothing_is_loaded_by_path_but_the_next_sitecustomize():
    users = sorted(
        str(p.relative_to(REPO))
        for p in [*PACKAGE.rglob("*.py"), REPO / "lit.cfg.py"]
        if "spec_from_file_location" in p.read_text()
    )
    assert users == ["runtime/memref_runtime/process/_site/sitecustomize.py"]


def test_no_module_holds_two_concerns():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_every_environment_variable_is_named_in_one_module():
    from memref_runtime import environment
    from memref_runtime.pyserver import client

    ours = {v for k, v in vars(environment).items() if k.isupper() and isinstance(v, str)}
    assert ours == set(environment.VARIABLES)  # each has its line
    spelled_out = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("environment.py", "client.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
                text = node.value.decode(errors="replace") if isinstance(node.value, bytes) else node.value
                if text in ours or (text.startswith("MEMREF_RUNTIME_") and text.isupper()):
                    spelled_out.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {text}")
    assert spelled_out == []
    # The client starts without the package (python -I -S) and keeps copies: the same names.
    assert client.DIR_ENV == environment.PYTHON_SERVER_DIR and client.OWNER_ENV == environment.PYTHON_SERVER_OWNER
    assert client.EXPECTED_CRASH_ENV == environment.EXPECTED_CRASH
    assert {
        environment.REPORT.encode(),
        environment.REPORT_PIPES.encode(),
        environment.CANDIDATE.encode(),
        environment.LIT_CURRENT_TESTCASE.encode(),
    } <= set(client.VOLATILE_ENV)


def test_the_public_names_still_work():
    import memref_runtime
    import memref_runtime.differential
    import memref_runtime.lit
    import memref_runtime.np_to_memref
    import memref_runtime.testing
    from memref_runtime.jit import JitModule
    from memref_runtime.testing import check_against

    assert memref_runtime.JitModule is JitModule
    assert memref_runtime.differential.check_against is check_against
    assert memref_runtime.testing.check_close.__module__ == "memref_runtime.testing.numerics"
    assert callable(memref_runtime.lit.configure) and os.path.isdir(memref_runtime.lit.SITE_HOOK)
    upstream = set(memref_runtime.np_to_memref.__all__) - {"np", "ctypes", "ml_dtypes", "np_to_memref"}
    assert upstream == set(memref_runtime.UPSTREAM_NAMES) and upstream <= set(memref_runtime.__all__)
    for name in memref_runtime.__all__:
        assert getattr(memref_runtime, name) is not None


def test_the_console_script_is_declared():
    text = (REPO / "pyproject.toml").read_text()
    assert 'memref-update-checks = "memref_runtime.update_checks.cli:main"' in text
    assert 'memref-bisect = "memref_runtime.culprit.cli:bisect_main"' in text
    assert 'memref-reduce = "memref_runtime.culprit.cli:reduce_main"' in text


def test_our_own_lit_config_is_a_short_user_of_the_plugin():
    text = (REPO / "lit.cfg.py").read_text()
    assert len(text.splitlines()) < 60 and "memref_runtime.lit.configure(config, lit_config" in text
