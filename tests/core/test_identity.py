"""Tests for hrsync/core/teams/identity.py: known ids, continuity, adoption, new ids, rows."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hrsync.core.people import Person
from hrsync.core.settings import FieldSettings, MappingSettings
from hrsync.core.teams.identity import (
    CONTINUITY_MIN_JACCARD,
    CONTINUITY_MIN_SHARED,
    Assignment,
    KnownIdentity,
    TeamRow,
    assign,
    derived_reference_id,
    reference_id_for,
)
from hrsync.core.teams.mapping import DesiredTeam, SortedEmails, build_teams
from hrsync.dx.models import DxTeam
from tests.core.test_mapping import sample_people
from tests.strategies import org_forests

FIELDS = FieldSettings()


def derived(key: str) -> str:
    """The id a new team with this HR key gets when nothing collides."""
    return derived_reference_id(key)


def team(
    key: str,
    name: str | None = None,
    parent: str | None = None,
    members: Iterable[str] = (),
    lead: str | None = None,
) -> DesiredTeam:
    return DesiredTeam(
        key=key,
        name=name or key,
        lead_email=lead or f"lead-{key.split(':')[-1].lower()}@example.com",
        lead_employee_id=key.split(":")[-1],
        parent_key=parent,
        contributors=tuple(sorted(set(members))),
    )


def known(
    key: str,
    ref: str,
    members: Iterable[str] = (),
    *,
    name: str | None = None,
    parent: str | None = None,
    lead: str | None = None,
    retired: bool = False,
) -> KnownIdentity:
    return KnownIdentity(
        key=key,
        reference_id=ref,
        name=name or key,
        parent_key=parent,
        lead_email=lead or f"lead-{key.split(':')[-1].lower()}@example.com",
        members=tuple(sorted(set(members))),
        retired=retired,
    )


def dx(dx_id: str, name: str, parent_id: str | None = None, ref: str | None = None) -> DxTeam:
    return DxTeam(id=dx_id, name=name, parent_id=parent_id, reference_id=ref)


def decision(result: Assignment, key: str) -> tuple[str, str]:
    (found,) = [d for d in result.decisions if d.key == key]
    return found.reference_id, found.how


def emails(*names: str) -> list[str]:
    return [f"{n}@example.com" for n in names]


# ---------------------------------------------------------------- known and new


def test_a_known_key_keeps_its_reference_id_through_rename_and_move() -> None:
    desired = [
        team("manager:E1", "Root"),
        team("manager:E2", "Platform Eng", parent="manager:E1"),
    ]
    store = [
        known("manager:E1", "ref-1", name="Root"),
        known("manager:E2", "ref-2", name="Platform", parent=None),
    ]
    result = assign(desired, store, [])
    assert decision(result, "manager:E2") == ("ref-2", "known")
    (detail,) = [d.detail for d in result.decisions if d.key == "manager:E2"]
    assert detail == "renamed 'Platform' -> 'Platform Eng'"


def test_new_teams_get_fresh_ids_in_row_order() -> None:
    desired = [team("manager:E2", parent="manager:E1"), team("manager:E1")]
    result = assign(desired, [], [])
    assert [(r.key, r.reference_id) for r in result.teams] == [
        ("manager:E1", derived("manager:E1")),
        ("manager:E2", derived("manager:E2")),
    ]
    assert {d.how for d in result.decisions} == {"new"}


def test_new_ids_are_derived_from_the_hr_key() -> None:
    ref = reference_id_for("manager:E1", set())
    assert ref == reference_id_for("manager:E1", {"something-else"})  # same key, same id
    assert re.fullmatch(r"hrsync-[0-9a-f]{16}", ref)
    assert ref == "hrsync-" + hashlib.sha256(b"manager:E1").hexdigest()[:16]
    assert reference_id_for("manager:E2", set()) != ref


def test_a_taken_derived_id_gets_the_first_free_suffix() -> None:
    base = derived("manager:E1")
    assert reference_id_for("manager:E1", {base}) == f"{base}-2"
    assert reference_id_for("manager:E1", {base, f"{base}-2", f"{base}-4"}) == f"{base}-3"


def test_retired_and_dx_ids_are_never_handed_out_again() -> None:
    base = derived("manager:E1")
    # A team continued under another key holds E1's derived id; another known team
    # holds the next one, and DX shows it.
    store = [
        known("manager:E9", base, retired=True),
        known("manager:E8", f"{base}-2"),
    ]
    dx_teams = [dx("D1", "Someone else's team", ref=f"{base}-2")]
    result = assign([team("manager:E1"), team("manager:E8")], store, dx_teams)
    assert decision(result, "manager:E1") == (f"{base}-3", "new")


def test_an_id_given_out_in_this_run_is_not_given_again() -> None:
    base = derived("manager:E1")
    store = [known("manager:E2", base, retired=True)]
    # E2 revives its id (which is E1's derived one): E1 takes the next.
    result = assign([team("manager:E2"), team("manager:E1")], store, [])
    assert decision(result, "manager:E2") == (base, "known")
    assert decision(result, "manager:E1") == (f"{base}-2", "new")


def test_a_retired_identity_is_revived_only_by_its_own_key() -> None:
    store = [
        known("manager:E1", "ref-1", emails("a", "b", "c"), retired=True),
    ]
    # A different key with the very same members does not get the retired id...
    other = assign([team("manager:E2", members=emails("a", "b", "c"))], store, [])
    assert decision(other, "manager:E2") == (derived("manager:E2"), "new")
    # ...the same key does: it is the same team coming back.
    same = assign([team("manager:E1", members=emails("a"))], store, [])
    assert decision(same, "manager:E1") == ("ref-1", "known")
    assert [i.retired for i in same.identities] == [False]


def test_teams_no_longer_desired_are_retired() -> None:
    store = [
        known("manager:E1", "ref-1"),
        known("manager:E2", "ref-2", parent="manager:E1"),
        known("manager:E3", "ref-3", retired=True),
    ]
    result = assign([team("manager:E1")], store, [])
    assert [(i.key, i.reference_id, i.retired) for i in result.identities] == [
        ("manager:E1", "ref-1", False),
        ("manager:E2", "ref-2", True),
        ("manager:E3", "ref-3", True),
    ]


# ---------------------------------------------------------------- continuity


@pytest.mark.parametrize(
    ("old_members", "new_members", "continued"),
    [
        # Jaccard 3/4 = 0.75, 3 shared: the classic replaced lead.
        (("a", "b", "c", "d"), ("b", "c", "d"), True),
        # Exactly at the boundary: Jaccard 2/4 = 0.5 with 2 shared.
        (("a", "b", "c"), ("b", "c", "d"), True),
        # Jaccard 2/5 = 0.4: below.
        (("a", "b", "c"), ("b", "c", "d", "e"), False),
        # Jaccard 1/2 = 0.5 but only 1 shared: too little evidence.
        (("a",), ("a", "b"), False),
        # Identical single member: still only 1 shared.
        (("a",), ("a",), False),
        # Jaccard 3/6 = 0.5 with 3 shared: at the boundary again; 3/7 just below it.
        (("a", "b", "c", "x"), ("a", "b", "c", "y", "z"), True),
        (("a", "b", "c", "x", "w"), ("a", "b", "c", "y", "z"), False),
    ],
)
def test_continuity_threshold(
    old_members: tuple[str, ...], new_members: tuple[str, ...], continued: bool
) -> None:
    assert CONTINUITY_MIN_JACCARD == 0.5
    assert CONTINUITY_MIN_SHARED == 2
    store = [known("manager:OLD", "ref-old", emails(*old_members))]
    desired = [team("manager:NEW", members=emails(*new_members))]
    result = assign(desired, store, [])
    if continued:
        assert decision(result, "manager:NEW") == ("ref-old", "continued")
        # The old key is re-keyed: it no longer exists, not even retired.
        assert [(i.key, i.reference_id, i.retired) for i in result.identities] == [
            ("manager:NEW", "ref-old", False)
        ]
    else:
        assert decision(result, "manager:NEW") == (derived("manager:NEW"), "new")
        assert ("manager:OLD", "ref-old", True) in [
            (i.key, i.reference_id, i.retired) for i in result.identities
        ]


def test_continuity_detail_names_the_old_team_and_the_overlap() -> None:
    store = [known("manager:OLD", "ref-old", emails("a", "b", "c", "d"), name="ML")]
    result = assign([team("manager:NEW", members=emails("b", "c", "d"))], store, [])
    (only,) = result.decisions
    assert (
        only.detail == "continues manager:OLD ('ML'): 3 of 4 members shared (Jaccard 0.75 >= 0.5)"
    )


def test_the_best_overlap_wins_and_each_old_team_is_used_once() -> None:
    store = [
        known("manager:OLD1", "ref-1", emails("a", "b", "c", "d")),
        known("manager:OLD2", "ref-2", emails("e", "f")),
    ]
    desired = [
        team("manager:A", members=emails("a", "b", "c")),  # 0.75 with OLD1
        team("manager:B", members=emails("a", "b", "c", "d")),  # 1.0 with OLD1
        team("manager:C", members=emails("e", "f", "g")),  # 0.67 with OLD2
    ]
    result = assign(desired, store, [])
    assert decision(result, "manager:B") == ("ref-1", "continued")
    assert decision(result, "manager:C") == ("ref-2", "continued")
    assert decision(result, "manager:A") == (derived("manager:A"), "new")


def test_equal_overlaps_are_broken_by_the_smaller_keys() -> None:
    store = [known("manager:OLD", "ref-old", emails("a", "b", "c", "d"))]
    desired = [
        team("manager:Y", members=emails("a", "b", "c")),
        team("manager:X", members=emails("b", "c", "d")),
    ]
    result = assign(desired, store, [])
    assert decision(result, "manager:X") == ("ref-old", "continued")


def test_a_changed_key_under_the_same_lead_continues_chains_by_parent() -> None:
    # Department "Eng" renamed to "Engineering": both units have the same lead and
    # no members that would tell them apart.
    lead = "cto@example.com"
    store = [
        known("department:Eng", "ref-eng", lead=lead, name="CTO's team"),
        known("department:Eng/Core", "ref-core", lead=lead, parent="department:Eng", name="Core"),
    ]
    desired = [
        team("department:Engineering", "CTO's team", lead=lead),
        team("department:Engineering/Core", "Core", "department:Engineering", lead=lead),
    ]
    result = assign(desired, store, [])
    assert decision(result, "department:Engineering") == ("ref-eng", "continued")
    assert decision(result, "department:Engineering/Core") == ("ref-core", "continued")


def test_same_lead_continuity_prefers_the_parent_over_a_misleading_name() -> None:
    # Name suffixes depend on other teams, so they may swap; the parent does not lie.
    lead = "ada@example.com"
    store = [
        known("department:Eng", "ref-eng", lead=lead, name="Ada's team (2)"),
        known(
            "department:Eng/Core",
            "ref-core",
            lead=lead,
            parent="department:Eng",
            name="Ada's team",
        ),
    ]
    desired = [
        team("department:Engineering", "Ada's team", lead=lead),
        team("department:Engineering/Core", "Ada's team (2)", "department:Engineering", lead=lead),
    ]
    result = assign(desired, store, [])
    assert decision(result, "department:Engineering") == ("ref-eng", "continued")
    assert decision(result, "department:Engineering/Core") == ("ref-core", "continued")


# ---------------------------------------------------------------- adoption


def test_adoption_by_a_reference_id_derived_from_hr_data() -> None:
    dx_teams = [dx("D1", "Anything", ref="E1"), dx("D2", "Other", "D1", ref="MANAGER:E2")]
    desired = [team("manager:E1"), team("manager:E2", parent="manager:E1")]
    result = assign(desired, [], dx_teams)
    assert decision(result, "manager:E1") == ("E1", "adopted_reference")
    assert decision(result, "manager:E2") == ("MANAGER:E2", "adopted_reference")


def test_adoption_by_name_and_parent_keeps_a_dx_reference_id() -> None:
    dx_teams = [
        dx("D1", "Engineering", "ROOT-SENTINEL", ref="eng-001"),
        dx("D2", "platform ", "D1", ref="eng-002"),
        dx("D3", "Platform", "D9", ref="eng-003"),  # same name, other parent
    ]
    desired = [
        team("manager:E1", "Engineering"),
        team("manager:E2", "Platform", parent="manager:E1"),
    ]
    result = assign(desired, [], dx_teams)
    assert decision(result, "manager:E1") == ("eng-001", "adopted_name")
    assert decision(result, "manager:E2") == ("eng-002", "adopted_name")
    assert "updates it in place" in result.decisions[1].detail
    assert result.unreferenced_dx == ()


def test_a_dx_team_without_reference_id_is_matched_but_cannot_be_kept() -> None:
    dx_teams = [
        dx("D1", "Engineering", None, ref=None),
        dx("D2", "Platform", "D1", ref="eng-002"),
        dx("D3", "Old team", "D1", ref=None),
    ]
    desired = [
        team("manager:E1", "Engineering"),
        team("manager:E2", "Platform", parent="manager:E1"),
    ]
    result = assign(desired, [], dx_teams)
    ref, how = decision(result, "manager:E1")
    assert (ref, how) == (derived("manager:E1"), "adopted_name")
    detail = result.decisions[0].detail
    assert "no reference_id" in detail and "will be archived" in detail
    # The child still matches through the adopted parent's DX id.
    assert decision(result, "manager:E2") == ("eng-002", "adopted_name")
    assert [t.id for t in result.unreferenced_dx] == ["D1", "D3"]


def test_no_adoption_when_the_parent_differs_or_is_new() -> None:
    dx_teams = [dx("D1", "Root", None, ref="r1"), dx("D2", "Platform", None, ref="r2")]
    desired = [team("manager:E1", "Root"), team("manager:E2", "Platform", "manager:E1")]
    result = assign(desired, [], dx_teams)
    assert decision(result, "manager:E1") == ("r1", "adopted_name")
    assert decision(result, "manager:E2") == (derived("manager:E2"), "new")


def test_dx_teams_the_store_knows_are_never_adopted() -> None:
    store = [known("manager:E9", "ref-9", retired=True), known("manager:E8", "ref-8")]
    dx_teams = [dx("D1", "Platform", None, ref="ref-9"), dx("D2", "Data", None, ref="ref-8")]
    desired = [team("manager:E1", "Platform"), team("manager:E2", "Data")]
    result = assign(desired, store, dx_teams)
    assert decision(result, "manager:E1") == (derived("manager:E1"), "new")
    assert decision(result, "manager:E2") == (derived("manager:E2"), "new")


def test_each_dx_team_is_adopted_once() -> None:
    dx_teams = [dx("D1", "Core", None, ref="r1")]
    desired = [team("manager:E1", "Core"), team("manager:E2", "core")]
    result = assign(desired, [], dx_teams)
    assert decision(result, "manager:E1") == ("r1", "adopted_name")
    assert decision(result, "manager:E2") == (derived("manager:E2"), "new")


# ---------------------------------------------------------------- rows and payload


def test_rows_name_parents_by_reference_and_name_parents_first() -> None:
    desired = [
        team("manager:E3", "C", parent="manager:E2", members=emails("z", "y", "z")),
        team("manager:E2", "B", parent="manager:E1"),
        team("manager:E1", "A"),
    ]
    result = assign(desired, [], [])
    assert [r.to_payload() for r in result.teams] == [
        {
            "name": "A",
            "reference_id": derived("manager:E1"),
            "team_lead_email": "lead-e1@example.com",
            "parent_team_reference_id": None,
            "parent_team_name": None,
            "contributors": [],
        },
        {
            "name": "B",
            "reference_id": derived("manager:E2"),
            "team_lead_email": "lead-e2@example.com",
            "parent_team_reference_id": derived("manager:E1"),
            "parent_team_name": "A",
            "contributors": [],
        },
        {
            "name": "C",
            "reference_id": derived("manager:E3"),
            "team_lead_email": "lead-e3@example.com",
            "parent_team_reference_id": derived("manager:E2"),
            "parent_team_name": "B",
            "contributors": ["y@example.com", "z@example.com"],
        },
    ]


def test_contributors_handed_unsorted_or_twice_are_sorted_and_unique_in_the_row() -> None:
    # build_teams hands them sorted and unique (and says so by their type); any other
    # caller's tuple is sorted here, as before assign stopped sorting build_teams' again.
    desired = DesiredTeam("manager:E1", "A", "a@example.com", "E1", None, ("z@x", "y@x", "z@x"))
    (row,) = assign([desired], [], []).teams
    assert row.contributors == ("y@x", "z@x")
    people = sample_people()
    for mapped in build_teams(people, MappingSettings(), FIELDS).teams:
        assert type(mapped.contributors) is SortedEmails
        assert list(mapped.contributors) == sorted(set(mapped.contributors))


@pytest.mark.parametrize(
    ("desired", "store", "message"),
    [
        ([team("manager:E1"), team("manager:E1")], [], "appears twice"),
        ([team("manager:E1", parent="manager:E0")], [], "not a desired team"),
        (
            [team("manager:E1", parent="manager:E2"), team("manager:E2", parent="manager:E1")],
            [],
            "form a cycle: manager:E1 -> manager:E2 -> manager:E1",
        ),
        ([team("manager:E1")], [known("k", "r"), known("k", "s")], "holds key 'k' twice"),
        ([team("manager:E1")], [known("k", "r"), known("j", "r")], "reference_id 'r' twice"),
    ],
)
def test_inconsistent_input_is_refused(
    desired: list[DesiredTeam], store: list[KnownIdentity], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        assign(desired, store, [])


# ---------------------------------------------------------------- the sample reorg


def test_sample_reorg_keeps_ids_continues_the_ml_team_and_retires_one() -> None:
    mapping = MappingSettings(team_name="{department}")
    first = assign(build_teams(sample_people(), mapping, FIELDS).teams, [], [])
    before = {r.key: r for r in first.teams}
    reorg = build_teams(sample_people("sample-org-reorg.csv"), mapping, FIELDS)
    second = assign(reorg.teams, first.identities, [])
    after = {r.key: r for r in second.teams}
    hows = {d.key: d.how for d in second.decisions}
    assert before["manager:E021"].name == "Developer Experience"
    assert after["manager:E021"].name == "Developer Productivity"
    assert after["manager:E021"].reference_id == before["manager:E021"].reference_id
    assert after["manager:E024"].parent_reference_id == before["manager:E012"].reference_id
    assert hows["manager:E129"] == "new"
    assert hows["manager:E123"] == "continued"
    assert after["manager:E123"].reference_id == before["manager:E026"].reference_id
    retired = [i.key for i in second.identities if i.retired]
    assert retired == ["manager:E112"]


# ---------------------------------------------------------------- properties


def assert_rows_well_formed(result: Assignment) -> None:
    seen: dict[str, str] = {}
    for row in result.teams:
        assert (row.parent_reference_id is None) == (row.parent_name is None)
        if row.parent_reference_id is not None:
            # Parents come first, so this also rules out cycles.
            assert seen.get(row.parent_reference_id) == row.parent_name
        assert row.reference_id not in seen
        seen[row.reference_id] = row.name
    refs = [i.reference_id for i in result.identities]
    keys = [i.key for i in result.identities]
    assert len(refs) == len(set(refs))
    assert len(keys) == len(set(keys))


STRATEGIES = st.sampled_from(["manager", "department"])


def mapping_for(strategy: str) -> MappingSettings:
    if strategy == "department":
        return MappingSettings(strategy="department", team_name="{lead_name}'s team")
    return MappingSettings(strategy="manager", team_name="{department} ({lead_name})")


@settings(max_examples=100, deadline=None)
@given(org_forests(), STRATEGIES)
def test_rows_are_well_formed_and_deterministic(people: list[Person], strategy: str) -> None:
    teams = build_teams(people, mapping_for(strategy), FIELDS).teams
    first = assign(teams, [], [])
    assert_rows_well_formed(first)
    assert assign(list(reversed(teams)), [], []) == first
    # Run again with what the first run stored: every team is known, nothing changes.
    again = assign(teams, first.identities, [])
    assert again.teams == first.teams
    assert {d.how for d in again.decisions} <= {"known"}


def rename(people: list[Person], new_name: Callable[[str], str], unit: str) -> list[Person]:
    """Every display name changed, and the path segment `unit` renamed everywhere."""

    def department(value: str | None) -> str | None:
        if value is None:
            return None
        return "/".join(f"{s} Renamed" if s == unit else s for s in value.split("/"))

    return [p._replace(name=new_name(p.name), department=department(p.department)) for p in people]


@settings(max_examples=150, deadline=None)
@given(org_forests(), STRATEGIES, st.sampled_from(["Engineering", "Platform", "Product", "Sales"]))
def test_renaming_leads_and_departments_keeps_every_reference_id(
    people: list[Person], strategy: str, unit: str
) -> None:
    mapping = mapping_for(strategy)
    first = assign(build_teams(people, mapping, FIELDS).teams, [], [])
    renamed = rename(people, lambda n: f"{n} Jr", unit)
    second = assign(build_teams(renamed, mapping, FIELDS).teams, first.identities, [])
    assert_rows_well_formed(second)

    def renamed_key(key: str) -> str:
        if not key.startswith("department:"):
            return key
        path = key.removeprefix("department:").split("/")
        return "department:" + "/".join(f"{s} Renamed" if s == unit else s for s in path)

    before = {renamed_key(r.key): r.reference_id for r in first.teams}
    after = {r.key: r.reference_id for r in second.teams}
    assert after == before
    assert not [i for i in second.identities if i.retired]


def test_team_row_payload_field_names_match_the_spec() -> None:
    row = TeamRow("k", "r", "n", "l@example.com", None, None, ("a@example.com",))
    assert list(row.to_payload()) == [
        "name",
        "reference_id",
        "team_lead_email",
        "parent_team_reference_id",
        "parent_team_name",
        "contributors",
    ]


def dx_view(rows: Iterable[TeamRow], with_refs: bool = True) -> list[DxTeam]:
    """What `teams.list` shows once `rows` were imported (DX ids of its own)."""
    rows = list(rows)
    ids = {row.reference_id: f"dx-{index}" for index, row in enumerate(rows)}
    return [
        DxTeam(
            id=ids[row.reference_id],
            name=row.name,
            parent_id="LTE" if row.parent_reference_id is None else ids[row.parent_reference_id],
            reference_id=row.reference_id if with_refs else None,
        )
        for row in rows
    ]


@settings(max_examples=100, deadline=None)
@given(org_forests(), STRATEGIES)
def test_a_lost_store_adopts_every_team_back_from_dx(people: list[Person], strategy: str) -> None:
    teams = build_teams(people, mapping_for(strategy), FIELDS).teams
    first = assign(teams, [], [])
    recovered = assign(teams, [], dx_view(first.teams))
    assert recovered.teams == first.teams
    # By the ids derived from the HR keys, not by name: a rename would not stop it.
    assert {d.how for d in recovered.decisions} <= {"adopted_reference"}
    assert recovered.unreferenced_dx == ()


@settings(max_examples=50, deadline=None)
@given(org_forests(), STRATEGIES)
def test_dx_teams_without_reference_ids_are_matched_and_all_called_out(
    people: list[Person], strategy: str
) -> None:
    teams = build_teams(people, mapping_for(strategy), FIELDS).teams
    first = assign(teams, [], [])
    dx_teams = dx_view(first.teams, with_refs=False)
    result = assign(teams, [], dx_teams)
    assert {d.how for d in result.decisions} <= {"adopted_name"}
    assert all("will be archived" in d.detail for d in result.decisions)
    assert sorted(t.id for t in result.unreferenced_dx) == sorted(t.id for t in dx_teams)


def test_a_reference_id_dx_holds_twice_is_adopted_once() -> None:
    dx_teams = [dx("D1", "Core", None, ref="dup"), dx("D2", "Data", None, ref="dup")]
    desired = [team("manager:E1", "Core"), team("manager:E2", "Data")]
    result = assign(desired, [], dx_teams)
    assert decision(result, "manager:E1") == ("dup", "adopted_name")
    assert decision(result, "manager:E2") == (derived("manager:E2"), "new")


@settings(max_examples=100, deadline=None)
@given(org_forests(), STRATEGIES)
def test_a_lost_store_adopts_renamed_teams_by_their_derived_ids(
    people: list[Person], strategy: str
) -> None:
    mapping = mapping_for(strategy)
    first = assign(build_teams(people, mapping, FIELDS).teams, [], [])
    # Every lead renamed, so every team name (made from it) changed while the store was
    # gone: name and parent match nothing; the HR keys still do.
    renamed = build_teams(rename(people, lambda n: f"{n} Jr", "no such unit"), mapping, FIELDS)
    recovered = assign(renamed.teams, [], dx_view(first.teams))
    assert {r.key: r.reference_id for r in recovered.teams} == {
        r.key: r.reference_id for r in first.teams
    }
    assert {d.how for d in recovered.decisions} <= {"adopted_reference"}


def test_a_suffixed_derived_id_is_adopted_when_the_plain_one_is_elsewhere() -> None:
    base = derived("manager:E1")
    # E1's plain derived id went to a team continued under E2 before the store was lost;
    # E1's own team got the suffix.
    dx_teams = [dx("D1", "Platform", None, ref=f"{base}-2"), dx("D2", "Data", None, ref=base)]
    desired = [team("manager:E1", "Platform (renamed)"), team("manager:E2", "Data")]
    result = assign(desired, [], dx_teams)
    # The plain id wins for E1 (the store that knew better is gone); E2 then finds its
    # team by name. A suffixed id alone is found too:
    assert decision(result, "manager:E1") == (base, "adopted_reference")
    only_suffixed = assign([team("manager:E1", "Renamed")], [], [dx_teams[0]])
    assert decision(only_suffixed, "manager:E1") == (f"{base}-2", "adopted_reference")
