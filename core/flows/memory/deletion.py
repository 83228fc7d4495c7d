"""Hard delete that cascades everywhere (the memory browser: FTS rows, Chroma vectors, unit_entities,
edges, evidence).

Deleting an EPISODE also removes what exists only because of it: loops extracted from it, facts and
summaries whose evidence becomes empty (spec 03: a fact's evidence must always hold its source
episode), its id in other units' evidence lists and summaries' key events, the retrieval traces that
quote it, its extraction log, and entities nothing refers to any more. Only the repository's person's
units are deleted, and only their traces are searched.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlalchemy import Connection, delete, or_, select, update

from core.flows.memory.indexing import unindex_unit
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_EPISODE,
    PAYLOAD_TABLES,
    dumps,
    edges,
    entities,
    entity_aliases,
    extraction_log,
    mine,
    payload_episode,
    payload_fact,
    payload_loop,
    payload_summary,
    retrieval_traces,
    unit_entities,
    unit_versions,
    units,
)

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

# Lists of unit ids inside a summary's JSON that point at its evidence.
SUMMARY_EVENT_KEYS = ("key_events", "favorability_reasons")


@dataclass
class HardDeleteReport:
    """What a hard delete removed (shown to the analyst)."""

    unit_ids: list[int] = field(default_factory=list)  # the unit itself first, then derived units
    traces: int = 0
    entities: int = 0


def hard_delete(repo: MemoryRepository, collection: Collection | None, unit_id: int) -> HardDeleteReport:
    """Delete a unit for good, with everything derived from it alone (see the module docstring)."""
    report = HardDeleteReport()
    with repo.begin() as conn:
        row = conn.execute(select(units.c.kind).where(units.c.id == unit_id, mine(repo.owner_id))).first()
        if row is None:
            return report
        doomed = [unit_id]
        if row.kind == KIND_EPISODE:
            report.traces = _delete_traces_quoting(conn, repo.owner_id, unit_id)
            doomed += [
                int(i)
                for i in conn.execute(
                    select(payload_loop.c.unit_id).where(
                        payload_loop.c.source_unit_id == unit_id, payload_loop.c.owner_id == repo.owner_id
                    )
                ).scalars()
            ]
        doomed += _drop_from_evidence(conn, repo.owner_id, unit_id)
        touched = _entities_of(conn, doomed)
        for uid in doomed:
            unindex_unit(conn, collection, uid)
            delete_rows_of_unit(conn, uid)
        report.unit_ids = doomed
        report.entities = _delete_orphan_entities(conn, touched)
    return report


def delete_rows_of_unit(conn: Connection, unit_id: int) -> None:
    """Remove a unit's rows from every memory table (indexes are handled by the caller)."""
    conn.execute(delete(unit_entities).where(unit_entities.c.unit_id == unit_id))
    conn.execute(delete(edges).where(edges.c.evidence_unit_id == unit_id))
    conn.execute(delete(unit_versions).where(unit_versions.c.unit_id == unit_id))
    conn.execute(delete(extraction_log).where(extraction_log.c.unit_id == unit_id))
    conn.execute(delete(retrieval_traces).where(retrieval_traces.c.episode_unit_id == unit_id))
    conn.execute(
        update(payload_loop).where(payload_loop.c.source_unit_id == unit_id).values(source_unit_id=None)
    )
    for table in PAYLOAD_TABLES.values():
        conn.execute(delete(table).where(table.c.unit_id == unit_id))
    conn.execute(delete(units).where(units.c.id == unit_id))


def _delete_traces_quoting(conn: Connection, owner_id: str, unit_id: int) -> int:
    """The person's traces of the episode's own turn, and their traces whose Q1/Q2 quote its input or reply
    as a line (another person's traces are never touched, whatever they quote)."""
    texts = conn.execute(
        select(payload_episode.c.input_text, payload_episode.c.reply_text).where(
            payload_episode.c.unit_id == unit_id
        )
    ).one()
    quoted = [t for t in texts if t and t.strip()]
    doomed = set(
        conn.execute(
            select(retrieval_traces.c.id).where(retrieval_traces.c.episode_unit_id == unit_id)
        ).scalars()
    )
    if quoted:
        likes = [
            c.contains(t, autoescape=True)
            for t in quoted
            for c in (retrieval_traces.c.q1, retrieval_traces.c.q2)
        ]
        for trace_id, q1, q2 in conn.execute(
            select(retrieval_traces.c.id, retrieval_traces.c.q1, retrieval_traces.c.q2).where(
                or_(*likes), retrieval_traces.c.owner_id == owner_id
            )
        ):
            lines = f"\n{q1}\n\n{q2}\n"
            if any(f"\n{t}\n" in lines for t in quoted):
                doomed.add(trace_id)
    if doomed:
        conn.execute(delete(retrieval_traces).where(retrieval_traces.c.id.in_(doomed)))
    return len(doomed)


def _drop_from_evidence(conn: Connection, owner_id: str, unit_id: int) -> list[int]:
    """Remove the id from facts' and summaries' evidence (and summaries' key events); returns the
    facts and summaries left with no evidence at all, which go too."""
    emptied: list[int] = []
    for table in (payload_fact, payload_summary):
        rows = conn.execute(
            select(table.c.unit_id, table.c.evidence_unit_ids_json)
            .join(units, units.c.id == table.c.unit_id)
            .where(table.c.evidence_unit_ids_json.like(f"%{int(unit_id)}%"), mine(owner_id))
        ).all()
        for holder, evidence_json in rows:
            evidence = json.loads(evidence_json)
            if unit_id not in evidence:
                continue
            left = [i for i in evidence if i != unit_id]
            if not left:
                emptied.append(int(holder))
                continue
            values = {"evidence_unit_ids_json": dumps(left)}
            if table is payload_summary:
                data = json.loads(
                    conn.execute(
                        select(payload_summary.c.summary_json).where(payload_summary.c.unit_id == holder)
                    ).scalar_one()
                    or "{}"
                )
                for key in SUMMARY_EVENT_KEYS:
                    if isinstance(data.get(key), list):
                        data[key] = [e for e in data[key] if e.get("unit_id") != unit_id]
                values["summary_json"] = dumps(data)
            conn.execute(update(table).where(table.c.unit_id == holder).values(**values))
    return emptied


def _entities_of(conn: Connection, unit_ids: list[int]) -> set[int]:
    """Entities the units mention, are about, or whose edges they evidence."""
    found = set(
        conn.execute(select(unit_entities.c.entity_id).where(unit_entities.c.unit_id.in_(unit_ids))).scalars()
    )
    for a, b in conn.execute(
        select(payload_fact.c.subject_entity_id, payload_fact.c.object_entity_id).where(
            payload_fact.c.unit_id.in_(unit_ids)
        )
    ):
        found |= {e for e in (a, b) if e is not None}
    for a, b in conn.execute(
        select(edges.c.src_entity_id, edges.c.dst_entity_id).where(edges.c.evidence_unit_id.in_(unit_ids))
    ):
        found |= {a, b}
    return {int(e) for e in found}


def _delete_orphan_entities(conn: Connection, candidates: set[int]) -> int:
    """Delete those of `candidates` that no unit, fact or edge refers to any more (with their aliases)."""
    orphans = []
    for entity_id in sorted(candidates):
        used = (
            conn.execute(
                select(unit_entities.c.unit_id).where(unit_entities.c.entity_id == entity_id)
            ).first()
            or conn.execute(
                select(payload_fact.c.unit_id).where(
                    (payload_fact.c.subject_entity_id == entity_id)
                    | (payload_fact.c.object_entity_id == entity_id)
                )
            ).first()
            or conn.execute(
                select(edges.c.id).where(
                    (edges.c.src_entity_id == entity_id) | (edges.c.dst_entity_id == entity_id)
                )
            ).first()
        )
        if used is None:
            orphans.append(entity_id)
    if orphans:
        conn.execute(delete(entity_aliases).where(entity_aliases.c.entity_id.in_(orphans)))
        conn.execute(delete(entities).where(entities.c.id.in_(orphans)))
    return len(orphans)
