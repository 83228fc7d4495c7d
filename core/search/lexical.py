"""A small in-memory BM25 index over Japanese lexical keys (core.text.japanese.lexical_keys).

For corpora that fit in memory and change rarely (the owner's manuals: a few hundred chunks), where a database
full-text index would be more machinery than the data. Keys are Sudachi normalized forms and readings, so
ブレーキ / ぶれーき and 締め切り / 締切 meet, as in every other lexical lane of the app.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from core.text.japanese import lexical_keys

Id = TypeVar("Id", bound=Hashable)

BM25_K1 = 1.2
BM25_B = 0.75


@dataclass
class LexicalIndex(Generic[Id]):
    """BM25 over lexical keys. `coverage` is the IDF-weighted share of the query's keys a document holds
    (0..1), a relevance that does not depend on the corpus size the way raw BM25 does."""

    docs: dict[Id, Counter[str]] = field(default_factory=dict)
    df: Counter[str] = field(default_factory=Counter)
    total_len: int = 0

    @classmethod
    def build(cls, texts: Mapping[Id, str]) -> LexicalIndex[Id]:
        index: LexicalIndex[Id] = cls()
        for doc_id, text in texts.items():
            keys = Counter(lexical_keys(text))
            index.docs[doc_id] = keys
            index.df.update(keys.keys())
            index.total_len += sum(keys.values())
        return index

    def idf(self, key: str) -> float:
        n = len(self.docs)
        df = self.df.get(key, 0)
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def search(
        self, query: str, k: int = 20, allowed: frozenset[Id] | set[Id] | None = None
    ) -> list[tuple[Id, float, float]]:
        """The best `k` documents for `query` as (id, bm25, coverage), best first; documents sharing no key
        are left out. `allowed` restricts the candidates (a vehicle's chunks)."""
        keys = list(dict.fromkeys(lexical_keys(query)))
        if not keys or not self.docs:
            return []
        avg = self.total_len / len(self.docs)
        weights = {key: self.idf(key) for key in keys}
        total_weight = sum(weights.values()) or 1.0
        hits = []
        for doc_id, counts in self.docs.items():
            if allowed is not None and doc_id not in allowed:
                continue
            length = sum(counts.values())
            bm25 = 0.0
            covered = 0.0
            for key, weight in weights.items():
                tf = counts.get(key, 0)
                if tf:
                    covered += weight
                    bm25 += (
                        weight * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / avg))
                    )
            if bm25 > 0:
                hits.append((doc_id, bm25, covered / total_weight))
        hits.sort(key=lambda h: -h[1])
        return hits[:k]
