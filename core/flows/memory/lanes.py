"""The candidate lanes of retrieval, no LLM: vector (Chroma), keyword (FTS5 trigram + 2-character
index + Sudachi lexical keys), entity (longest match of the input against entity names and aliases,
honorifics stripped and kana as katakana), and the unicode61 baseline. Every lane finds only one person's
units: the vector lane searches the person's own collection, the others take `owner_id`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlalchemy import Connection, func, select, text

from core.flows.memory.constants import VECTOR_MIN_SIMILARITY
from core.flows.memory.normalize import SPEAKER
from core.flows.memory.text import normalize, query_terms
from core.search.exact import exact_query_texts
from core.search.scores import relevance_score
from core.store.memory.keyword_lanes import (
    FTS_BIGRAM,
    FTS_LEXICAL,
    FTS_TRIGRAM,
    FTS_UNICODE61,
    fts_search,
)
from core.store.memory.tables import entities, entity_aliases, mine, unit_entities, units
from core.text.japanese import lexical_keys, name_key, to_katakana

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

Hits = list[tuple[int, float]]  # (unit_id, raw score), best first


def vector_lane(
    collection: Collection | None, queries: list[str], k: int, min_similarity: float = VECTOR_MIN_SIMILARITY
) -> list[Hits]:
    """Relevance hits per query (exact cosine over the person's vectors, core.search.exact, calibrated for the
    collection's embedder, core.search.scores.relevance_score), below `min_similarity` dropped."""
    if collection is None or not queries:
        return [[] for _ in queries]
    count = collection.count()
    if count == 0:
        return [[] for _ in queries]
    out: list[Hits] = []
    for neighbours in exact_query_texts(collection, queries, k, count=count):
        hits = [(int(n.id), round(relevance_score(collection, n.distance), 4)) for n in neighbours]
        out.append([h for h in hits if h[1] >= min_similarity])
    return out


def keyword_lanes(
    conn: Connection, owner_id: str, query: str, k: int, *, lexical: bool = True
) -> dict[str, Hits]:
    """FTS5 hits among `owner_id`'s units for one query: `trigram` (terms of 3+ characters), `bigram`
    (2-character terms) and, unless `lexical` is False (the benchmark's "before"), `lexical` (any of the
    query's Sudachi keys)."""
    long_terms, short_terms = query_terms(query)
    lanes = {
        "trigram": fts_search(conn, FTS_TRIGRAM, long_terms, k, owner_id),
        "bigram": fts_search(conn, FTS_BIGRAM, short_terms, k, owner_id),
    }
    if lexical:
        lanes["lexical"] = fts_search(conn, FTS_LEXICAL, lexical_keys(query), k, owner_id)
    return lanes


EntityName = tuple[str, int, str]  # (matching key, entity id, the name or alias as written)


def entity_names(conn: Connection, owner_id: str) -> list[EntityName]:
    """Matching keys of `owner_id`'s entity names and aliases, longest first; the speaker and 1-character
    keys left out.

    Each name gives its folded form with kana as katakana (田中さん -> 田中サン) and, when it ends in an
    honorific, the form without it (田中), so 「田中くん」 and 「田中様」 find the entity written 田中さん."""
    own = entities.c.owner_id == owner_id
    rows = list(
        conn.execute(select(entities.c.name, entities.c.id).where(entities.c.name != SPEAKER, own)).all()
    )
    rows += list(
        conn.execute(
            select(entity_aliases.c.alias, entity_aliases.c.entity_id)
            .join(entities, entities.c.id == entity_aliases.c.entity_id)
            .where(own)
        ).all()
    )
    names: set[EntityName] = set()
    for name, entity_id in rows:
        for key in (to_katakana(normalize(name)), name_key(name)):
            if len(key) >= 2:
                names.add((key, int(entity_id), name))
    return sorted(names, key=lambda x: (-len(x[0]), x[0], x[2]))


def match_entities(query: str, names: list[EntityName]) -> list[tuple[str, int]]:
    """Longest non-overlapping matches of names in the query: (name as written, entity id)."""
    q = to_katakana(normalize(query))
    covered = [False] * len(q)
    found: list[tuple[str, int]] = []
    for key, entity_id, written in names:
        start = q.find(key)
        while start >= 0:
            span = range(start, start + len(key))
            if not any(covered[i] for i in span):
                for i in span:
                    covered[i] = True
                if all(entity_id != e for _, e in found):
                    found.append((written, entity_id))
                break
            start = q.find(key, start + 1)
    return found


def entity_lane(
    conn: Connection, owner_id: str, query: str, k: int, names: list[EntityName]
) -> tuple[list[tuple[str, int]], Hits]:
    """`owner_id`'s units linked to the entities the query names, newest first (raw score = entities
    matched)."""
    matched = match_entities(query, names)
    if not matched:
        return [], []
    ids = [e for _, e in matched]
    rows = conn.execute(
        select(unit_entities.c.unit_id, func.count().label("n"))
        .join(units, units.c.id == unit_entities.c.unit_id)
        .where(unit_entities.c.entity_id.in_(ids), mine(owner_id))
        .group_by(unit_entities.c.unit_id, units.c.occurred_at)  # PostgreSQL: every ordered column grouped
        .order_by(text("n DESC"), units.c.occurred_at.desc(), unit_entities.c.unit_id.desc())
        .limit(k)
    ).all()
    return matched, [(int(r[0]), float(r[1])) for r in rows]


def unicode61_terms(query: str) -> list[str]:
    """Tokens as FTS5 unicode61 sees them: runs of letters/digits split at spaces and punctuation."""
    return list(dict.fromkeys(re.findall(r"\w+", normalize(query))))


def unicode61_lane(conn: Connection, owner_id: str, query: str, k: int) -> Hits:
    """The baseline keyword lane (FTS5 unicode61 over the raw text), for comparison only."""
    return fts_search(conn, FTS_UNICODE61, unicode61_terms(query), k, owner_id)
