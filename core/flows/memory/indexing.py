"""Keep the keyword indexes (FTS5) and the vector lane (Chroma) in step with the units.

The keyword rows are written in the caller's transaction; the vector writes wait for its commit
(core.store.after_commit: the repository's `begin()`), so no replica sees a vector before its unit, and a
rolled-back unit leaves no vector. Each vector carries when it was written (core.search.vector_age), and
each unit whether its vector was written (`indexed_at`), which the job sweep reads (core.flows.memory.index_job).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlalchemy import Connection, bindparam, select, update

from core.clock import utc_now
from core.flows.memory.text import bigram_document, normalize
from core.search.exact import forget_ids
from core.search.vector_age import stamped
from core.store.after_commit import after_commit, waits_for_commit
from core.store.memory.keyword_lanes import fts_delete, fts_upsert
from core.store.memory.tables import (
    KIND_EPISODE,
    KIND_FACT,
    KIND_LOOP,
    KIND_SUMMARY,
    entities,
    payload_episode,
    payload_fact,
    payload_loop,
    payload_summary,
    units,
)
from core.text.japanese import lexical_document

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

PREDICATE_LABELS = {
    "name_is": "の名前は",
    "is_addressed_as": "の呼び名は",
    "likes": "が好きなもの:",
    "dislikes": "が苦手なもの:",
    "prefers": "が好むもの:",
    "uses": "が使うもの:",
    "owns": "が持つもの:",
    "affiliated_with": "の所属:",
    "located_in": "の居場所:",
    "operates_on": "が取り組むもの:",
    "goal_is": "の目標:",
    "first_met_at": "と初めて会った場所:",
    "related_to": "に関係:",
}


def display_name(name: str) -> str:
    """SPEAKER is shown as ユーザー."""
    return "ユーザー" if name == "SPEAKER" else name


def unit_texts(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    """The search text of each unit: episode input + reply, fact as a sentence, loop text, summary text."""
    if not unit_ids:
        return {}
    out: dict[int, str] = {}
    kinds = dict(conn.execute(select(units.c.id, units.c.kind).where(units.c.id.in_(unit_ids))).all())
    ids = {
        k: [i for i, kind in kinds.items() if kind == k]
        for k in (KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY)
    }
    for row in conn.execute(select(payload_episode).where(payload_episode.c.unit_id.in_(ids[KIND_EPISODE]))):
        out[row.unit_id] = f"{row.input_text}\n{row.reply_text}"
    names = {}
    fact_rows = conn.execute(select(payload_fact).where(payload_fact.c.unit_id.in_(ids[KIND_FACT]))).all()
    entity_ids = {r.subject_entity_id for r in fact_rows if r.subject_entity_id}
    if entity_ids:
        names = dict(
            conn.execute(select(entities.c.id, entities.c.name).where(entities.c.id.in_(entity_ids))).all()
        )
    for row in fact_rows:
        subject = display_name(names.get(row.subject_entity_id, "SPEAKER"))
        out[row.unit_id] = f"{subject}{PREDICATE_LABELS.get(row.predicate, ' ')}{row.object_text}"
    for row in conn.execute(select(payload_loop).where(payload_loop.c.unit_id.in_(ids[KIND_LOOP]))):
        out[row.unit_id] = row.loop_text
    for row in conn.execute(select(payload_summary).where(payload_summary.c.unit_id.in_(ids[KIND_SUMMARY]))):
        out[row.unit_id] = row.summary_text
    return out


def index_units(
    conn: Connection, collection: Collection | None, unit_ids: list[int], batch: int = 500
) -> None:
    """(Re)index units in FTS5 and, when a collection is given, in Chroma (the collection of the units'
    person; each vector also carries its `owner_id` and `indexed_at`) once the transaction has committed.
    The units' `indexed_at` is cleared in the transaction and set once their vectors are written, so a
    vector write that never happens (a crash, Chroma down, no collection) leaves them for the job sweep."""
    texts = unit_texts(conn, unit_ids)
    rows = conn.execute(
        select(units.c.id, units.c.kind, units.c.occurred_at, units.c.owner_id, units.c.updated_at).where(
            units.c.id.in_(list(texts))
        )
    ).all()
    meta = {r.id: {"kind": r.kind, "occurred_at": int(r.occurred_at), "owner_id": r.owner_id} for r in rows}
    seen = {int(r.id): int(r.updated_at) for r in rows}
    for unit_id, body in texts.items():
        fts_upsert(conn, unit_id, normalize(body), bigram_document(body), lexical_document(body))
    if texts:
        conn.execute(update(units).where(units.c.id.in_(list(texts))).values(indexed_at=None))
    if collection is None or not texts:
        return
    dense = {**texts, **episode_inputs(conn, [i for i in texts if meta[i]["kind"] == KIND_EPISODE])}
    ids = list(texts)

    def write() -> None:
        for start in range(0, len(ids), batch):
            part = ids[start : start + batch]
            collection.upsert(
                ids=[str(i) for i in part],
                documents=[dense[i] for i in part],
                metadatas=[stamped(meta[i]) for i in part],
            )
            forget_ids(
                collection, [str(i) for i in part]
            )  # an edited unit's old vector leaves the exact copy

    if waits_for_commit(conn):
        engine = conn.engine

        def write_then_mark() -> None:
            write()
            with engine.begin() as marking:
                mark_indexed(marking, seen)

        after_commit(conn, write_then_mark)
    else:  # the caller's own transaction: written now, marked in it
        write()
        mark_indexed(conn, seen)


def mark_indexed(conn: Connection, seen: Mapping[int, int], now: int | None = None) -> None:
    """Record that the vectors of units were written: `seen` maps each unit id to the `updated_at` it had when
    its text was read; a unit changed since keeps its mark cleared (its own re-index marks it)."""
    if seen:
        at = utc_now() if now is None else now
        conn.execute(
            update(units)
            .where(units.c.id == bindparam("unit"), units.c.updated_at == bindparam("seen_at"))
            .values(indexed_at=bindparam("at")),
            [{"unit": unit_id, "seen_at": updated_at, "at": at} for unit_id, updated_at in seen.items()],
        )


def episode_inputs(conn: Connection, unit_ids: list[int]) -> dict[int, str]:
    """What the person said in each episode: the dense lane embeds this alone (the companion's reply dilutes
    the vector; on the tune half of tests/data/meaning/memory_pairs.json, recall@5 0.50 -> 0.63 at 1,000)."""
    if not unit_ids:
        return {}
    rows = conn.execute(
        select(payload_episode.c.unit_id, payload_episode.c.input_text).where(
            payload_episode.c.unit_id.in_(unit_ids)
        )
    )
    return {int(r.unit_id): str(r.input_text) for r in rows}


def unindex_unit(conn: Connection, collection: Collection | None, unit_id: int) -> None:
    """Remove a unit from FTS5, and from Chroma once the transaction has committed."""
    fts_delete(conn, unit_id)
    if collection is not None:
        after_commit(conn, lambda: collection.delete(ids=[str(unit_id)]))
