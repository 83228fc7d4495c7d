"""What the memory flow works on, opened from the shell's shared engine and Chroma client: the repository
(SQLite tables, FTS5) and the Chroma collection of the units. Pages get both here, never from core.store."""

from __future__ import annotations

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from sqlalchemy import Engine

from core.clock import Clock, utc_now
from core.flows.memory.constants import VECTOR_COLLECTION
from core.store.memory_repository import MemoryRepository
from core.vectors import get_collection


def memory_repository(engine: Engine, clock: Clock = utc_now) -> MemoryRepository:
    """The memory repository on the shared engine (times from `clock`, UTC epoch seconds)."""
    return MemoryRepository(engine, clock)


def memory_collection(client: ClientAPI) -> Collection:
    """The Chroma collection of memory units (offline n-gram embedding, cosine space)."""
    return get_collection(client, VECTOR_COLLECTION)
