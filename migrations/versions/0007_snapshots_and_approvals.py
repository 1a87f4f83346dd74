"""the next DX snapshot as last read; plans a guard refused, by plan id; approvals of them

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "next_snapshot",
        sa.Column("name", sa.String(length=40), nullable=False),
        sa.Column("snapshot_id", sa.String(length=200), nullable=True),
        sa.Column("scheduled_for", sa.DateTime(), nullable=True),
        sa.Column("read_at", sa.DateTime(), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=True),
        sa.PrimaryKeyConstraint("name"),
    )
    op.create_table(
        "refused_plans",
        sa.Column("plan_id", sa.String(length=16), nullable=False),
        sa.Column("run_id", sa.String(length=40), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("last_refused_at", sa.DateTime(), nullable=False),
        sa.Column("payload_digest", sa.String(length=64), nullable=False),
        sa.Column("guards_json", sa.Text(), nullable=False),
        sa.Column("summary_json", sa.Text(), nullable=False),
        sa.Column("payload_json", sa.Text(), nullable=False),
        sa.Column("preview_url", sa.Text(), nullable=True),
        sa.Column("preview_created_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("plan_id"),
    )
    op.create_table(
        "approvals",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("plan_id", sa.String(length=16), nullable=False),
        sa.Column("approved_by", sa.String(length=200), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("approved_at", sa.DateTime(), nullable=False),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
        sa.Column("applied_run_id", sa.String(length=40), nullable=True),
        sa.Column("applied_at", sa.DateTime(), nullable=True),
        sa.Column("via", sa.String(length=20), nullable=False, server_default="approve"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_approvals_plan_id", "approvals", ["plan_id"])
    # The plan id of a run's plan when a guard refused it, or when an approval or the
    # override flags let it through: `history` names it.
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("plan_id", sa.String(length=16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("plan_id")
    op.drop_index("ix_approvals_plan_id", table_name="approvals")
    op.drop_table("approvals")
    op.drop_table("refused_plans")
    op.drop_table("next_snapshot")
