"""Scores of Chroma's cosine distances, without importing chromadb (over a second to import): what a page
or a flow needs to rank results from a collection it was handed.

A collection records the key of the embedder that built it in its metadata (core.search.vectors), and a
distance is turned into a relevance calibrated for that embedder (core.search.embedders.relevance).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from core.search.embedders import relevance


class HasMetadata(Protocol):
    """What is read of a Chroma collection here: its metadata."""

    @property
    def metadata(self) -> Mapping[str, Any] | None: ...


def chroma_label(host: str | None, port: int) -> str:
    """Which Chroma is in use, safe to show."""
    return f"Chroma サーバー {host}:{port}" if host else "Chroma（組み込み）"


def collection_embedder_key(collection: HasMetadata) -> str:
    """The key of the embedder that built ``collection`` (its metadata), or "" for an older collection."""
    return str((collection.metadata or {}).get("embedder") or "")


def relevance_score(collection: HasMetadata, distance: float | None) -> float:
    """A cosine distance from ``collection`` as a relevance in [0, 1] calibrated for its embedder
    (core.search.embedders.relevance): what the spec's thresholds (RAG's 0.3) are applied to."""
    return relevance(collection_embedder_key(collection), cosine_score(distance))


def cosine_score(distance: float | None) -> float:
    """Turn a Chroma cosine distance (0 = same direction, up to 2) into a similarity in [0, 1].

    ``1 - distance`` clamped; ``None`` (no distance returned) scores 0. Used by RAG thresholds.
    """
    if distance is None:
        return 0.0
    return min(1.0, max(0.0, 1.0 - float(distance)))
