"""Pure arithmetic of retrieval: RRF merge, rerank, thresholds, dedupe, fact scores."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.flows.memory.constants import (
    DAY,
    DEDUPE_OVERLAP,
    DROP_BELOW,
    EXCLUSIVE_PREDICATES,
    FACT_TOP,
    FACT_W_CONFIDENCE,
    FACT_W_PIN,
    FACT_W_RECENCY,
    FACT_W_SALIENCE,
    INJECT_MIN_BEST,
    LEX_CHARS,
    LEX_FULL_GRAMS,
    MAX_INJECTED,
    RECENCY_TAU_DAYS,
    RRF_K,
    RRF_TOP,
    W_LEX,
    W_REC,
    W_RRF,
)
from core.flows.memory.text import char_trigrams, dice
from core.search import fusion


def rrf_term(rank: int) -> float:
    """Reciprocal rank fusion term 1/(60 + rank + 1), rank counted from 0."""
    return fusion.rrf_term(rank, RRF_K)


def rrf_merge(
    lists: Sequence[Sequence[int]], top: int = RRF_TOP, weights: Sequence[float] | None = None
) -> list[tuple[int, float]]:
    """Fuse ranked id lists: sum of weight·1/(60+rank+1) per id (weight 1 each by default); the best `top`, ties
    by first appearance."""
    return fusion.rrf_merge(lists, top=top, k=RRF_K, weights=weights)


def rrf_normalizer(lists_weight: float) -> float:
    """The largest possible RRF score: rank 0 in each list that returned hits, `lists_weight` being the sum of
    those lists' weights (their number when each weighs 1)."""
    return lists_weight * rrf_term(0) if lists_weight else 1.0


def lex_score(query: str, body: str) -> float:
    """Dice overlap of character 3-grams (query's last 1,200 chars vs the memory's first 1,200),
    times min(1, query_grams / 30) so very short queries count for less."""
    q = char_trigrams(query[-LEX_CHARS:])
    if not q:
        return 0.0
    return dice(q, char_trigrams(body[:LEX_CHARS])) * min(1.0, len(q) / LEX_FULL_GRAMS)


def recency(age_seconds: float, tau_days: float = RECENCY_TAU_DAYS) -> float:
    """exp(-age_days / 45); a memory from the future counts as new."""
    return math.exp(-max(0.0, age_seconds) / DAY / tau_days)


def final_score(rrf_norm: float, lex: float, rec: float, sem: float = 0.0) -> float:
    """final = 0.55·rrf_norm + 0.35·max(lex, sem) + 0.10·rec: a memory matches by its words (lex) or by its
    meaning (sem, the dense lane's calibrated relevance), whichever is stronger."""
    return W_RRF * rrf_norm + W_LEX * max(lex, sem) + W_REC * rec


@dataclass
class Candidate:
    """One fused candidate and every number that decided its fate (kept in the trace)."""

    unit_id: int
    kind: str
    rrf: float
    body: str
    occurred_at: int
    rrf_norm: float = 0.0
    lex: float = 0.0
    sem: float = 0.0
    rec: float = 0.0
    final: float = 0.0
    decision: str = ""
    lanes: list[str] = field(default_factory=list)

    def row(self) -> dict[str, Any]:
        return {
            "unit_id": self.unit_id,
            "kind": self.kind,
            "lanes": ",".join(self.lanes),
            "rrf": round(self.rrf, 5),
            "rrf_norm": round(self.rrf_norm, 4),
            "lex": round(self.lex, 4),
            "sem": round(self.sem, 4),
            "rec": round(self.rec, 4),
            "final": round(self.final, 4),
            "decision": self.decision,
        }


def rerank(
    candidates: list[Candidate], queries: Sequence[str], now: int, lists_weight: float
) -> list[Candidate]:
    """Fill rrf_norm (rrf over rrf_normalizer(lists_weight)), lex (best over the queries), rec and final (`sem` is
    set by the caller from the vector lane); sorted by final, best first."""
    norm = rrf_normalizer(lists_weight)
    grams_cache = list(queries)
    for c in candidates:
        c.rrf_norm = min(1.0, c.rrf / norm)
        c.lex = max((lex_score(q, c.body) for q in grams_cache), default=0.0)
        c.rec = recency(now - c.occurred_at)
        c.final = final_score(c.rrf_norm, c.lex, c.rec, c.sem)
    return sorted(candidates, key=lambda c: (-c.final, c.unit_id))


def select_pack(ranked: list[Candidate]) -> list[Candidate]:
    """Apply the thresholds in order: drop below 0.28, skip near-duplicates (3-gram overlap ≥ 0.90)
    of an already chosen memory, at most 5; nothing at all when the best is below 0.35.
    Every candidate gets its decision written down."""
    chosen: list[Candidate] = []
    chosen_grams: list[tuple[int, set[str]]] = []
    for c in ranked:
        if c.final < DROP_BELOW:
            c.decision = f"below_{DROP_BELOW}"
            continue
        grams = char_trigrams(c.body[:LEX_CHARS])
        dup = next((uid for uid, g in chosen_grams if dice(grams, g) >= DEDUPE_OVERLAP), None)
        if dup is not None:
            c.decision = f"duplicate_of_{dup}"
            continue
        if len(chosen) >= MAX_INJECTED:
            c.decision = "over_limit"
            continue
        c.decision = "selected"
        chosen.append(c)
        chosen_grams.append((c.unit_id, grams))
    if chosen and chosen[0].final < INJECT_MIN_BEST:
        for c in chosen:
            c.decision = f"best_below_{INJECT_MIN_BEST}"
        return []
    return chosen


def fact_score(confidence: float, salience: float, age_seconds: float, pin: int) -> float:
    """0.45·confidence + 0.25·salience + 0.20·exp(−age/45 d) + 0.10·pin."""
    return (
        FACT_W_CONFIDENCE * confidence
        + FACT_W_SALIENCE * salience
        + FACT_W_RECENCY * recency(age_seconds)
        + FACT_W_PIN * (1 if pin else 0)
    )


@dataclass(frozen=True, slots=True)
class FactScore:
    """A fact chosen for the pack and the numbers that ranked it (shown on the search tab, kept in the trace)."""

    unit_id: int
    predicate: str
    confidence: float
    salience: float
    rec: float  # recency, exp(-age/45 d), rounded
    pin: int  # 0 or 1, as stored
    score: float  # fact_score, rounded


def select_facts(facts: list[dict[str, Any]], now: int, top: int = FACT_TOP) -> list[FactScore]:
    """Facts to inject: expired valid_to excluded; for exclusive predicates (name_is, goal_is, ...) only the
    latest fact per subject survives; then the best `top` by fact_score. Each dict needs unit_id,
    subject_entity_id, predicate, valid_to, occurred_at, confidence, salience, pin."""
    live = [f for f in facts if f.get("valid_to") is None or f["valid_to"] > now]
    latest: dict[tuple[Any, str], dict[str, Any]] = {}
    for f in live:
        if f["predicate"] in EXCLUSIVE_PREDICATES:
            key = (f["subject_entity_id"], f["predicate"])
            best = latest.get(key)
            if best is None or (f["occurred_at"], f["unit_id"]) > (best["occurred_at"], best["unit_id"]):
                latest[key] = f
    kept = [
        FactScore(
            f["unit_id"],
            f["predicate"],
            f["confidence"],
            f["salience"],
            round(recency(now - f["occurred_at"]), 4),
            int(f["pin"]),
            round(fact_score(f["confidence"], f["salience"], now - f["occurred_at"], f["pin"]), 4),
        )
        for f in live
        if f["predicate"] not in EXCLUSIVE_PREDICATES or latest[(f["subject_entity_id"], f["predicate"])] is f
    ]
    return sorted(kept, key=lambda f: (-f.score, -f.unit_id))[:top]
