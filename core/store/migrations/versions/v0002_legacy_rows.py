"""Rows written by older code: text timestamps become UTC epoch seconds; the pre-Alembic version table goes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

What the per-module `upgrade(conn)` hooks of the create_all era did at every start, now once: review chat
tables declared with text timestamps are rebuilt, text values converted, diagnosis bookings' local
DateTime text converted (core/store/review/upgrade.py; idempotent, SQLite only: no other engine ever held
such rows). `schema_version` (replaced by alembic_version) is dropped.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from core.store.review import upgrade as review_upgrade

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    review_upgrade.upgrade(op.get_bind())
    if sa.inspect(op.get_bind()).has_table("schema_version"):
        op.drop_table("schema_version")


def downgrade() -> None:
    raise NotImplementedError("old encodings are not restored; restore a backup instead")
