"""Exact nearest neighbours over an in-process copy of a collection's vectors.

Chroma's HNSW graph loses neighbours on the vectors people's memories produce: multilingual-e5 puts every
Japanese sentence within a narrow cone (cosines 0.75-0.97), and a companion hears the same sentences again
and again (「おはよう」, 「今日も疲れた」), so the graph's neighbour lists fill with copies and near-copies and
parts of it cannot be reached. Among 10,000 episodes with repeated sentences, a query's true nearest episode
was missing from HNSW's top 1,000 even with ``ef_search`` 2,000 (tests/bench/meaning.py; the top 20 agreed
with exact search on about 60 % of their places). A person's memory is small enough to search exactly: 10,000
vectors of 684 dimensions (the bundled embedder) are 27 MB (15 MB at 384), and one matrix product takes ~2 ms, faster
than the HNSW query was.

The copy is read from the collection (so embedded Chroma and a Chroma server work alike) and kept fresh
cheaply: each search compares the collection's count with the copy's (one call the lane made anyway); when
they differ, only the missing vectors are fetched and the deleted ones dropped; `forget_ids` drops vectors
this process re-wrote, so they are fetched again; after REFRESH_SECONDS the copy is read again in full (an
edit on another replica that left the count unchanged is seen by then). At most MAX_COLLECTIONS copies are
kept (least recently used dropped first).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

REFRESH_SECONDS = 300.0
MAX_COLLECTIONS = 16
_FETCH_BATCH = 2_000


@dataclass
class Neighbour:
    """One stored vector near a query: its id, cosine distance (1 - cosine), document and metadata."""

    id: str
    distance: float
    document: str | None
    metadata: Mapping[str, Any] | None


@dataclass
class _Copy:
    ids: list[str] = field(default_factory=list)
    matrix: np.ndarray[Any, np.dtype[np.float32]] = field(
        default_factory=lambda: np.zeros((0, 0), np.float32)
    )
    documents: list[str | None] = field(default_factory=list)
    metadatas: list[Mapping[str, Any] | None] = field(default_factory=list)
    loaded_at: float = 0.0

    def drop(self, gone: set[str]) -> None:
        keep = [i for i, uid in enumerate(self.ids) if uid not in gone]
        self.ids = [self.ids[i] for i in keep]
        self.matrix = self.matrix[keep] if len(self.matrix) else self.matrix
        self.documents = [self.documents[i] for i in keep]
        self.metadatas = [self.metadatas[i] for i in keep]

    def add(self, got: Mapping[str, Any]) -> None:
        ids = list(got["ids"])
        if not ids:
            return
        rows = _unit_rows(np.asarray(got["embeddings"], np.float32))
        self.matrix = rows if not self.ids else np.vstack([self.matrix, rows])
        self.ids += ids
        self.documents += list(got.get("documents") or [None] * len(ids))
        self.metadatas += list(got.get("metadatas") or [None] * len(ids))


_copies: OrderedDict[str, _Copy] = OrderedDict()
_lock = threading.Lock()


def _key(collection: Collection) -> str:
    return str(collection.id)


def _unit_rows(matrix: np.ndarray[Any, np.dtype[np.float32]]) -> np.ndarray[Any, np.dtype[np.float32]]:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def _fetch(collection: Collection, ids: Sequence[str] | None = None) -> list[Mapping[str, Any]]:
    include: Any = ["embeddings", "documents", "metadatas"]
    if ids is None:
        return [collection.get(include=include)]
    wanted = list(ids)
    return [
        collection.get(ids=wanted[s : s + _FETCH_BATCH], include=include)
        for s in range(0, len(wanted), _FETCH_BATCH)
    ]


def _fresh_copy(collection: Collection, count: int, clock: Callable[[], float]) -> _Copy:
    """The collection's copy, brought up to date (the caller holds the lock)."""
    key = _key(collection)
    copy = _copies.get(key)
    now = clock()
    if copy is None or now - copy.loaded_at > REFRESH_SECONDS:
        copy = _Copy(loaded_at=now)
        for got in _fetch(collection):
            copy.add(got)
    elif count != len(copy.ids):
        stored = set(collection.get(include=[])["ids"])
        held = set(copy.ids)
        copy.drop(held - stored)
        for got in _fetch(collection, sorted(stored - held)):
            copy.add(got)
    _copies[key] = copy
    _copies.move_to_end(key)
    while len(_copies) > MAX_COLLECTIONS:
        _copies.popitem(last=False)
    return copy


def exact_query(
    collection: Collection,
    query_embeddings: np.ndarray[Any, np.dtype[np.float32]],
    n: int,
    *,
    count: int | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[list[Neighbour]]:
    """The `n` nearest stored vectors to each query row, nearest first (cosine; ties by id order)."""
    count = collection.count() if count is None else count
    with _lock:
        copy = _fresh_copy(collection, count, clock)
        ids, matrix, documents, metadatas = copy.ids, copy.matrix, copy.documents, copy.metadatas
    if not ids:
        return [[] for _ in range(len(query_embeddings))]
    queries = _unit_rows(np.asarray(query_embeddings, np.float32))
    # numpy's own loops, not BLAS: OpenBLAS's threads keep spinning after a product and took the two cores
    # from the embedding engine's threads (a query's embedding went from 10 to 37 ms at 10,000 vectors)
    scores = np.einsum("ij,kj->ki", matrix, queries, optimize=False)
    n = min(n, len(ids))
    out = []
    for row in scores:
        top = np.argpartition(-row, n - 1)[:n] if n < len(ids) else np.arange(len(ids))
        top = top[np.lexsort((top, -row[top]))]
        out.append([Neighbour(ids[i], float(1.0 - row[i]), documents[i], metadatas[i]) for i in top])
    return out


def exact_query_texts(
    collection: Collection, texts: Sequence[str], n: int, *, count: int | None = None
) -> list[list[Neighbour]]:
    """`exact_query` for texts, embedded as queries by the collection's own embedding function (the
    embedder that built it, core.search.vectors.EmbedderFunction)."""
    function: Any = collection._embedding_function
    embed = getattr(function, "embed_query", None) or function
    return exact_query(collection, np.asarray(embed(list(texts)), np.float32), n, count=count)


def forget_ids(collection: Collection, ids: Sequence[str]) -> None:
    """Drop `ids` from this process's copy (they were just re-written or deleted): the next search fetches
    what the collection holds for them."""
    with _lock:
        copy = _copies.get(_key(collection))
        if copy is not None:
            copy.drop(set(ids))


def forget_all() -> None:
    """Drop every copy (tests; a switch of embedder)."""
    with _lock:
        _copies.clear()
