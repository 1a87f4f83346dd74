"""The columns the config reads beyond [source.fields]: one list for the reader, the
config's checks and `explain`."""

from __future__ import annotations

from hrsync.core.export.read_columns import ColumnRead, columns_read
from hrsync.core.settings import AttributeSettings, FilterSettings, MappingSettings, Settings

ENTRIES = {"Location": "{Office}", "Level": "Job Level", "Cost center": "{Cost Center|strip}"}


def test_team_name_attributes_and_filters_each_named_with_their_setting() -> None:
    settings = Settings(
        mapping=MappingSettings(team_name="{positions[primary].org} ({lead_name})"),
        attributes=AttributeSettings(entries={"Org": "positions[0].org", "Office": "{Office}"}),
        filter=FilterSettings(
            include={"emails[primary].value": ("*@example.com",)},
            exclude={"Office": ("Remote",)},
        ),
    )
    read = columns_read(settings)
    assert read.values == (
        ColumnRead(
            "mapping.team_name", "{positions[primary].org} ({lead_name})", "positions[primary].org"
        ),
        ColumnRead("mapping.team_name", "{positions[primary].org} ({lead_name})", "lead_name"),
        ColumnRead("attributes.Org", "positions[0].org", "positions[0].org"),
        ColumnRead("attributes.Office", "{Office}", "Office"),
    )
    assert read.filters == (
        ColumnRead("filter.include", "emails[primary].value", "emails[primary].value"),
        ColumnRead("filter.exclude", "Office", "Office"),
    )
    # The reader reads each name once; the filters' keys are not values checked as fields'.
    assert read.names == (
        "positions[primary].org",
        "lead_name",
        "positions[0].org",
        "Office",
        "emails[primary].value",
    )
    assert read.value_names == ("positions[primary].org", "lead_name", "positions[0].org", "Office")


def test_attribute_columns_only_when_the_attributes_are_on() -> None:
    def attribute_names(attributes: AttributeSettings) -> tuple[str, ...]:
        read = columns_read(Settings(mapping=MappingSettings(team_name="x"), attributes=attributes))
        return read.names

    assert attribute_names(AttributeSettings(entries=ENTRIES)) == (
        "Office",
        "Job Level",
        "Cost Center",
    )
    assert attribute_names(AttributeSettings()) == ()


def test_a_template_that_does_not_parse_reads_nothing() -> None:
    # The loader reports it; the checks that run after it must not fail on it.
    settings = Settings(attributes=AttributeSettings(entries={"Location": "{Office"}))
    assert columns_read(settings).values == (
        ColumnRead("mapping.team_name", "{lead_name}'s team", "lead_name"),
    )
