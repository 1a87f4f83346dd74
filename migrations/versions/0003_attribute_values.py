"""user attributes DX confirmed, and per-person attribute failures

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "attribute_values",
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("email", "name"),
    )
    op.create_table(
        "attribute_failures",
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.Column("failed_at", sa.DateTime(), nullable=False),
        sa.Column("values_digest", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("email"),
    )


def downgrade() -> None:
    op.drop_table("attribute_failures")
    op.drop_table("attribute_values")
