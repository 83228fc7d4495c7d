"""Exact search over a process's copy of a collection's vectors (core.search.exact): the same order as a
brute-force cosine, and a copy that follows additions, deletions and re-written vectors."""

from __future__ import annotations

import uuid

import chromadb
import numpy as np
import pytest

from core.search import exact
from core.search.embedders import NgramEmbedder
from core.search.vectors import get_collection


@pytest.fixture(autouse=True)
def _fresh_copies():
    exact.forget_all()
    yield
    exact.forget_all()


def _collection(vectors: np.ndarray, ids: list[str] | None = None):
    c = chromadb.EphemeralClient().get_or_create_collection(
        f"exact-{uuid.uuid4().hex[:12]}", configuration={"hnsw": {"space": "cosine"}}
    )
    ids = ids or [str(i) for i in range(len(vectors))]
    c.add(
        ids=ids,
        embeddings=vectors,
        documents=[f"doc {i}" for i in ids],
        metadatas=[{"n": int(i)} for i in ids],
    )
    return c


def _unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def test_the_order_is_the_brute_force_cosine_order_with_distance_documents_and_metadata():
    rng = np.random.default_rng(3)
    vectors = _unit(rng.normal(size=(300, 16)))
    queries = _unit(rng.normal(size=(4, 16)))
    c = _collection(vectors)
    found = exact.exact_query(c, queries, 10)
    for q, hits in zip(queries, found, strict=True):
        cosine = vectors @ q
        assert [h.id for h in hits] == [str(i) for i in np.argsort(-cosine, kind="stable")[:10]]
        assert [round(h.distance, 5) for h in hits] == [round(1 - float(cosine[int(h.id)]), 5) for h in hits]
        assert hits[0].document == f"doc {hits[0].id}"
        assert hits[0].metadata == {"n": int(hits[0].id)}


def test_a_unique_vector_among_thousands_of_copies_is_found_first():
    """The shape HNSW loses (many copies of few sentences in a narrow cone): exact search does not."""
    rng = np.random.default_rng(7)
    centre = rng.normal(size=32)
    few = _unit(centre + 0.15 * rng.normal(size=(40, 32)))
    copies = np.repeat(few, 50, axis=0)  # 2,000 vectors, 40 distinct
    target = _unit((centre + 0.15 * rng.normal(size=32))[None, :])
    vectors = np.vstack([copies, target])
    query = _unit(target + 0.01 * rng.normal(size=(1, 32)))
    c = _collection(vectors)
    (hits,) = exact.exact_query(c, query, 20)
    assert hits[0].id == str(len(vectors) - 1)


def test_the_copy_follows_additions_deletions_and_rewritten_vectors():
    rng = np.random.default_rng(5)
    vectors = _unit(rng.normal(size=(50, 8)))
    c = _collection(vectors)
    far = _unit(rng.normal(size=(1, 8)))
    assert exact.exact_query(c, far, 1)[0][0].id != "new"

    c.add(ids=["new"], embeddings=far, documents=["new"])  # the count changes: the new vector is fetched
    assert exact.exact_query(c, far, 1)[0][0].id == "new"

    c.delete(ids=["new"])
    assert "new" not in [h.id for h in exact.exact_query(c, far, 60)[0]]

    c.upsert(ids=["0"], embeddings=far)  # same id, same count: seen only once forgotten
    assert exact.exact_query(c, far, 1)[0][0].id != "0"
    exact.forget_ids(c, ["0"])
    assert exact.exact_query(c, far, 1)[0][0].id == "0"


def test_after_the_refresh_period_the_copy_is_read_again(monkeypatch):
    rng = np.random.default_rng(9)
    c = _collection(_unit(rng.normal(size=(20, 8))))
    far = _unit(rng.normal(size=(1, 8)))
    now = [1000.0]
    exact.exact_query(c, far, 1, clock=lambda: now[0])
    c.upsert(ids=["3"], embeddings=far)  # another replica's edit: the count is unchanged
    assert exact.exact_query(c, far, 1, clock=lambda: now[0])[0][0].id != "3"
    now[0] += exact.REFRESH_SECONDS + 1
    assert exact.exact_query(c, far, 1, clock=lambda: now[0])[0][0].id == "3"


def test_at_most_max_collections_copies_are_kept(monkeypatch):
    monkeypatch.setattr(exact, "MAX_COLLECTIONS", 2)
    rng = np.random.default_rng(1)
    made = [_collection(_unit(rng.normal(size=(5, 8)))) for _ in range(3)]
    for c in made:
        exact.exact_query(c, _unit(rng.normal(size=(1, 8))), 1)
    assert list(exact._copies) == [str(made[1].id), str(made[2].id)]


def test_texts_are_embedded_as_queries_by_the_collections_own_embedder():
    embedder = NgramEmbedder()
    c = get_collection(chromadb.EphemeralClient(), f"texts-{uuid.uuid4().hex[:8]}", embedder=embedder)
    c.add(ids=["a", "b"], documents=["ラーメンを食べた", "電車が遅れた"])
    (hits,) = exact.exact_query_texts(c, ["ラーメン"], 2)
    assert [h.id for h in hits] == ["a", "b"]
    expected = 1 - float(
        embedder.embed_queries(["ラーメン"])[0] @ embedder.embed_documents(["ラーメンを食べた"])[0]
    )
    assert hits[0].distance == pytest.approx(expected, abs=1e-5)
