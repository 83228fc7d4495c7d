"""The companion conversation kept in the store (spec 00 "chat"; ChatItems as the page shows them).

The page names its conversation in the URL (`?companion=<id>`) and saves its items after every change: the
person's message before the model is called, the reply when it is shown. A reload, a restart or another
replica loads the items again, so the intro is not shown twice and the recent turns reach the model
(build_chat_messages takes them from the items' history).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from core.flows.chat_item import ChatItem
from core.store.memory.conversations import ConversationRepository
from core.store.memory.repository import MemoryRepository


def _conversations(repo: MemoryRepository) -> ConversationRepository:
    return ConversationRepository(repo.engine, repo.clock, owner_id=repo.owner_id)


def load_conversation(repo: MemoryRepository, conversation_id: str) -> list[ChatItem]:
    """The stored items of one of the person's conversations, in order ([] for an unknown or another
    person's id)."""
    return cast(list[ChatItem], _conversations(repo).load_items(conversation_id))


def save_conversation(repo: MemoryRepository, conversation_id: str, items: Sequence[ChatItem]) -> int:
    """Store the conversation as `items` (only what changed is written); returns the rows written."""
    return _conversations(repo).save_items(conversation_id, items)
