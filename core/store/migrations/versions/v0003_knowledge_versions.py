"""Knowledge base: version numbers unique per entry, and a search key column.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

Concurrent saves under the old code could give two versions of an entry the same number. The
versions of each entry are renumbered 1..n in the order they were written (number, then row id; no row is
removed), the entry's `version` set to n, and a unique index makes the database refuse a duplicate from now
on. `search_text` held the NFKC, lower-case text of the six fields (the key the search matched then; v0005
replaces it by knowledge_entry_keys).
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

FIELDS = (
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)
entries = sa.table("knowledge_entries", sa.column("id"), sa.column("version"), sa.column("search_text"))
entries_fields = sa.table("knowledge_entries", sa.column("id"), *(sa.column(f) for f in FIELDS))
versions = sa.table("knowledge_entry_versions", sa.column("id"), sa.column("entry_id"), sa.column("version"))


def _renumber(conn: sa.Connection) -> None:
    duplicated = conn.execute(
        sa.select(versions.c.entry_id)
        .group_by(versions.c.entry_id, versions.c.version)
        .having(sa.func.count() > 1)
        .distinct()
    ).scalars()
    for entry_id in list(duplicated):
        rows = conn.execute(
            sa.select(versions.c.id)
            .where(versions.c.entry_id == entry_id)
            .order_by(versions.c.version, versions.c.id)
        ).scalars()
        ids = list(rows)
        for number, row_id in enumerate(ids, start=1):
            conn.execute(versions.update().where(versions.c.id == row_id).values(version=number))
        conn.execute(entries.update().where(entries.c.id == entry_id).values(version=len(ids)))


def lexical_key(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def search_key(row: sa.Row[tuple[object, ...]]) -> str:
    return "\n".join(lexical_key(str(getattr(row, name) or "")) for name in FIELDS)


def upgrade() -> None:
    conn = op.get_bind()
    _renumber(conn)
    op.create_index(
        "uq_knowledge_entry_version", "knowledge_entry_versions", ["entry_id", "version"], unique=True
    )
    with op.batch_alter_table("knowledge_entries") as batch:
        batch.add_column(sa.Column("search_text", sa.Text, nullable=False, server_default=""))
    keys: dict[int, str] = defaultdict(str)
    for row in conn.execute(sa.select(entries_fields)):
        keys[int(row.id)] = search_key(row)
    for entry_id, key in keys.items():
        conn.execute(entries.update().where(entries.c.id == entry_id).values(search_text=key))


def downgrade() -> None:
    with op.batch_alter_table("knowledge_entries") as batch:
        batch.drop_column("search_text")
    op.drop_index("uq_knowledge_entry_version", "knowledge_entry_versions")
