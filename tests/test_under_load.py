"""benchmarks/under_load.py's lit runs: `--lit-filter` runs the tests it matches, and a run that
passes no test (a filter that matches none) counts as a wrong verdict, not as a clean one."""

from __future__ import annotations

import pytest
from support.paths import REPO, load_script

pytestmark = pytest.mark.harness


@pytest.fixture(scope="module")
def under_load():
    return load_script(REPO / "benchmarks" / "under_load.py")


def test_a_filter_runs_the_tests_it_matches(under_load):
    [(passed, failed, seconds)] = under_load.lit_runs(1, "lit_tests/typed_calls\\.py$")
    assert (passed, failed) == (1, 0) and seconds > 0


def test_a_filter_that_matches_no_test_is_a_wrong_run(under_load, capsys):
    [(passed, failed, _)] = under_load.lit_runs(1, "no_such_test_anywhere")
    assert (passed, failed) == (0, 1)
    assert "filter did not match any tests" in capsys.readouterr().err  # lit says why, for the reader
