"""The companion's conversations: the chat items of one conversation, in order, as the page shows them.

Episodes (memory_units) are what the companion remembers and can be edited or forgotten; a conversation is
what was said on the page, kept so a reload or a restart (on any replica) shows it again and sends its recent
turns to the model. Each row is one chat item (core.flows.chat_item.ChatItem) as JSON at its position; a
message is stored before the model is called, so one whose reply was interrupted is there after a restart.
Rows belong to the person who wrote them (`owner_id`): another person's conversation id reads as empty.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Column, Integer, String, Table, Text, UniqueConstraint, and_, delete, select, update

from core.store.base import EpochSeconds, OwnedRepository
from core.store.db import metadata
from core.store.owners import owned_by, owner_column

chat_items = Table(
    "memory_chat_items",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("conversation_id", String(64), nullable=False),
    Column("position", Integer, nullable=False),  # 0-based index in the conversation
    Column("item", Text, nullable=False),  # JSON of the ChatItem
    Column("updated_at", EpochSeconds, nullable=False),
    owner_column(index=False),
    UniqueConstraint("owner_id", "conversation_id", "position", name="uq_memory_chat_items_position"),
)


def _dump(item: Mapping[str, Any]) -> str:
    return json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)


class ConversationRepository(OwnedRepository):
    """One person's companion conversations: `ConversationRepository(engine, clock, owner_id=...)`."""

    def _mine(self, conversation_id: str) -> Any:
        return and_(chat_items.c.conversation_id == conversation_id, owned_by(chat_items, self.owner_id))

    def load_items(self, conversation_id: str) -> list[dict[str, Any]]:
        """The items of one of this person's conversations in order ([] when unknown or another person's)."""
        query = select(chat_items.c.item).where(self._mine(conversation_id)).order_by(chat_items.c.position)
        with self.engine.connect() as conn:
            return [json.loads(row[0]) for row in conn.execute(query)]

    def save_items(self, conversation_id: str, items: Sequence[Mapping[str, Any]]) -> int:
        """Make the stored conversation exactly `items`: changed positions are updated, new ones inserted,
        ones past the end deleted, in one transaction; returns how many rows changed (0: already stored)."""
        bodies = [_dump(item) for item in items]
        now = self.now()
        changed = 0
        with self.engine.begin() as conn:
            stored = dict(
                conn.execute(
                    select(chat_items.c.position, chat_items.c.item).where(self._mine(conversation_id))
                ).all()
            )
            for position, body in enumerate(bodies):
                if position not in stored:
                    conn.execute(
                        chat_items.insert().values(
                            conversation_id=conversation_id,
                            position=position,
                            item=body,
                            updated_at=now,
                            owner_id=self.owner_id,
                        )
                    )
                elif stored[position] != body:
                    conn.execute(
                        update(chat_items)
                        .where(self._mine(conversation_id), chat_items.c.position == position)
                        .values(item=body, updated_at=now)
                    )
                else:
                    continue
                changed += 1
            extra = [p for p in stored if p >= len(bodies)]
            if extra:
                conn.execute(
                    delete(chat_items).where(self._mine(conversation_id), chat_items.c.position.in_(extra))
                )
                changed += len(extra)
        return changed
