"""Archiving on the knowledge side: knowledge base entries and interviews can be archived.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-22

- knowledge_entries: `archived_at` (UTC epoch, NULL = active), `archived_by` (the name) and `archived_by_id`
  (the person's id) of who archived it. An archived entry is hidden from lists, searches and the similar-entry
  lookup; its row and versions stay (audit).
- knowledge_interviews: `archived_at` and `archived_by` (the owner's id). Hidden from the person's list; the
  turns stay.

Idempotent: a column that exists is left as it is. Existing rows stay active (NULL).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ID = sa.String(255)  # core.people.MAX_ID_CHARS
EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
COLUMNS = {
    "knowledge_entries": (("archived_at", EPOCH), ("archived_by", sa.String()), ("archived_by_id", ID)),
    "knowledge_interviews": (("archived_at", EPOCH), ("archived_by", ID)),
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table, columns in COLUMNS.items():
        present = {c["name"] for c in inspector.get_columns(table)}
        for name, type_ in columns:
            if name not in present:
                op.add_column(table, sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    raise NotImplementedError("archive columns are not removed; restore a backup instead")
