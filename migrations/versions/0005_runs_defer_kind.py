"""what deferred a run, as data (the import back-off counted from it, not from a reason);
the leads that stood in for leads DX does not know yet

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("defer_kind", sa.String(length=30), nullable=True))
        batch_op.add_column(sa.Column("substitutes_json", sa.Text(), nullable=True))
    # Runs deferred by a running import before this column: the words they were recorded
    # with, so a daemon upgraded during a long import keeps its back-off where it was.
    op.execute(
        "UPDATE runs SET defer_kind = 'import_in_progress' WHERE outcome = 'deferred' "
        "AND reason LIKE 'DX says a team hierarchy import is running%'"
    )


def downgrade() -> None:
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("substitutes_json")
        batch_op.drop_column("defer_kind")
