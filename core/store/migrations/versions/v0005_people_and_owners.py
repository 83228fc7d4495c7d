"""People and owners: the people table, `owner_id` on personal rows, per-person uniqueness, authors.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22

What main's per-module upgrade hooks did at every start, now once and on both engines:
- `people` (who signed in: id, name, email, last_seen_at);
- `owner_id` (String(255)) on knowledge_interviews, review_threads, diagnosis_bookings, memory_units,
  memory_retrieval_traces (indexed), memory_entities, memory_payload_loop and memory_payload_summary (not
  indexed: their unique constraints lead with it); existing rows belong to the local person ('local');
- review_reviews.owner_id nullable (NULL: the shared bundled sample; imported reviews become the local
  person's);
- unique per person: (owner_id, type_label, name), (owner_id, loop_text), (owner_id, scope_label, scope_key).
  PostgreSQL alters the constraints in place. SQLite cannot, and Alembic's batch copy would drop
  memory_entities under its children's ON DELETE CASCADE, so SQLite reuses core/store/memory/upgrade.py
  (main's rebuild: children copied and dropped first, every table recreated from its declaration with the
  same ids and rows): the one place a revision uses current table declarations;
- created_by_id / updated_by_id / edited_by_id on the knowledge base tables ('local' for older versions).

Idempotent: a database whose tables the create_all era of main already gave these columns
keeps them as they are. A NOT NULL owner column is added with the server default 'local' (which fills the
existing rows); PostgreSQL then drops the default, SQLite keeps it (it cannot drop a default in place;
repositories always write the owner).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.memory import upgrade as memory_upgrade

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

LOCAL = "local"  # core.people.LOCAL_PERSON_ID
ID = sa.String(255)  # core.people.MAX_ID_CHARS
EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
OWNED_INDEXED = (
    "knowledge_interviews",
    "review_threads",
    "diagnosis_bookings",
    "memory_units",
    "memory_retrieval_traces",
)
PER_OWNER_UNIQUE = {  # table -> (constraint name, columns after owner_id)
    "memory_entities": ("uq_memory_entity", ["type_label", "name"]),
    "memory_payload_loop": ("uq_memory_loop_text", ["loop_text"]),
    "memory_payload_summary": ("uq_memory_summary_scope", ["scope_label", "scope_key"]),
}
AUTHORS = (
    ("knowledge_entries", "created_by_id"),
    ("knowledge_entries", "updated_by_id"),
    ("knowledge_entry_versions", "edited_by_id"),
)


def _inspector() -> sa.Inspector:
    return sa.inspect(op.get_bind())


def _has_column(table: str, column: str) -> bool:
    return any(c["name"] == column for c in _inspector().get_columns(table))


def _index(table: str, column: str) -> None:
    name = f"ix_{table}_{column}"
    if name not in {i["name"] for i in _inspector().get_indexes(table)}:
        op.create_index(name, table, [column])


def _add_owner(table: str, *, index: bool) -> bool:
    """Add a NOT NULL owner_id whose existing rows are the local person's; True when it was added."""
    if _has_column(table, "owner_id"):
        return False
    op.add_column(table, sa.Column("owner_id", ID, nullable=False, server_default=LOCAL))
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column(table, "owner_id", server_default=None)
    if index:
        _index(table, "owner_id")
    return True


def _review_owner() -> None:
    if not _has_column("review_reviews", "owner_id"):
        op.add_column("review_reviews", sa.Column("owner_id", ID, nullable=True))
        reviews = sa.table("review_reviews", sa.column("owner_id"), sa.column("sample_key"))
        op.execute(reviews.update().where(reviews.c.sample_key.is_(None)).values(owner_id=LOCAL))
    _index("review_reviews", "owner_id")


def _per_owner_unique_pg() -> None:
    for table, (name, columns) in PER_OWNER_UNIQUE.items():
        if not _add_owner(table, index=False):
            continue
        for unique in _inspector().get_unique_constraints(table):
            old = unique["name"]
            if old is not None and (old == name or unique["column_names"] == columns):
                op.drop_constraint(old, table, type_="unique")
        op.create_unique_constraint(name, table, ["owner_id", *columns])


def upgrade() -> None:
    conn = op.get_bind()
    if not _inspector().has_table("people"):
        op.create_table(
            "people",
            sa.Column("id", ID, primary_key=True),
            sa.Column("name", sa.String, nullable=False),
            sa.Column("email", sa.String, nullable=False),
            sa.Column("last_seen_at", EPOCH, nullable=False),
        )
    for table in OWNED_INDEXED:
        _add_owner(table, index=True)
    _review_owner()
    if conn.dialect.name == "sqlite":
        memory_upgrade.upgrade(conn)  # rebuilds the per-owner tables once (no-op when they have owners)
    else:
        _per_owner_unique_pg()
    for table, column in AUTHORS:
        if not _has_column(table, column):
            op.add_column(table, sa.Column(column, ID, nullable=True))
            op.execute(sa.table(table, sa.column(column)).update().values({column: LOCAL}))


def downgrade() -> None:
    raise NotImplementedError("owners are not removed; restore a backup instead")
