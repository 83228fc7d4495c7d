"""Feedback on assistant replies: the turn_feedback table.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-22

One row per person and rated reply: (owner_id, flow, conversation_id, turn) is unique; score 0 (👎) or
1 (👍), an optional comment, created_at / updated_at in UTC epoch seconds (core/store/feedback.py).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

ID = sa.String(255)  # core.people.MAX_ID_CHARS
EPOCH = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("turn_feedback"):
        return
    op.create_table(
        "turn_feedback",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner_id", ID, nullable=False),
        sa.Column("flow", sa.String(32), nullable=False),
        sa.Column("conversation_id", sa.String(255), nullable=False),
        sa.Column("turn", sa.Integer, nullable=False),
        sa.Column("score", sa.SmallInteger, nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("created_at", EPOCH, nullable=False),
        sa.Column("updated_at", EPOCH, nullable=False),
        sa.UniqueConstraint("owner_id", "flow", "conversation_id", "turn", name="uq_turn_feedback_turn"),
    )


def downgrade() -> None:
    op.drop_table("turn_feedback")
