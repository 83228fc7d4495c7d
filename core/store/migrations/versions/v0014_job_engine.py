"""Background jobs that survive a process: the job engine's tables (PostgreSQL), job messages, extraction claims.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-25

- PostgreSQL only: procrastinate's schema (`procrastinate_jobs`, `_events`, `_workers`, `_periodic_defers`,
  its enum types, functions and triggers), from the installed procrastinate's `schema.sql`. A later
  procrastinate release that changes its schema ships SQL migrations of its own; apply them with
  `procrastinate schema --migrate` style tooling or a new revision here. SQLite never gets these tables: the
  embedded default runs its jobs in process.
- `job_messages` (both engines): what a job told a person (Japanese result or failure), keyed by job id.
- `memory_units.extract_claim` / `extract_claimed_at`: the job that moved an episode's extraction from
  pending (or failed) to running, and when, so a second job claiming the same episode updates 0 rows and
  does nothing; a claim older than the stale limit may be taken over. Plain ADD COLUMNs (no table copy on
  SQLite: memory_units is referenced with ON DELETE CASCADE).

Idempotent: every object is created only when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _procrastinate_schema(conn: sa.Connection) -> None:
    from procrastinate.schema import SchemaManager  # noqa: PLC0415 - PostgreSQL only

    if sa.inspect(conn).has_table("procrastinate_jobs"):
        return
    # psycopg's own execute: the schema is many statements, with `%` and `:` that bind-parameter parsing
    # would misread; it runs in the migration's transaction
    conn.connection.driver_connection.execute(SchemaManager.get_schema())  # type: ignore[union-attr]


def upgrade() -> None:
    conn = op.get_bind()
    inspector = sa.inspect(conn)
    if conn.dialect.name == "postgresql":
        _procrastinate_schema(conn)
    if not inspector.has_table("job_messages"):
        op.create_table(
            "job_messages",
            sa.Column("job_id", sa.String(64), primary_key=True),
            sa.Column("job_key", sa.String(255), nullable=False),
            sa.Column("task", sa.String(64), nullable=False),
            sa.Column("status", sa.String(16), nullable=False),
            sa.Column("message", sa.Text, nullable=False),
            sa.Column("started_at", sa.Float, nullable=True),
            sa.Column("finished_at", sa.Float, nullable=True),
        )
        op.create_index("ix_job_messages_job_key", "job_messages", ["job_key"])
    columns = {c["name"] for c in inspector.get_columns("memory_units")}
    if "extract_claim" not in columns:
        op.add_column("memory_units", sa.Column("extract_claim", sa.String(64), nullable=True))
    if "extract_claimed_at" not in columns:
        op.add_column("memory_units", sa.Column("extract_claimed_at", EPOCH, nullable=True))


def downgrade() -> None:
    pass
