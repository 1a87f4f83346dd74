"""Snapshots: listing, detail, and the windows that block the hierarchy import."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from hrsync.simulator.server import RunningSimulator

from .conftest import START, Api, FakeClock, current_hierarchy


def test_snapshots_list_has_the_spec_fields(api: Api) -> None:
    body = api.get("snapshots.list").json()
    assert body["ok"] is True
    by_id = {snapshot["id"]: snapshot for snapshot in body["snapshots"]}
    q1 = by_id["snap-q1"]
    assert set(q1) == {
        "id",
        "account_id",
        "last_result_change_at",
        "scheduled_for",
        "completed_at",
        "completed_count",
        "deleted_at",
        "total_count",
    }
    assert q1["completed_at"] == "2026-09-23T09:00:00.000Z"  # 60 days before START
    assert q1["scheduled_for"] == "2026-09-08"
    assert q1["deleted_at"] is None
    assert (q1["completed_count"], q1["total_count"]) == (6, 7)
    assert by_id["snap-cancelled"]["completed_at"] is None
    assert by_id["snap-cancelled"]["deleted_at"] == "2026-11-18T09:00:00.000Z"


def process_error(api: Api) -> str | None:
    body = api.process(current_hierarchy()).json()
    return None if body["ok"] else str(body["error"])


def test_default_scenario_is_outside_every_window(api: Api) -> None:
    assert process_error(api) is None


def test_a_live_snapshot_blocks_imports(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_snapshot(snapshot_id="live")
    assert process_error(api) == "snapshot_in_progress"
    assert api.preview(current_hierarchy()).json()["error"] == "snapshot_in_progress"
    assert sim.dx.imports == []


@pytest.mark.parametrize(
    ("completed_days_ago", "blocked"),
    [(0, True), (20.9, True), (21, False), (30, False)],
)
def test_the_retroactive_window_lasts_21_days(
    api: Api, sim: RunningSimulator, completed_days_ago: float, blocked: bool
) -> None:
    sim.dx.add_snapshot(completed_at=START - timedelta(days=completed_days_ago))
    assert process_error(api) == ("snapshot_in_progress" if blocked else None)


def test_the_window_ends_as_the_clock_moves(
    api: Api, sim: RunningSimulator, clock: FakeClock
) -> None:
    sim.dx.add_snapshot(completed_at=START - timedelta(days=20))
    assert process_error(api) == "snapshot_in_progress"
    clock.advance(timedelta(days=1).total_seconds())
    assert process_error(api) is None


def test_a_snapshot_scheduled_for_a_later_day_blocks_nothing_until_that_day(
    api: Api, sim: RunningSimulator, clock: FakeClock
) -> None:
    # Not live yet: DX recommends updating the hierarchy in exactly these days.
    sim.dx.add_snapshot(scheduled_for=START.date() + timedelta(days=2), completed_at=None)
    assert process_error(api) is None
    clock.advance(timedelta(days=2).total_seconds())
    assert process_error(api) == "snapshot_in_progress"


def test_a_deleted_snapshot_blocks_nothing(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_snapshot(completed_at=None, deleted_at=START - timedelta(hours=1))
    sim.dx.add_snapshot(completed_at=START - timedelta(days=2), deleted_at=START)
    assert process_error(api) is None


def test_the_window_length_comes_from_the_scenario(clock: FakeClock) -> None:
    from dataclasses import replace

    from hrsync.simulator.scenario import default_scenario
    from tests.simulating import start_simulator

    with start_simulator(replace(default_scenario(), retro_window_days=3), clock=clock) as sim:
        sim.dx.add_snapshot(completed_at=START - timedelta(days=4))
        assert process_error(Api(sim.base_url)) is None


def test_snapshot_info_leaves_out_small_teams(api: Api, sim: RunningSimulator) -> None:
    sim.dx.add_snapshot(
        snapshot_id="s1", scheduled_for=date(2026, 9, 1), completed_at=START - timedelta(days=40)
    )
    body = api.get("snapshots.info", snapshot_id="s1").json()
    assert body["ok"] is True
    snapshot = body["snapshot"]
    teams = {row["snapshot_team"]["name"] for row in snapshot["team_scores"]}
    assert teams == {"Platform"}  # the only team with three or more contributors
    row = snapshot["team_scores"][0]
    assert row["item_type"] == "factor"
    assert row["item_id"] in {item["id"] for item in snapshot["snapshot_items"]["factors"]}
    assert set(snapshot["snapshot_items"]) == {"factors", "csat", "kpis"}


def test_snapshot_info_needs_a_known_id(api: Api) -> None:
    assert api.get("snapshots.info").json()["error"] == "invalid_arguments"
    missing = api.get("snapshots.info", snapshot_id="nope").json()
    assert missing["ok"] is False
