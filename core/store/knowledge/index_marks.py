"""What the knowledge base's vector index holds, as the database knows it: `knowledge_entries.indexed_version`.

An entry's vector is written after its save has committed (core.flows.knowledge.index); once written, the
entry is marked with the version written, and an archived entry's mark is cleared when its vector is
removed. An active entry whose mark is not its version, or an archived one still marked, is owed a vector
write: the job sweep finds those (core.flows.knowledge.index_job) without reading the vector store.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Engine, bindparam, select, update

from core.store.knowledge.entries import knowledge_entries


def index_owed(engine: Engine, settled_before: int | None = None) -> tuple[dict[int, int], list[int]]:
    """What the vector index owes: active entries whose indexed version is not their version (id -> version)
    and archived entries still marked indexed (ids); with `settled_before`, only entries changed (archived)
    before that time."""
    c = knowledge_entries.c
    stale = c.archived_at.is_(None) & (c.indexed_version.is_(None) | (c.indexed_version != c.version))
    gone = c.archived_at.is_not(None) & c.indexed_version.is_not(None)
    if settled_before is not None:
        stale &= c.updated_at < settled_before
        gone &= c.archived_at < settled_before
    with engine.connect() as conn:
        versions = {int(i): int(v) for i, v in conn.execute(select(c.id, c.version).where(stale))}
        return versions, [int(i) for i in conn.execute(select(c.id).where(gone)).scalars()]


def mark_indexed(engine: Engine, marks: Mapping[int, int | None]) -> None:
    """Record the version of each entry whose vector was just written (None: its vector was removed); an
    entry saved since at another version keeps its older mark (its own index write marks it)."""
    c = knowledge_entries.c
    written = [{"entry": i, "written": v} for i, v in marks.items() if v is not None]
    removed = [i for i, v in marks.items() if v is None]
    with engine.begin() as conn:
        if written:
            conn.execute(
                update(knowledge_entries)
                .where(c.id == bindparam("entry"), c.version == bindparam("written"))
                .values(indexed_version=bindparam("written")),
                written,
            )
        if removed:
            conn.execute(update(knowledge_entries).where(c.id.in_(removed)).values(indexed_version=None))
