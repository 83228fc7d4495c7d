"""Reciprocal rank fusion (Cormack et al. 2009) of ranked lists: the one way dense and lexical lanes meet."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TypeVar

RRF_K = 60  # the paper's constant: a document's rank r in a list adds 1 / (60 + r + 1)

Id = TypeVar("Id", bound=Hashable)


def rrf_term(rank: int, k: int = RRF_K) -> float:
    """The fusion term of a 0-based rank."""
    return 1.0 / (k + rank + 1)


def rrf_merge(
    lists: Sequence[Sequence[Id]],
    top: int | None = None,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[tuple[Id, float]]:
    """Fuse ranked id lists: the (weighted) sum of each id's terms, best first (ties by first appearance), at
    most `top`. `weights`: one per list (default 1 each)."""
    scores: dict[Id, float] = {}
    for n, ids in enumerate(lists):
        weight = 1.0 if weights is None else weights[n]
        for rank, item in enumerate(ids):
            scores[item] = scores.get(item, 0.0) + weight * rrf_term(rank, k)
    order = sorted(scores.items(), key=lambda kv: -kv[1])
    return order if top is None else order[:top]
