"""The model calls of background jobs, under their person: job_calls.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-26

A job run by a worker (the team's job engine, a `python -m core.jobs` process, or owed work the sweep found)
had no debug sink: its model calls (memory extraction, summaries) reached nobody's debug log. Now each call's
redacted debug event is a row under the person the job works for (core.store.job_calls), and the debug page
adds them to that person's log.

Idempotent: the table is created when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

TABLE = "job_calls"
ID = sa.String(255)  # core.people.MAX_ID_CHARS


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table(TABLE):
        return
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("owner_id", ID, nullable=False),
        sa.Column("job_id", sa.String(64), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("event", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_job_calls_owner", TABLE, ["owner_id", "id"])


def downgrade() -> None:
    op.drop_table(TABLE)
