"""Read models for one memory in the browser: provenance both ways, a one-line
summary, its retrieval trace and extraction, and the affect chart. Only the repository's person's units are
found: another person's unit id reads as missing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from core.clock import format_local, to_local
from core.flows.memory.constants import AFFECT_LABELS_JA
from core.flows.memory.indexing import unit_texts
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import (
    KIND_EPISODE,
    KIND_FACT,
    KIND_LOOP,
    KIND_SUMMARY,
    STATE_ACTIVE,
    mine,
    payload_episode,
    payload_fact,
    payload_loop,
    payload_summary,
    retrieval_traces,
    units,
)

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a memory came from and what came of it (unit ids)."""

    sources: list[int]  # a fact's / loop's / summary's episodes
    derived: list[int]  # the facts, loops and summaries an episode gave rise to


@dataclass(frozen=True, slots=True)
class UnitSummary:
    """One line about a unit: kind, state, local time of what it records, and its text."""

    id: int
    kind: str  # EPISODE | FACT | LOOP | SUMMARY
    state: str  # active | deleted
    occurred_at: str  # local time, formatted
    text: str


@dataclass(frozen=True, slots=True)
class StoredTrace:
    """A stored retrieval trace; `trace` is the JSON `RetrievalResult.trace()` wrote (queries, lanes, candidate
    rows, thresholds, pack), kept as stored."""

    id: int
    created_at: int
    source: str  # chat | search_test
    q1: str
    q2: str
    episode_unit_id: int | None
    injected_unit_ids: list[int]
    trace: dict[str, Any]


def provenance(repo: MemoryRepository, unit_id: int) -> Provenance:
    """Sources of a fact / loop / summary (its episodes), and what an episode gave rise to."""
    with repo.connect() as conn:
        kind = conn.execute(select(units.c.kind).where(units.c.id == unit_id, mine(repo.owner_id))).scalar()
        sources: list[int] = []
        if kind == KIND_FACT:
            sources = json.loads(
                conn.execute(
                    select(payload_fact.c.evidence_unit_ids_json).where(payload_fact.c.unit_id == unit_id)
                ).scalar()
                or "[]"
            )
        elif kind == KIND_LOOP:
            src = conn.execute(
                select(payload_loop.c.source_unit_id).where(payload_loop.c.unit_id == unit_id)
            ).scalar()
            sources = [src] if src else []
        elif kind == KIND_SUMMARY:
            sources = json.loads(
                conn.execute(
                    select(payload_summary.c.evidence_unit_ids_json).where(
                        payload_summary.c.unit_id == unit_id
                    )
                ).scalar()
                or "[]"
            )
        derived: list[int] = []
        if kind == KIND_EPISODE:
            for table in (payload_fact, payload_summary):
                for holder, ev in conn.execute(
                    select(table.c.unit_id, table.c.evidence_unit_ids_json)
                    .join(units, units.c.id == table.c.unit_id)
                    .where(table.c.evidence_unit_ids_json.like(f"%{unit_id}%"), mine(repo.owner_id))
                ):
                    if unit_id in json.loads(ev):
                        derived.append(int(holder))
            derived += [
                int(i)
                for i in conn.execute(
                    select(payload_loop.c.unit_id).where(
                        payload_loop.c.source_unit_id == unit_id, payload_loop.c.owner_id == repo.owner_id
                    )
                ).scalars()
            ]
    return Provenance([int(i) for i in sources], sorted(derived))


def unit_summary(repo: MemoryRepository, unit_id: int) -> UnitSummary | None:
    """Kind, state, local time and the text of a unit (for provenance links and details)."""
    with repo.connect() as conn:
        row = conn.execute(
            select(units.c.kind, units.c.state, units.c.occurred_at).where(
                units.c.id == unit_id, mine(repo.owner_id)
            )
        ).first()
        if row is None:
            return None
        text = unit_texts(conn, [unit_id]).get(unit_id, "")
    return UnitSummary(unit_id, row.kind, row.state, format_local(row.occurred_at), text)


def affect_series(repo: MemoryRepository) -> pd.DataFrame:
    """How many episodes per local week carried each persona affect (a chart of affect over time); neutral
    left out. Counts, not the mean intensity: the mean of one label is often the same every week."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    with repo.connect() as conn:
        rows = conn.execute(
            select(units.c.occurred_at, units.c.persona_affect_label, units.c.persona_affect_intensity).where(
                (units.c.kind == KIND_EPISODE) & (units.c.state == STATE_ACTIVE) & mine(repo.owner_id)
            )
        ).all()
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows, columns=["occurred_at", "label", "intensity"])
    frame = frame[frame["label"] != "neutral"]
    frame = frame.assign(label=frame["label"].map(lambda k: AFFECT_LABELS_JA.get(k, k)))
    local = pd.to_datetime(frame["occurred_at"].map(lambda ts: to_local(ts).replace(tzinfo=None)))
    frame = frame.assign(week=local.dt.to_period("W").dt.start_time.dt.strftime("%m/%d〜"))
    if frame.empty:
        return pd.DataFrame()
    return frame.pivot_table(index="week", columns="label", values="intensity", aggfunc="count").fillna(0)


def latest_trace(repo: MemoryRepository, episode_unit_id: int | None = None) -> StoredTrace | None:
    """The person's newest retrieval trace (of one episode when given)."""
    query = (
        select(retrieval_traces)
        .where(retrieval_traces.c.owner_id == repo.owner_id)
        .order_by(retrieval_traces.c.id.desc())
        .limit(1)
    )
    if episode_unit_id is not None:
        query = query.where(retrieval_traces.c.episode_unit_id == episode_unit_id)
    with repo.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return StoredTrace(
        row.id,
        row.created_at,
        row.source,
        row.q1,
        row.q2,
        row.episode_unit_id,
        [int(i) for i in json.loads(row.injected_unit_ids_json or "[]")],
        json.loads(row.trace_json),
    )


def extraction_of_episode(repo: MemoryRepository, unit_id: int) -> dict[str, Any]:
    """The stored extraction result of an episode (entities, relations, facts, loops, errors)."""
    with repo.connect() as conn:
        raw = conn.execute(
            select(payload_episode.c.extraction_json)
            .join(units, units.c.id == payload_episode.c.unit_id)
            .where(payload_episode.c.unit_id == unit_id, mine(repo.owner_id))
        ).scalar()
    extraction: dict[str, Any] = json.loads(raw or "{}")
    return extraction
