"""benchmarks/upstream_suites.py reads what `lit -a` prints: each test's result and the reason of
an UNSUPPORTED one, from a real lit run of a small suite (the CI route and the side-by-side
benchmark count upstream's tests with it; docs/figures/upstream_tests.md groups its reasons)."""

from __future__ import annotations

import subprocess

import pytest
from support.paths import LIT, REPO, load_script

pytestmark = pytest.mark.harness

TESTS = {
    "lit.cfg.py": (
        "import lit.formats\n"
        "config.name = 'mini'\n"
        "config.test_format = lit.formats.ShTest()\n"
        "config.suffixes = ['.txt']\n"
    ),
    "passes.txt": "# RUN: true\n",
    "fails.txt": "# RUN: false\n",
    "needs_a_feature.txt": "# REQUIRES: no-such-feature\n# RUN: true\n",
    "off/lit.local.cfg": "config.unsupported = True\n",
    "off/inside.txt": "# RUN: true\n",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    suite = tmp_path_factory.mktemp("mini")
    for name, text in TESTS.items():
        (suite / name).parent.mkdir(exist_ok=True)
        (suite / name).write_text(text)
    lit = subprocess.run([LIT, "-a", "-j2", str(suite)], capture_output=True, text=True)
    module = load_script(REPO / "benchmarks" / "upstream_suites.py")
    return module, suite, module.parse(lit.stdout + lit.stderr)


def test_each_test_has_its_result(results):
    _, _, parsed = results
    codes = {name: result.code for name, result in parsed.items()}
    assert codes == {
        "passes.txt": "PASS",
        "fails.txt": "FAIL",
        "needs_a_feature.txt": "UNSUPPORTED",
        "off/inside.txt": "UNSUPPORTED",
    }


def test_an_unsupported_test_has_its_reason(results):
    # Once the rest of the result line (" (3 of 4)") was read as the test's output: every reason
    # was an empty string, and the figures' table had one row with no reason.
    module, suite, parsed = results
    reasons = {
        name: module.unsupported_reason(name, parsed[name], suite) for name in ("needs_a_feature.txt", "off/inside.txt")
    }
    assert reasons == {"needs_a_feature.txt": "requires no-such-feature", "off/inside.txt": "off in off/lit.local.cfg"}
