"""The companion's conversations: memory_chat_items keeps each chat item of a conversation at its position.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25

The memory page kept its chat in the browser session only: a reload or a restart showed the intro again and
sent the model no recent history. Now every item is stored (core.store.memory.conversations), the
conversation's id is in the page's URL (`?companion=<id>`), and a reload shows it again.

Idempotent: the table is created when missing.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

TABLE = "memory_chat_items"
EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
ID = sa.String(255)  # core.people.MAX_ID_CHARS


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table(TABLE):
        return
    op.create_table(
        TABLE,
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("conversation_id", sa.String(length=64), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("item", sa.Text(), nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.Column("owner_id", ID, nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("owner_id", "conversation_id", "position", name="uq_memory_chat_items_position"),
    )


def downgrade() -> None:
    op.drop_table(TABLE)
