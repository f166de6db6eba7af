"""The documentation: its code examples run as written and give what their comments say, the site
builds with `mkdocs build --strict` (and that build does fail on a broken link), and the figures
files the pages include are written by the benchmark scripts, never by hand."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.paths import REPO

DOCS = REPO / "docs"
MKDOCS = shutil.which("mkdocs", path=os.path.dirname(sys.executable)) or shutil.which("mkdocs")
needs_mkdocs = pytest.mark.skipif(MKDOCS is None, reason="mkdocs is not installed: pip install -e '.[docs]'")
# The first line of a figures file, as benchmarks/harness.py writes it.
FIGURES_HEADER = re.compile(
    r"^\*Written by `python benchmarks/(\w+)\.py [^`]*--write-figures[^`]*` on "
    r"\d{4}-\d\d-\d\d \d\d:\d\d UTC, a (full|quick) run"
)


def code_block(page: str, fence: str, containing: str) -> str:
    """The first ```<fence> block of docs/<page> that contains `containing`."""
    blocks = [b for b in re.findall(rf"```{fence}\n(.*?)```", (DOCS / page).read_text(), re.S) if containing in b]
    assert blocks, f"docs/{page} has no ```{fence} block with {containing!r}"
    return blocks[0]


def test_typed_call_example_runs():
    pytest.importorskip("mlir.execution_engine")
    names: dict = {}
    exec(compile(code_block("jit.md", "python", "JitModule("), "docs/jit.md example", "exec"), names)
    np.testing.assert_array_equal(names["out"], [0, 2, 4, 6])
    np.testing.assert_array_equal(names["r"], np.arange(10.0))
    assert names["r"].base.owner is not None  # owns the JIT-allocated memory


@pytest.mark.jit
def test_benchmark_example_runs(capsys):
    pytest.importorskip("mlir.execution_engine")
    names: dict = {}
    exec(compile(code_block("benchmarking.md", "py", "check_faster("), "docs/benchmarking.md example", "exec"), names)
    assert names["r"].gflops > 0 and names["r"].flops == 2 * 128**3
    out, err = capsys.readouterr()
    assert out.startswith("matmul: median ") and err == "-O3 matmul is at least 2x -O0: faster, ok\n"


def test_the_figures_files_are_the_scripts_output():
    """Each docs/figures/<script>.md names, on its first line, the script that wrote it; every
    script the pages include has its file."""
    files = sorted((DOCS / "figures").glob("*.md"))
    assert {f.stem for f in files} >= {"run", "kernel_timing", "suite", "under_load", "upstream_tests"}
    for f in files:
        first = f.read_text().splitlines()[0]
        match = FIGURES_HEADER.match(first)
        assert match and match[1] == f.stem, f"{f}: not a file a benchmark script wrote: {first!r}"
        assert (REPO / "benchmarks" / f"{f.stem}.py").is_file()


def test_the_pages_include_only_what_exists():
    """Every `--8<--` include of a figures file names a file and section that the file has."""
    for page in DOCS.rglob("*.md"):
        for path, section in re.findall(r'--8<-- "(docs/figures/[\w.]+\.md)(?::([a-z]\w*))?"', page.read_text()):
            text = (REPO / path).read_text()
            assert not section or f"[start:{section}]" in text, f"{page}: {path} has no section {section!r}"


class TestWriteFigures:
    """benchmarks/harness.py: --write-figures writes what the script printed, under its header."""

    @pytest.fixture
    def harness(self, monkeypatch, tmp_path):
        monkeypatch.syspath_prepend(str(REPO / "benchmarks"))
        import harness

        monkeypatch.setattr(harness, "FIGURES", tmp_path / "figures")
        return harness

    def run(self, harness, argv: list[str], status: int = 0) -> int:
        parser = argparse.ArgumentParser()
        parser.add_argument("--markdown", action="store_true")
        parser.add_argument("--quick", action="store_true")
        harness.add_figures_option(parser)
        args = parser.parse_args(argv)

        def body() -> int:
            harness.write(f"markdown: {args.markdown}")
            with harness.section("table", args.markdown):
                harness.write("| a |\n| --- |\n| 1 |")
            return status

        return harness.write_figures(args, "example", argv, body)

    def test_writes_the_output_under_a_header(self, harness, capsys):
        assert self.run(harness, ["--quick", "--write-figures"]) == 0
        lines = (harness.FIGURES / "example.md").read_text().splitlines()
        assert re.match(
            r"\*Written by `python benchmarks/example\.py --quick --write-figures` on "
            r"\d{4}-\d\d-\d\d \d\d:\d\d UTC, a quick run \(`--quick`",
            lines[0],
        )
        assert lines[1:] == [
            "",
            "markdown: True",
            "<!-- --8<-- [start:table] -->",
            "| a |",
            "| --- |",
            "| 1 |",
            "<!-- --8<-- [end:table] -->",
        ]
        out, err = capsys.readouterr()
        assert "markdown: True" in out and "wrote" in err

    def test_a_failed_run_writes_nothing(self, harness, capsys):
        assert self.run(harness, ["--write-figures"], status=1) == 1
        assert not (harness.FIGURES / "example.md").exists()
        assert "the run failed (exit status 1)" in capsys.readouterr().err

    def test_without_the_option_nothing_is_written_nor_marked(self, harness, capsys):
        assert self.run(harness, []) == 0
        assert not harness.FIGURES.exists()
        out = capsys.readouterr().out
        assert "markdown: False" in out and "--8<--" not in out


def build_site(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MKDOCS, "build", "--strict", "--site-dir", str(site)], cwd=root, capture_output=True, text=True, timeout=600
    )


@pytest.mark.harness
@needs_mkdocs
def test_the_site_builds_strict(tmp_path):
    out = build_site(REPO, tmp_path / "site")
    assert out.returncode == 0, out.stdout + out.stderr
    pages = {p.relative_to(tmp_path / "site").as_posix(): p.read_text() for p in (tmp_path / "site").rglob("*.html")}
    assert not [name for name, html in pages.items() if "--8<--" in html], "an include was left unexpanded"
    # The API pages hold the docstrings, the layout blocks kept as preformatted text.
    assert "whose public functions take NumPy values" in pages["api/jit/index.html"]
    assert "test_dirs=" in pages["api/lit/index.html"]
    assert "<code>signatures.py    func.func types" in pages["architecture/index.html"]
    # The includes: the figures, the changelog, the layers table, the CI routes.
    assert "ranked descriptor, rank 1" in pages["speed-upstream/index.html"]
    assert "PASS reference / harness" in pages["upstream-compat/index.html"]
    assert "What changed in memref-runtime" in pages["changelog/index.html"]
    assert "aliases_of_old_names" in pages["architecture/index.html"]
    assert "<code>update-checks</code>" in pages["ci/index.html"]


@pytest.mark.harness
@needs_mkdocs
def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is strict: a copy of the site with one link to a missing page fails."""
    root = tmp_path / "copy"
    for name in ("mkdocs.yml", "CHANGELOG.md", "tests/test_layout.py", ".ci/run"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, root / name)
    shutil.copytree(DOCS, root / "docs")
    (root / "runtime").symlink_to(REPO / "runtime")
    index = root / "docs" / "index.md"
    index.write_text(index.read_text() + "\nSee [the missing page](no-such-page.md).\n")
    out = build_site(root, tmp_path / "site")
    assert out.returncode != 0
    assert "no-such-page.md" in out.stdout + out.stderr
