"""people as DX last verifiably took them (and whether DX counts them); people held for a
problem with their own row

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "dx_people",
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("employee_id", sa.String(length=300), nullable=True),
        sa.Column("first_sent_at", sa.DateTime(), nullable=False),
        sa.Column("counted", sa.Integer(), nullable=True),
        sa.Column("evidence", sa.Text(), nullable=True),
        sa.Column("counted_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("email"),
    )
    op.create_index("ix_dx_people_employee_id", "dx_people", ["employee_id"])
    op.create_table(
        "held_people",
        sa.Column("person", sa.String(length=320), nullable=False),
        sa.Column("since", sa.DateTime(), nullable=False),
        sa.Column("location", sa.Text(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("notified", sa.String(length=10), nullable=False),
        sa.Column("cleared_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("person"),
    )


def downgrade() -> None:
    op.drop_table("held_people")
    op.drop_index("ix_dx_people_employee_id", table_name="dx_people")
    op.drop_table("dx_people")
