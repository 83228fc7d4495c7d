"""The knowledge flow's two repositories on one engine, and one error type for a store that failed.

Pages get repositories from here (they never import core.store) and catch `KnowledgeStoreError`
(they never import SQLAlchemy) to show a Japanese notice instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from core.clock import Clock, utc_now
from core.people import Person
from core.store.knowledge import KnowledgeRepository
from core.store.knowledge_base import KnowledgeBaseRepository


@dataclass(frozen=True)
class KnowledgeStores:
    """One person's interviews and turns (`interviews`), the team's knowledge base entries and versions
    (`base`), and the person they are opened for (the author of what they save)."""

    interviews: KnowledgeRepository
    base: KnowledgeBaseRepository
    person: Person


def knowledge_stores(engine: Engine, person: Person, clock: Clock = utc_now) -> KnowledgeStores:
    """Both repositories of the knowledge flow over `engine`, on one clock, for `person` (issue #14: their
    own interviews, the shared knowledge base)."""
    return KnowledgeStores(
        KnowledgeRepository(engine, clock, owner_id=person.id), KnowledgeBaseRepository(engine, clock), person
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
