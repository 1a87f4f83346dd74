"""a held person's name as their row gives it: status and the webhook name them as people
know them, not by an HR system's id alone

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("held_people") as batch:
        batch.add_column(sa.Column("name", sa.Text(), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("held_people") as batch:
        batch.drop_column("name")
