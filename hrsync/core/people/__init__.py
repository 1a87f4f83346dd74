"""Person, normalisation of export rows, and validation of the export (pure).

CONTRACT (shared with mapping, identity and the engine; change only with care):
- `SourceRow` (from `hrsync.sources.rows`, beside the readers) is what a reader yields;
  `RowTable` is every row at once (`Export.table()`, what a run passes).
- `Person` is one validated, normalised person (a tuple, built in C); `Person.attributes`
  is their whole row, each value read trimmed and with null words blank (`PersonValues`),
  read when asked from the export's cells; `Person.location` is written when asked too.
  People are equal when they read alike.
- `Problem` names location, field, value and what was expected.

`read_people` turns an export's rows into a `Directory`, in this order:

0. Fields: a `[source.fields]` value with braces is a template over the row's columns
   (hrsync.core.templates), rendered for every row at once; empty when all its
   placeholders are. A cell equal to one of `source.null_values` is empty, in every column.
   The work runs column by column over every row (`_Rows`), not row by row: 100,000 rows
   are then a few passes in C per column hrsync uses, and a column it never uses is never
   read.
1. Columns: every column named in `[source.fields]` (non-empty; a template's every
   column) must be in the export,
   and every include/exclude field must be a logical field or a column; otherwise one
   whole-file problem lists what is missing, the closest columns and the columns found,
   and no row is read.
2. Normalisation: every value trimmed; names with inner whitespace collapsed; e-mails
   (the person's and a manager's) lower-cased.
3. Filters (hrsync.core.filters): status, include, exclude. A filtered row is not validated:
   a terminated row with a blank e-mail is no problem.
4. Validation of the kept rows, all problems at once: empty employee id; empty or
   invalid e-mail (see `is_valid_email`); duplicate ids and e-mails (each row names the
   others); a manager reference (id, or e-mail when there is no id) matching nobody; a
   person who is their own manager; reporting cycles, printed as a chain of ids. An empty
   name is a warning (the e-mail stands in). A manager who is in the export but filtered
   out is a warning: the report is kept with no manager. When both manager columns are
   set, the id wins and a disagreeing e-mail is a warning. `manager_name` (used when neither
   id nor e-mail is given) matches by `name_key`; a name two kept people share is fatal
   for the row naming it. With `unknown_manager = "top"` a reference matching nobody
   makes the person top of the org: one warning per distinct value, and
   `Directory.unknown_managers`.
5. `filter.root`: the root and everyone below them, following reporting lines also
   through filtered-out managers (a manager who left does not cut their team out of the
   org). The root's own manager is cut. Problems elsewhere in the export stay fatal: a
   mistyped manager id outside the root's reach may be exactly what cut a branch off.
   Warnings about people outside the org are dropped.
6. An export whose every row is filtered out is a fatal problem naming the filters (a
   wrong `filter.active_status` must not look like an empty org); an export with no rows
   at all (a header only) is fatal too, naming the file. Zero people is never a sync.

Every value hrsync uses (the columns of `[source.fields]`, filter fields, and the columns
named by `also_used`, e.g. those of `mapping.team_name`) is checked on every row, kept or
filtered: a control character in it (Unicode category Cc: NUL, ESC, DEL, CR, LF, ...; a
tab is allowed) is fatal, as is a value over `MAX_FIELD_CHARS` characters. Such a value
would reach DX as a team name, or silently filter a person out as an unknown status.
Messages cap every list they hold (`hrsync.core.listing.capped`).
"""

from hrsync.core.people.columns import _normalise, normalise_name
from hrsync.core.people.managers import UnknownManager, name_key
from hrsync.core.people.person import (
    Person,
    PersonValues,
    RowShape,
    export_columns,
    read_row,
    read_value,
)
from hrsync.core.people.pipeline import ROOT_REASON, Directory, read_people
from hrsync.core.people.validation import Problem

__all__ = [
    "ROOT_REASON",
    "Directory",
    "Person",
    "PersonValues",
    "Problem",
    "RowShape",
    "UnknownManager",
    "_normalise",
    "export_columns",
    "name_key",
    "normalise_name",
    "read_people",
    "read_row",
    "read_value",
]
