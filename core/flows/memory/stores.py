"""What the memory flow works on, opened from the shell's shared engine and Chroma client: the repository
(SQLite tables, FTS5) and the Chroma collection of the units. Pages get both here, never from core.store.

One companion per person: both are the person's own. The repository filters every read and write
by the person's id. Vectors live in one Chroma collection per person rather than one shared collection with
an `owner_id` filter: a query of one person's collection cannot reach another person's memories even if a
filter were forgotten, Chroma's HNSW search needs no metadata pre-filter (which degrades recall when one
person's share of a large index is small), and forgetting a person is dropping a collection. The local
person keeps the collection that existed before there were people, so nothing has to be re-indexed.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from core.clock import Clock, utc_now
from core.flows.memory.constants import VECTOR_COLLECTION
from core.jobs.tasks import JobContext
from core.people import LOCAL_PERSON_ID, Person
from core.search.embedders import Embedder
from core.store.memory.repository import MemoryRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection


def memory_repository(engine: Engine, person: Person, clock: Clock = utc_now) -> MemoryRepository:
    """The person's memory repository on the shared engine (times from `clock`, UTC epoch seconds)."""
    return MemoryRepository(engine, clock, owner_id=person.id)


def collection_name(owner_id: str) -> str:
    """The Chroma collection of one person's memory units: `memory_units` for the local person (the one
    that existed before there were people), else `memory_units-<hash of the id>` (Chroma names allow only
    [a-zA-Z0-9._-]; ids are URLs and emails)."""
    if owner_id == LOCAL_PERSON_ID:
        return VECTOR_COLLECTION
    return f"{VECTOR_COLLECTION}-{hashlib.sha256(owner_id.encode()).hexdigest()[:32]}"


def memory_collection(client: ClientAPI, person: Person, embedder: Embedder | None = None) -> Collection:
    """The person's Chroma collection of memory units for `embedder` (default: the bundled model)."""
    from core.search.vectors import get_collection  # noqa: PLC0415 - chromadb: imported when the collection opens

    return get_collection(
        client, collection_name(person.id), embedder=embedder, metadata={"owner_id": person.id}
    )


def job_repository(ctx: JobContext, owner: str) -> MemoryRepository:
    """A job's repository of `owner`: the live one the in-process worker handed over, else a new one."""
    live = ctx.live.get("repo")
    return (
        live if isinstance(live, MemoryRepository) else MemoryRepository(ctx.engine, utc_now, owner_id=owner)
    )


def job_collection(ctx: JobContext, owner: str) -> Any:
    """A job's Chroma collection of `owner`: the live one handed over, else opened from the job's vector store
    (None when it has none)."""
    if "collection" in ctx.live:
        return ctx.live["collection"]
    if ctx.chroma is None:
        return None
    return memory_collection(ctx.chroma(), Person(owner, owner), ctx.embedder)
