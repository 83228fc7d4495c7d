"""Japanese search keys: the knowledge base's key table, the memory's lexical lane, on both engines.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22

- `knowledge_entry_keys` (per entry: core.text.textnorm.fold of the six fields, and " " + the Sudachi lexical
  document + " ") replaces `knowledge_entries.search_text` (v0003), which is dropped (SQLite drops the column
  in place: a batch copy would drop knowledge_entries under its versions' ON DELETE CASCADE). Entries without
  keys get them.
- The memory's lexical lane: on SQLite the FTS5 table memory_fts_lexical (unicode61, diacritics kept); on
  PostgreSQL rows of lane 'lexical' in memory_lex_docs (v0004). Units indexed without it get their keys.
- PostgreSQL with pg_trgm: GIN trigram indexes for the knowledge keys' LIKE searches.

The keys are computed by the app's one key function (core.text.japanese.lexical_document, through
core/store/knowledge/search.py and core/store/memory/keyword_lanes.py), as every later save computes them; a change of
that function needs a revision that recomputes them. Idempotent: only missing keys are written.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.exc import DBAPIError

from core.store.knowledge.search import backfill_keys
from core.store.memory import keyword_lanes as memory_fts

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

LEXICAL_FTS5 = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts_lexical "
    "USING fts5(body, tokenize='unicode61 remove_diacritics 0')"
)
TRGM_INDEXES = {
    "ix_knowledge_entry_keys_folded_trgm": ("knowledge_entry_keys", "folded"),
    "ix_knowledge_entry_keys_lexical_trgm": ("knowledge_entry_keys", "lexical"),
}


def _pg_trgm(conn: sa.Connection) -> bool:
    try:
        with conn.begin_nested():  # a failure must not abort the migration's transaction
            conn.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
    except DBAPIError:
        return False
    return True


def _knowledge_keys(conn: sa.Connection) -> None:
    if not sa.inspect(conn).has_table("knowledge_entry_keys"):
        op.create_table(
            "knowledge_entry_keys",
            sa.Column(
                "entry_id",
                sa.Integer,
                sa.ForeignKey("knowledge_entries.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("folded", sa.Text, nullable=False),
            sa.Column("lexical", sa.Text, nullable=False),
        )
    backfill_keys(conn)
    if any(c["name"] == "search_text" for c in sa.inspect(conn).get_columns("knowledge_entries")):
        if conn.dialect.name == "sqlite":
            op.execute("ALTER TABLE knowledge_entries DROP COLUMN search_text")
        else:
            op.execute("DROP INDEX IF EXISTS ix_knowledge_entries_search_trgm")
            op.drop_column("knowledge_entries", "search_text")


def upgrade() -> None:
    conn = op.get_bind()
    _knowledge_keys(conn)
    if conn.dialect.name == "sqlite":
        op.execute(LEXICAL_FTS5)
    memory_fts.backfill_lexical(conn)
    if conn.dialect.name == "postgresql" and _pg_trgm(conn):
        for name, (table, column) in TRGM_INDEXES.items():
            op.execute(f"CREATE INDEX IF NOT EXISTS {name} ON {table} USING gin ({column} gin_trgm_ops)")


def downgrade() -> None:
    raise NotImplementedError("search keys are not removed; restore a backup instead")
