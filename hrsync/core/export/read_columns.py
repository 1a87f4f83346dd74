"""The columns the config reads from each row beyond `[source.fields]` (pure).

`mapping.team_name`'s placeholders, the `[attributes]` columns (when the attributes are
on) and the `[filter]` include and exclude keys. One list, so that the reader, the
config's checks and `explain` cannot disagree on it: a JSON path among them that picks
from a list (``positions[primary].org``) is read as a column only when the reader is told
of it.
"""

from __future__ import annotations

from dataclasses import dataclass

from hrsync.core.export.templates import is_template, template_names
from hrsync.core.settings import Settings


@dataclass(frozen=True, slots=True)
class ColumnRead:
    """One name a setting reads from each row."""

    setting: str  # "mapping.team_name", "attributes.Office", "filter.include"
    written: str  # the setting's value (a column or a template), or the filter's key
    name: str  # a column; a team name's built-in placeholders ({lead_name}) are here too


@dataclass(frozen=True, slots=True)
class ColumnsRead:
    values: tuple[ColumnRead, ...]  # team names, attributes: their values checked as fields'
    filters: tuple[ColumnRead, ...]  # include and exclude keys: they only keep or drop rows

    @property
    def every(self) -> tuple[ColumnRead, ...]:
        return (*self.values, *self.filters)

    @property
    def value_names(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(read.name for read in self.values))

    @property
    def names(self) -> tuple[str, ...]:
        """Every name, once each: what the reader is to read."""
        return tuple(dict.fromkeys(read.name for read in self.every))


def columns_read(settings: Settings) -> ColumnsRead:
    team_name = settings.mapping.team_name
    values = [ColumnRead("mapping.team_name", team_name, n) for n in template_names(team_name)]
    attributes = settings.attributes
    if attributes.active:  # off, they are not read, so their columns need not exist
        for attribute, written in attributes.entries.items():
            # template_names, not a Template: the checks run on a config whose template may
            # not parse (the loader reports that one).
            names = template_names(written) if is_template(written) else (written,)
            values.extend(ColumnRead(f"attributes.{attribute}", written, n) for n in names)
    filters = [
        ColumnRead(f"filter.{kind}", key, key)
        for kind, table in (
            ("include", settings.filter.include),
            ("exclude", settings.filter.exclude),
        )
        for key in table
    ]
    return ColumnsRead(tuple(values), tuple(filters))
