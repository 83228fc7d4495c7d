"""What is in the vector index, in the database: memory_units.indexed_at, knowledge_entries.indexed_version.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26

Vectors are written after their rows commit; a process killed in between (or a Chroma server that was down)
left rows without vectors until someone opened the page whose first visit reconciles the index. Now each row
says whether its vector was written: a unit's `indexed_at` (NULL until its vector write succeeds, and again
NULL while a re-index is pending), an entry's `indexed_version` (the version whose vector was written). The
job sweep finds rows older than the reconcile grace period that are not indexed, and queues a job that
indexes them (core.flows.memory.index_job, core.flows.knowledge.index_job) on any replica or worker process.

Rows stored before are NULL: the first sweep queues one check per person with memories (and one for the
knowledge base); the check compares them with the vector store and re-embeds only what is missing or stale.
`ix_memory_units_unindexed` (partial: `WHERE indexed_at IS NULL`) keeps the sweep's query off the indexed rows.

Idempotent: the columns and the index are created when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
UNINDEXED = "ix_memory_units_unindexed"


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    if "indexed_at" not in {c["name"] for c in inspector.get_columns("memory_units")}:
        op.add_column("memory_units", sa.Column("indexed_at", EPOCH, nullable=True))
    if "indexed_version" not in {c["name"] for c in inspector.get_columns("knowledge_entries")}:
        op.add_column("knowledge_entries", sa.Column("indexed_version", sa.Integer(), nullable=True))
    if UNINDEXED not in {i["name"] for i in inspector.get_indexes("memory_units")}:
        unindexed = sa.text("indexed_at IS NULL")
        op.create_index(
            UNINDEXED,
            "memory_units",
            ["owner_id", "updated_at"],
            sqlite_where=unindexed,
            postgresql_where=unindexed,
        )


def downgrade() -> None:
    op.drop_index(UNINDEXED, table_name="memory_units")
