"""The knowledge flow's two repositories on one engine, and one error type for a store that failed.

Pages get repositories from here (they never import core.store) and catch `KnowledgeStoreError`
(they never import SQLAlchemy) to show a Japanese notice instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from core.clock import Clock, utc_now
from core.flows.knowledge.index import KnowledgeIndex, knowledge_index
from core.people import Person
from core.search.embedders import Embedder
from core.store.knowledge.entries import KnowledgeBaseRepository
from core.store.knowledge.interviews import KnowledgeRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api import ClientAPI


@dataclass(frozen=True)
class KnowledgeStores:
    """One person's interviews and turns (`interviews`), the team's knowledge base entries and versions
    (`base`), the person they are opened for (the author of what they save), and the knowledge base's vector
    index (`index`; None when opened without Chroma)."""

    interviews: KnowledgeRepository
    base: KnowledgeBaseRepository
    person: Person
    index: KnowledgeIndex | None = None


def knowledge_stores(
    engine: Engine,
    person: Person,
    clock: Clock = utc_now,
    chroma: ClientAPI | None = None,
    embedder: Embedder | None = None,
) -> KnowledgeStores:
    """Both repositories of the knowledge flow over `engine`, on one clock, for `person` (their
    own interviews, the shared knowledge base), with the knowledge base's vector index on `chroma` when given."""
    base = KnowledgeBaseRepository(engine, clock)
    return KnowledgeStores(
        KnowledgeRepository(engine, clock, owner_id=person.id),
        base,
        person,
        knowledge_index(base, chroma, embedder) if chroma is not None else None,
    )


class KnowledgeStoreError(RuntimeError):
    """The database could not be read or written (locked, full, unreachable)."""


@contextmanager
def store_errors() -> Iterator[None]:
    """Turn a database failure into KnowledgeStoreError (what pages catch)."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise KnowledgeStoreError(str(exc)) from exc
