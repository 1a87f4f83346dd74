"""People: an export's rows read, normalised and validated as `Person`s (pure).

CONTRACT (shared with mapping, identity and the engine; change only with care):
- `SourceRow` (from `hrsync.core.export.rows`) is what a reader yields;
  `RowTable` is every row at once (`Export.table()`, what a run passes).
- `Person` is one validated, normalised person (a tuple, built in C); `Person.attributes`
  is their whole row, each value read trimmed and with null words blank (`PersonValues`),
  read when asked from the export's cells; `Person.location` is written when asked too.
  People are equal when they read alike, and are not hashable.
- `Problem` names location, field, value and what was expected.

The modules: `person` (the model and how it reads its row), `columns` (the column
engine), `validation` (problems), `managers` (manager resolution, cycles, filter.root),
`pipeline` (`read_people` and its `Directory`).

`read_people` turns an export's rows into a `Directory` in these steps, each one call
returning what it finds:

1. Columns (`check_columns`): every column named in `[source.fields]` (non-empty; a
   template's every column) must be in the export, and every include/exclude field must
   be a logical field or a column; otherwise one whole-file problem lists what is
   missing, the closest columns and the columns found, and no row is read. A status
   column the config leaves unused is a warning (its rows are all kept).
2. Fields (`read_fields`): a `[source.fields]` value with braces is a template over the
   row's columns (hrsync.core.export.templates), rendered for every row at once; empty when all
   its placeholders are. A cell equal to one of `source.null_values` is empty, in every
   column. Every value is trimmed; names have inner whitespace collapsed; e-mails (the
   person's and a manager's) are lower-cased. The work runs column by column over every
   row (`ExportColumns`), not row by row: 100,000 rows are then a few passes in C per
   column hrsync uses, and a column it never uses is never read.
3. Values (`check_values`): every value hrsync uses (the columns of `[source.fields]`,
   filter fields, and the columns named by `also_used`, e.g. those of
   `mapping.team_name`) is checked on every row, kept or filtered: a control character
   in it (Unicode category Cc: NUL, ESC, DEL, CR, LF, ...; a tab is allowed) is fatal, as
   is a value over `MAX_FIELD_CHARS` characters. Such a value would reach DX as a team
   name, or silently filter a person out as an unknown status.
4. Filters (`filter_rows`, hrsync.core.export.filters): status, include, exclude. A filtered
   row is not validated: a terminated row with a blank e-mail is no problem. Then
   several values (`check_several`): a kept row whose field (a `[source.fields]` column,
   a template's, or `also_used`) holds several different values of a JSON list
   (`RowTable.several`) is a problem of that row, naming the values and a path that picks
   one; the other checks' problems with that same value are not told again.
5. Rows (`validate_rows`), all problems at once: empty employee id; empty or invalid
   e-mail (see `is_valid_email`). An empty name is a warning (the e-mail stands in).
6. Duplicates (`index_rows`, `report_duplicates`): ids and e-mails held by two kept rows
   (each later row names the first).
7. Managers (`resolve_managers`): a manager reference (id, or e-mail when there is no id)
   matching nobody, or naming the person themselves, is fatal. A manager who is in the
   export but filtered out is a warning: the report is kept with no manager of their
   own, and `Directory.left` names that manager (their row read as a person, and the
   filtered-out managers above them), so that their team stays
   (hrsync.core.teams.mapping). When both manager columns are set, the id wins and a
   disagreeing e-mail is a warning.
   `manager_name` (used when neither id nor e-mail is given) matches by `name_key`; a
   name two kept people share is fatal for the row naming it. With `unknown_manager =
   "top"` a reference matching nobody makes the person top of the org: one warning per
   distinct value, and `Directory.unknown_managers`.
8. Cycles (`find_cycles`): reporting cycles are fatal, printed as a chain of ids.
9. `filter.root` (`apply_root`): the root and everyone below them, following reporting
   lines also through filtered-out managers (a manager who left does not cut their team
   out of the org). The root's own manager is cut. Problems elsewhere in the export stay
   fatal: a mistyped manager id outside the root's reach may be exactly what cut a
   branch off. Warnings about people outside the org are dropped.
10. Nobody kept (`check_some_kept`): an export whose every row is filtered out is a fatal
    problem naming the filters (a wrong `filter.active_status` must not look like an
    empty org); an export with no rows at all (a header only) is fatal too, naming the
    file.
11. Held people (`hold_rows`, with `hold_people`): when every fatal problem is one of a
    person's own row (`Problem.holds`: an e-mail, an id, a duplicate, their manager, a
    cycle, an over-long value, several values), those rows are held (`Directory.held`)
    instead of refusing the export; any other problem refuses it with every problem
    listed.
12. People (`build_people`): the valid kept people (of the org), in export order, held
    rows left out. Zero people is never a sync.

Messages cap every list they hold (`hrsync.core.listing.capped`).
"""

from hrsync.core.people.columns import normalise_name
from hrsync.core.people.managers import (
    NO_MANAGER_LEFT,
    NOT_IN_EXPORT,
    SUSPECT_REFERENCES,
    KnownTeam,
    LeftManagers,
    UnknownManager,
    name_key,
)
from hrsync.core.people.person import (
    Person,
    PersonValues,
    RowShape,
    export_columns,
    read_row,
    read_value,
)
from hrsync.core.people.pipeline import ROOT_REASON, Directory, HeldPerson, read_people
from hrsync.core.people.validation import Problem

__all__ = [
    "NOT_IN_EXPORT",
    "NO_MANAGER_LEFT",
    "ROOT_REASON",
    "SUSPECT_REFERENCES",
    "Directory",
    "HeldPerson",
    "KnownTeam",
    "LeftManagers",
    "Person",
    "PersonValues",
    "Problem",
    "RowShape",
    "UnknownManager",
    "export_columns",
    "name_key",
    "normalise_name",
    "read_people",
    "read_row",
    "read_value",
]
