"""PostgreSQL: the memory keyword lanes' documents, and pg_trgm indexes for substring search.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

SQLite has FTS5 tables for the memory lanes (v0001); PostgreSQL gets `memory_lex_docs`, one row of text per
(lane, unit), searched by core/store/memory/lanes_pg.py. When the pg_trgm extension can be created (it ships
with PostgreSQL's contrib and is trusted, so a database owner may create it), GIN trigram indexes serve the
LIKE searches of the memory lanes and the knowledge base; without it the same queries scan (same results).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import DBAPIError

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TRGM_INDEXES = {
    "ix_memory_lex_docs_body_trgm": ("memory_lex_docs", "body"),
    "ix_knowledge_entries_search_trgm": ("knowledge_entries", "search_text"),
}


def _pg_trgm(conn: sa.Connection) -> bool:
    try:
        with conn.begin_nested():  # a failure must not abort the migration's transaction
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except DBAPIError:
        return False
    return True


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    op.create_table(
        "memory_lex_docs",
        sa.Column("lane", sa.String(16), primary_key=True),
        sa.Column("unit_id", sa.Integer, primary_key=True),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("n_tokens", sa.Integer, nullable=False),
    )
    op.create_index("ix_memory_lex_docs_unit", "memory_lex_docs", ["unit_id"])
    # count(*) and sum(n_tokens) per lane (BM25's statistics, every search) from the index alone
    op.create_index("ix_memory_lex_docs_lane_tokens", "memory_lex_docs", ["lane", "n_tokens"])
    if _pg_trgm(conn):
        for name, (table, column) in TRGM_INDEXES.items():
            op.execute(f"CREATE INDEX {name} ON {table} USING gin ({column} gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP INDEX IF EXISTS ix_knowledge_entries_search_trgm")
    op.drop_table("memory_lex_docs")
