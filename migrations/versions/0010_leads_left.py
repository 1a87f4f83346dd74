"""managers who left while people still name them: their teams, kept with a stand-in
lead, and since when (the late notice waits `sync.lead_left_alert_days`)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "leads_left",
        sa.Column("team_key", sa.String(length=320), nullable=False),
        sa.Column("team", sa.Text(), nullable=False),
        sa.Column("lead", sa.String(length=300), nullable=False),
        sa.Column("lead_name", sa.Text(), nullable=False),
        sa.Column("stand_in", sa.Text(), nullable=False),
        sa.Column("people", sa.Integer(), nullable=False),
        sa.Column("since", sa.DateTime(), nullable=False),
        sa.Column("notified", sa.String(length=10), nullable=False),
        sa.Column("cleared_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("team_key"),
    )


def downgrade() -> None:
    op.drop_table("leads_left")
