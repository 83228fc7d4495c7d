"""Retrieval without an LLM (spec 03: 記憶検索): two fixed queries, four lanes, RRF, rerank, pack, trace.

Only the person's own memories are ever candidates: the repository's `owner_id` goes into every
lane and read, the collection is the person's own, and traces are written as theirs.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, insert, select

from core.clock import format_local
from core.flows.memory import scoring
from core.flows.memory.constants import (
    DEDUPE_OVERLAP,
    DROP_BELOW,
    HISTORY_MESSAGES_FOR_Q2,
    INJECT_MAX_SENSITIVITY,
    INJECT_MIN_BEST,
    LANE_K,
    MAX_INJECTED,
    Q2_SEPARATOR,
    RRF_TOP,
    VECTOR_LANE_WEIGHT,
    VECTOR_MIN_SIMILARITY,
)
from core.flows.memory.indexing import unit_texts
from core.flows.memory.lanes import entity_lane, entity_names, keyword_lanes, vector_lane
from core.flows.memory.pack import load_bond_summary, load_fact_pool, load_open_loops
from core.store.base import inserted_id
from core.store.memory.keyword_lanes import fts_bodies
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import STATE_ACTIVE, dumps, mine, retrieval_traces, units

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

# the lexical and vector lanes scale with the query; a 40,000-character reply in the history
# cost 44 s and 2.4 GB. Each message (its end, nearest the input) and the input are capped.
QUERY_MESSAGE_CHARS = 1_000
QUERY_INPUT_CHARS = 2_000


def build_queries(history: Sequence[Mapping[str, Any]], user_input: str) -> tuple[str, str]:
    """Q1 = the input; Q2 = the last 6 messages + "\\n---\\n" + the input (Q2 = Q1 with no history).

    Each history message contributes at most its last QUERY_MESSAGE_CHARS characters and the input its
    first QUERY_INPUT_CHARS (retrieval caps the history text it reads).
    """
    user_input = user_input[:QUERY_INPUT_CHARS]
    recent = [
        str(m["content"])[-QUERY_MESSAGE_CHARS:]
        for m in history[-HISTORY_MESSAGES_FOR_Q2:]
        if m.get("content")
    ]
    if not recent:
        return user_input, user_input
    return user_input, "\n".join(recent) + Q2_SEPARATOR + user_input


@dataclass
class RetrievalResult:
    q1: str
    q2: str
    lanes: dict[str, list[dict[str, Any]]]
    candidates: list[scoring.Candidate]
    selected: list[scoring.Candidate]
    facts: list[scoring.FactScore]
    loops: list[dict[str, Any]]
    bond: dict[str, Any] | None
    matched_entities: list[str]
    texts: dict[int, str] = field(default_factory=dict)
    elapsed_ms: float = 0.0

    @property
    def injected_unit_ids(self) -> list[int]:
        return (
            [c.unit_id for c in self.selected]
            + [f.unit_id for f in self.facts]
            + [lp["unit_id"] for lp in self.loops]
            + ([self.bond["unit_id"]] if self.bond else [])
        )

    def trace(self) -> dict[str, Any]:
        """Everything that led to the pack: queries, lane hits, score components, thresholds, decisions."""
        return {
            "q1": self.q1,
            "q2": self.q2,
            "queries_run": 1 if self.q1 == self.q2 else 2,
            "matched_entities": self.matched_entities,
            "lanes": self.lanes,
            "candidates": [c.row() for c in self.candidates],
            "thresholds": {
                "lane_k": LANE_K,
                "vector_min_similarity": VECTOR_MIN_SIMILARITY,
                "vector_lane_weight": VECTOR_LANE_WEIGHT,
                "rrf_top": RRF_TOP,
                "drop_below": DROP_BELOW,
                "dedupe_overlap": DEDUPE_OVERLAP,
                "max_injected": MAX_INJECTED,
                "inject_min_best": INJECT_MIN_BEST,
                "inject_max_sensitivity": INJECT_MAX_SENSITIVITY,
            },
            "pack": {
                "memories": [c.unit_id for c in self.selected],
                "facts": [
                    {
                        "unit_id": f.unit_id,
                        "confidence": f.confidence,
                        "salience": f.salience,
                        "rec": f.rec,
                        "pin": f.pin,
                        "score": f.score,
                    }
                    for f in self.facts
                ],
                "loops": [lp["unit_id"] for lp in self.loops],
                "bond_summary": self.bond["unit_id"] if self.bond else None,
            },
            "elapsed_ms": round(self.elapsed_ms, 2),
        }


def retrieve(
    repo: MemoryRepository,
    collection: Collection | None,
    history: Sequence[Mapping[str, Any]],
    user_input: str,
    now: int | None = None,
    k: int = LANE_K,
    *,
    lexical: bool = True,
) -> RetrievalResult:
    """Run the lanes for Q1 and Q2, fuse by RRF (top 60), rerank, and pick memories, facts, loops, bond
    summary (spec 03: 記憶検索, no LLM). `collection` must be the person's own (memory_collection);
    `lexical=False` leaves out the Sudachi lane (benchmark baseline)."""
    now = repo.now() if now is None else now
    owner = repo.owner_id
    start = time.perf_counter()
    q1, q2 = build_queries(history, user_input)
    queries = {"Q1": q1} if q1 == q2 else {"Q1": q1, "Q2": q2}
    lanes: dict[str, list[dict[str, Any]]] = {}
    with repo.connect() as conn:
        for (label, _), hits in zip(
            queries.items(), vector_lane(collection, list(queries.values()), k), strict=True
        ):
            lanes[f"vector/{label}"] = _rows(hits)
        for label, query in queries.items():
            for lane, hits in keyword_lanes(conn, owner, query, k, lexical=lexical).items():
                lanes[f"{lane}/{label}"] = _rows(hits)
        matched, hits = entity_lane(conn, owner, q1, k, entity_names(conn, owner))
        lanes["entity/Q1"] = _rows(hits)
        ranked_lists = [[h["unit_id"] for h in hits] for hits in lanes.values() if hits]
        weights = [lane_weight(name) for name, hits in lanes.items() if hits]
        fused = scoring.rrf_merge(ranked_lists, weights=weights)
        candidates = _candidates(conn, owner, fused, lanes)
        live = [c for c in candidates if c.decision not in EXCLUDED]
        ranked = scoring.rerank(live, list(queries.values()), now, sum(weights))
        selected = scoring.select_pack(ranked)
        facts = scoring.select_facts(load_fact_pool(conn, owner), now)
        loops = load_open_loops(conn, owner, now)
        bond = load_bond_summary(conn, owner)
        ids = [c.unit_id for c in selected] + [f.unit_id for f in facts] + [lp["unit_id"] for lp in loops]
        texts = unit_texts(conn, ids)
    excluded = [c for c in candidates if c.decision in EXCLUDED]
    return RetrievalResult(
        q1,
        q2,
        lanes,
        ranked + excluded,
        selected,
        facts,
        loops,
        bond,
        [n for n, _ in matched],
        texts,
        (time.perf_counter() - start) * 1000,
    )


def lane_weight(name: str) -> float:
    """A lane's weight in the RRF (`vector/Q1` … VECTOR_LANE_WEIGHT, every other lane 1)."""
    return VECTOR_LANE_WEIGHT if name.startswith("vector/") else 1.0


# Candidates that are never reranked: soft-deleted, or too sensitive to inject (constants.INJECT_MAX_SENSITIVITY).
EXCLUDED = ("inactive", "sensitive")


def _rows(hits: list[tuple[int, float]]) -> list[dict[str, Any]]:
    return [{"rank": r, "unit_id": uid, "raw_score": round(score, 4)} for r, (uid, score) in enumerate(hits)]


def _candidates(
    conn: Connection, owner_id: str, fused: list[tuple[int, float]], lanes: dict[str, list[dict[str, Any]]]
) -> list[scoring.Candidate]:
    ids = [uid for uid, _ in fused]
    rows = {
        r.id: r
        for r in conn.execute(
            select(units.c.id, units.c.kind, units.c.state, units.c.sensitivity, units.c.occurred_at).where(
                units.c.id.in_(ids), mine(owner_id)
            )
        )
    }
    bodies = fts_bodies(conn, ids)
    out = []
    for uid, rrf in fused:
        row = rows.get(uid)
        if row is None:
            continue
        c = scoring.Candidate(uid, row.kind, rrf, bodies.get(uid, ""), int(row.occurred_at))
        c.lanes = [name for name, hits in lanes.items() if any(h["unit_id"] == uid for h in hits)]
        c.sem = max(
            (
                h["raw_score"]
                for name, hits in lanes.items()
                if name.startswith("vector/")
                for h in hits
                if h["unit_id"] == uid
            ),
            default=0.0,
        )
        if row.state != STATE_ACTIVE:
            c.decision = "inactive"
        elif row.sensitivity > INJECT_MAX_SENSITIVITY:
            c.decision = "sensitive"
        out.append(c)
    return out


def format_pack(result: RetrievalResult) -> str:
    """The memory block injected into the system prompt (plain Japanese text)."""
    parts: list[str] = []
    if result.selected:
        parts.append("## 関連する記憶")
        for c in result.selected:
            day = format_local(c.occurred_at, "%Y-%m-%d")
            body = result.texts.get(c.unit_id, c.body).replace("\n", " / ")
            parts.append(f"- [{day}・{_KIND_JA.get(c.kind, c.kind)}] {body[:300]}")
    if result.facts:
        parts.append("## ユーザーについて知っていること")
        parts += [f"- {result.texts.get(f.unit_id, '')}" for f in result.facts]
    if result.loops:
        parts.append("## 未完了の約束・続きの話題")
        for lp in result.loops:
            due = f" (期限 {format_local(lp['due_at'], '%m/%d')})" if lp["due_at"] else ""
            parts.append(f"- {lp['loop_text']}{due}")
    if result.bond:
        parts.append("## この1週間の関係")
        parts.append(result.bond["summary_text"])
    return "\n".join(parts) if parts else "（関連する記憶はありません）"


_KIND_JA = {"EPISODE": "会話", "FACT": "事実", "LOOP": "約束", "SUMMARY": "まとめ"}


def save_trace(
    conn: Connection,
    owner_id: str,
    result: RetrievalResult,
    now: int,
    source: str = "chat",
    episode_unit_id: int | None = None,
) -> int:
    """Write the retrieval trace of `owner_id` (every query writes one)."""
    return inserted_id(
        conn.execute(
            insert(retrieval_traces).values(
                created_at=now,
                source=source,
                query_input=result.q1,
                q1=result.q1,
                q2=result.q2,
                trace_json=dumps(result.trace()),
                injected_unit_ids_json=json.dumps(result.injected_unit_ids),
                episode_unit_id=episode_unit_id,
                owner_id=owner_id,
            )
        )
    )


def save_trace_for(
    repo: MemoryRepository, result: RetrievalResult, now: int | None = None, source: str = "search_test"
) -> int:
    """save_trace in its own transaction (the search test tab)."""
    with repo.begin() as conn:
        return save_trace(conn, repo.owner_id, result, repo.now() if now is None else now, source)
