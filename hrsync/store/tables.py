"""The state store's tables (SQLAlchemy Core).

Tables, not ORM classes: the ORM's import, mapping and first queries cost every `plan`
and `sync` ~75 ms of CPU (opening the store and a plan's reads: 0.22 s then, 0.14 s now)
for no query Core could not say as plainly (issue 12).

Migrations in ``migrations/versions`` must describe exactly these tables;
tests/store/test_migrations.py fails when they drift apart.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, MetaData, String, Table, Text

from hrsync.store.types import UTCDateTime

metadata = MetaData()

# HR key -> reference_id. Rows are never deleted: a retired id stays taken.
team_identities = Table(
    "team_identities",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("hr_key", String(300), unique=True, nullable=False),
    Column("reference_id", String(200), unique=True, nullable=False),
    Column("name", Text, nullable=False),
    Column("parent_key", String(300)),
    Column("lead_email", String(320)),
    Column("members_json", Text, nullable=False, default="[]"),
    Column("member_digest", String(64), nullable=False),
    Column("first_seen", UTCDateTime(), nullable=False),
    Column("last_seen", UTCDateTime(), nullable=False),
    Column("retired_at", UTCDateTime()),
)

runs = Table(
    "runs",
    metadata,
    Column("id", String(40), primary_key=True),
    Column("trigger", String(20), nullable=False),
    Column("started_at", UTCDateTime(), nullable=False),
    Column("finished_at", UTCDateTime()),
    Column("outcome", String(20)),
    Column("exit_code", Integer),
    Column("counts_json", Text),
    Column("reason", Text),
    Column("plan_digest", String(64)),
    Column("people_count", Integer),
    Column("dry_run", Integer, nullable=False, default=0),
    # The command a person runs to resolve this run's outcome (a refusal's approval).
    Column("action", Text),
    # What deferred the run (`import_in_progress`, `snapshot_window`, …): the import
    # back-off counts these, rather than reading it back out of `reason`.
    Column("defer_kind", String(30)),
    # Teams whose lead DX did not know yet and who stood in, as sent (`hrsync status`).
    Column("substitutes_json", Text),
    # The id of the plan a guard refused, or that an approval or override flags let
    # through (`core.plan_ids`); NULL when no guard tripped.
    Column("plan_id", String(16)),
    # Each `[[source.join]]`'s rows and matches, as JSON, when the run read them and they
    # may serve as the join guard's baseline (NULL: none, or not trusted).
    Column("join_counts_json", Text),
    # With `[[source.union]]`: each source's rows and people, as JSON, likewise the
    # per-source shrink guard's baseline (NULL: no union, or not trusted).
    Column("source_counts_json", Text),
    Index("ix_runs_started_at", "started_at"),
)

# A hierarchy sent (or about to be sent) to DX. Written before the HTTP call so a crash
# leaves evidence to verify, not guess.
submissions = Table(
    "submissions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("method", String(60), nullable=False),
    Column("payload_digest", String(64), nullable=False),
    Column("payload_json", Text, nullable=False),
    Column("plan_json", Text, nullable=False, default="{}"),
    Column("people_count", Integer, nullable=False, default=0),
    Column("status", String(20), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("sent_at", UTCDateTime()),
    Column("accepted_at", UTCDateTime()),
    Column("verified_at", UTCDateTime()),
    Column("import_id", String(200)),
    Column("detail", Text),
    # Per reference_id, DX's manager_id and last_changed_at once it showed this
    # submission: later differences are hand edits (drift).
    Column("dx_seen_json", Text),
    Index("ix_submissions_status", "status"),
)

deferrals = Table(
    "deferrals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("run_id", ForeignKey("runs.id", ondelete="SET NULL")),
    Column("reason", Text, nullable=False),
    Column("resume_at", UTCDateTime(), nullable=False),
    Column("created_at", UTCDateTime(), nullable=False),
    Column("resolved_at", UTCDateTime()),
)

# One sync at a time, across processes sharing the store.
leases = Table(
    "leases",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("holder", String(200), nullable=False),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    # When that pid started (Linux: ticks since boot), so a reused pid, as in every
    # restarted container, is not taken for the holder still running.
    Column("pid_started", String(40)),
    Column("acquired_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
)

heartbeats = Table(
    "heartbeats",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("beat_at", UTCDateTime(), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("host", String(200), nullable=False),
    Column("state", String(40), nullable=False),
    Column("quarantined_since", UTCDateTime()),
    Column("consecutive_failures", Integer, nullable=False, default=0),
    Column("detail", Text),
)

# A user attribute value DX confirmed (`users.attributes.update`), per person.
attribute_values = Table(
    "attribute_values",
    metadata,
    Column("email", String(320), primary_key=True),
    Column("name", String(300), primary_key=True),
    Column("value", Text, nullable=False),
    Column("confirmed_at", UTCDateTime(), nullable=False),
)

# A person's last failed attribute call: retried when their values change, or later.
attribute_failures = Table(
    "attribute_failures",
    metadata,
    Column("email", String(320), primary_key=True),
    Column("error", Text, nullable=False),
    Column("failed_at", UTCDateTime(), nullable=False),
    # sha256 of the desired values that failed (hrsync.core.attributes.values_digest).
    Column("values_digest", String(64), nullable=False),
)

# The daemon's last notification sent: one POST per change of state survives restarts.
notify_state = Table(
    "notify_state",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("state", String(20), nullable=False),
    # Which plan (or reason) the state was about: a new one notifies again.
    Column("digest", String(64), nullable=False),
    Column("notified_at", UTCDateTime(), nullable=False),
    Column("run_id", String(40)),
)

# Each person in the last hierarchy DX verifiably took (or found in sync), by the e-mail
# DX took, and whether DX counts them as a user. A held person keeps the place DX had for
# them, found here by employee id; a person DX does not count holds up no verification.
dx_people = Table(
    "dx_people",
    metadata,
    Column("email", String(320), primary_key=True),
    Column("employee_id", String(300)),
    Column("first_sent_at", UTCDateTime(), nullable=False),
    # 1: DX counts them; 0: DX ignored the e-mail (not a DX user yet); NULL: not known.
    Column("counted", Integer),
    Column("evidence", Text),  # how `counted` was learned, in words
    Column("counted_at", UTCDateTime()),  # when `counted` last changed
    Index("ix_dx_people_employee_id", "employee_id"),
)

# People whose own row has a problem, held where DX had them; `since` says how long.
held_people = Table(
    "held_people",
    metadata,
    # Their employee id, else their e-mail, else their row's location: what names them.
    Column("person", String(320), primary_key=True),
    Column("since", UTCDateTime(), nullable=False),
    Column("location", Text, nullable=False),
    Column("detail", Text, nullable=False),
    # Their name as their row gives it ("" when it gives none): how status and the
    # webhook name them, since an HR system's id (a GUID in Entra) means little to a reader.
    Column("name", Text, nullable=False, default="", server_default=""),
    # What the webhook last told of them: "" nothing yet, "held" that they are held. A
    # person told held whose row is fixed stays, `cleared_at` set, until that is told.
    Column("notified", String(10), nullable=False, default=""),
    Column("cleared_at", UTCDateTime()),
)

# Managers who left (filtered out of the export) while people still name them, by their
# team's key: the team kept with a stand-in lead (`stand_in` "": nobody up the chain is
# kept) since `since`. What the webhook last told: "" nothing, "late" that HR has not
# re-pointed the people after `defaults.LEAD_LEFT_ALERT_DAYS`; a team told late whose
# people are re-pointed stays, `cleared_at` set, until that is told too.
leads_left = Table(
    "leads_left",
    metadata,
    Column("team_key", String(320), primary_key=True),
    Column("team", Text, nullable=False),
    Column("lead", String(300), nullable=False),
    Column("lead_name", Text, nullable=False),
    Column("stand_in", Text, nullable=False),
    Column("people", Integer, nullable=False),
    Column("since", UTCDateTime(), nullable=False),
    Column("notified", String(10), nullable=False, default=""),
    Column("cleared_at", UTCDateTime()),
)

# The next DX snapshot that has not started, as the last run that read snapshots.list saw
# it (one row, name "next"; snapshot_id NULL: none scheduled).
next_snapshot = Table(
    "next_snapshot",
    metadata,
    Column("name", String(40), primary_key=True),
    Column("snapshot_id", String(200)),
    Column("scheduled_for", UTCDateTime()),
    Column("read_at", UTCDateTime(), nullable=False),
    Column("run_id", String(40)),
)

# Plans a guard refused, by plan id (a digest of what would be sent and the guards it
# trips): what a person approves, previews, and what the daemon compares a new plan to.
refused_plans = Table(
    "refused_plans",
    metadata,
    Column("plan_id", String(16), primary_key=True),
    Column("run_id", String(40)),  # the first run that refused it
    Column("created_at", UTCDateTime(), nullable=False),
    Column("last_refused_at", UTCDateTime(), nullable=False),
    Column("payload_digest", String(64), nullable=False),
    Column("guards_json", Text, nullable=False),
    Column("summary_json", Text, nullable=False),  # what trips the guards, for the diff
    Column("payload_json", Text, nullable=False),  # exactly what would be sent
    Column("preview_url", Text),
    Column("preview_created_at", UTCDateTime()),
)

# A person's approval of one refused plan: applied by the first run whose plan has the
# same id, before `expires_at`.
approvals = Table(
    "approvals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("plan_id", String(16), nullable=False),
    Column("approved_by", String(200), nullable=False),
    Column("note", Text),
    Column("approved_at", UTCDateTime(), nullable=False),
    Column("expires_at", UTCDateTime(), nullable=False),
    Column("applied_run_id", String(40)),
    Column("applied_at", UTCDateTime()),
    # "approve": `hrsync approve`; "sync": a manual `sync --allow-…` run, kept for the audit.
    Column("via", String(20), nullable=False, server_default="approve"),
    Index("ix_approvals_plan_id", "plan_id"),
)
