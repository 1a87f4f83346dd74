"""The deploy tests' tools: found on PATH; skipped without them, except in CI (failed)."""

from __future__ import annotations

import pytest

from tests.deploy.tools import require_tool


def test_a_tool_on_path_is_found() -> None:
    assert require_tool("sh", "dash").endswith("/sh")


@pytest.mark.parametrize(
    ("ci", "outcome"),
    [
        pytest.param("", pytest.skip.Exception, id="developer"),
        pytest.param("true", pytest.fail.Exception, id="ci"),
    ],
)
def test_a_missing_tool_skips_for_a_developer_and_fails_in_ci(
    ci: str, outcome: type[BaseException], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="apt-get install prometheus"):
        require_tool("no-such-promtool", "prometheus")
