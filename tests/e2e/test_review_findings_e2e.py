"""Review findings (adversarial review of issues 9-15): each test reproduced a silent or
misleading behaviour against the simulator before its fix."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Workspace

pytestmark = pytest.mark.slow


def test_explain_a_person_left_out_by_the_status_filter_says_so(workspace: Workspace) -> None:
    # E128 is on line 41 of the export with Status "Terminated". explain used to answer
    # "no person with employee id 'E128' in people.csv ... did you mean 'E125'?": the
    # one question explain is for (why is this person in no team?) answered wrongly.
    for query in ("E128", "ROHAN.GUPTA@example.com"):
        run = workspace.hrsync("explain", query)
        assert run.code == 0, run.stdout + run.stderr
        assert "no person with" not in run.stdout
        assert "line 41" in run.stdout
        assert "filter.active_status" in run.stdout and "'Terminated'" in run.stdout
        assert "in no team" in run.stdout
