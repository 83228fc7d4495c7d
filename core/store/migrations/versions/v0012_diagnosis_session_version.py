"""Diagnosis sessions carry a version: a save changes the row only if it is still at the version it read.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25

Two replicas serving one session each held a copy in memory, and saving was delete-then-insert: the later
save silently dropped the other replica's turn. Now `diagnosis_sessions.version` starts at 1 and every save
is `UPDATE … WHERE version = <the one read>` (core.store.diagnosis). Stored rows get version 1.

Idempotent: the column is added when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

TABLE = "diagnosis_sessions"


def upgrade() -> None:
    if any(c["name"] == "version" for c in sa.inspect(op.get_bind()).get_columns(TABLE)):
        return
    op.add_column(TABLE, sa.Column("version", sa.Integer(), nullable=False, server_default="1"))
    if op.get_bind().dialect.name != "sqlite":  # SQLite cannot drop a default without copying the table
        op.alter_column(TABLE, "version", server_default=None)


def downgrade() -> None:
    with op.batch_alter_table(TABLE) as batch_op:
        batch_op.drop_column("version")
