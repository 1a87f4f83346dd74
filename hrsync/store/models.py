"""SQLAlchemy models of the state store.

Migrations in ``migrations/versions`` must describe exactly these tables;
tests/store/test_migrations.py fails when they drift apart.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from hrsync.store.types import UTCDateTime


class Base(DeclarativeBase):
    pass


class TeamIdentity(Base):
    """HR key -> reference_id. Rows are never deleted: a retired id stays taken."""

    __tablename__ = "team_identities"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    hr_key: Mapped[str] = mapped_column(String(300), unique=True)
    reference_id: Mapped[str] = mapped_column(String(200), unique=True)
    name: Mapped[str] = mapped_column(Text)
    parent_key: Mapped[str | None] = mapped_column(String(300))
    lead_email: Mapped[str | None] = mapped_column(String(320))
    members_json: Mapped[str] = mapped_column(Text, default="[]")
    member_digest: Mapped[str] = mapped_column(String(64))
    first_seen: Mapped[datetime] = mapped_column(UTCDateTime())
    last_seen: Mapped[datetime] = mapped_column(UTCDateTime())
    retired_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    trigger: Mapped[str] = mapped_column(String(20))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    outcome: Mapped[str | None] = mapped_column(String(20))
    exit_code: Mapped[int | None] = mapped_column(Integer)
    counts_json: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str | None] = mapped_column(Text)
    plan_digest: Mapped[str | None] = mapped_column(String(64))
    people_count: Mapped[int | None] = mapped_column(Integer)
    dry_run: Mapped[int] = mapped_column(Integer, default=0)
    # The command a person runs to resolve this run's outcome (a refusal's approval).
    action: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_runs_started_at", "started_at"),)


class Submission(Base):
    """A hierarchy sent (or about to be sent) to DX.

    Written before the HTTP call so a crash leaves evidence to verify, not guess.
    """

    __tablename__ = "submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    method: Mapped[str] = mapped_column(String(60))
    payload_digest: Mapped[str] = mapped_column(String(64))
    payload_json: Mapped[str] = mapped_column(Text)
    plan_json: Mapped[str] = mapped_column(Text, default="{}")
    people_count: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    accepted_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    verified_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    import_id: Mapped[str | None] = mapped_column(String(200))
    detail: Mapped[str | None] = mapped_column(Text)
    # Per reference_id, DX's manager_id and last_changed_at once it showed this
    # submission: later differences are hand edits (drift).
    dx_seen_json: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_submissions_status", "status"),)


class Deferral(Base):
    __tablename__ = "deferrals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id", ondelete="SET NULL"))
    reason: Mapped[str] = mapped_column(Text)
    resume_at: Mapped[datetime] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    resolved_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class Lease(Base):
    """One sync at a time, across processes sharing the store."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    holder: Mapped[str] = mapped_column(String(200))
    host: Mapped[str] = mapped_column(String(200))
    pid: Mapped[int] = mapped_column(Integer)
    # When that pid started (Linux: ticks since boot), so a reused pid, as in every
    # restarted container, is not taken for the holder still running.
    pid_started: Mapped[str | None] = mapped_column(String(40))
    acquired_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Heartbeat(Base):
    __tablename__ = "heartbeats"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    beat_at: Mapped[datetime] = mapped_column(UTCDateTime())
    pid: Mapped[int] = mapped_column(Integer)
    host: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(40))
    quarantined_since: Mapped[datetime | None] = mapped_column(UTCDateTime())
    consecutive_failures: Mapped[int] = mapped_column(Integer, default=0)
    detail: Mapped[str | None] = mapped_column(Text)


class AttributeValue(Base):
    """A user attribute value DX confirmed (`users.attributes.update`), per person."""

    __tablename__ = "attribute_values"

    email: Mapped[str] = mapped_column(String(320), primary_key=True)
    name: Mapped[str] = mapped_column(String(300), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    confirmed_at: Mapped[datetime] = mapped_column(UTCDateTime())


class AttributeFailure(Base):
    """A person's last failed attribute call: retried when their values change, or later."""

    __tablename__ = "attribute_failures"

    email: Mapped[str] = mapped_column(String(320), primary_key=True)
    error: Mapped[str] = mapped_column(Text)
    failed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # sha256 of the desired values that failed (hrsync.core.attributes.values_digest).
    values_digest: Mapped[str] = mapped_column(String(64))


class NotifyState(Base):
    """The daemon's last notification sent: one POST per change of state survives restarts."""

    __tablename__ = "notify_state"

    name: Mapped[str] = mapped_column(String(40), primary_key=True)
    state: Mapped[str] = mapped_column(String(20))
    # Which plan (or reason) the state was about: a new one notifies again.
    digest: Mapped[str] = mapped_column(String(64))
    notified_at: Mapped[datetime] = mapped_column(UTCDateTime())
    run_id: Mapped[str | None] = mapped_column(String(40))
