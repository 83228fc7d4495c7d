"""ChromaDB client, collections and the Chroma side of the embedders (ARCHITECTURE.md, "Data at rest").

Chroma's default embedding function downloads an ONNX model at first use and fails offline, so every
collection here embeds with the app's own embedder (core.search.embedders: the bundled multilingual model by
default, an OpenAI-compatible endpoint, or the n-gram hash below), wrapped as :class:`EmbedderFunction`.

A collection records which embedder and dimension built it: its name ends with the embedder's key
(``memory_units-e5small-q4``) and its metadata holds ``embedder`` and ``dim``. Switching embedders therefore
opens a new, empty collection that the reconcile code fills from the database (with progress), instead of
mixing vectors of two models or two dimensions in one index.

The same holds against a Chroma server (``CHROMA_HOST``, `chroma run`): an ``HttpClient`` embeds on the client
side with the function, so the server stores and searches vectors and never loads a model; every replica
computes identical vectors (the embedders are deterministic across processes).

:class:`NgramHashEmbedding` stays registered under ``"katachi_ngram_hash"`` so collections written before
the embedders existed still open.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function

from core.search.embedders import Embedder, NgramEmbedder, default_embedder
from core.search.ngram import DEFAULT_DIM, embed_text, normalize_text
from core.search.scores import chroma_label, collection_embedder_key, cosine_score, relevance_score

__all__ = [
    "DEFAULT_DIM",
    "EF_NAME",
    "EMBEDDER_EF_NAME",
    "HNSW_EF_SEARCH",
    "EmbedderFunction",
    "NgramHashEmbedding",
    "chroma_label",
    "collection_embedder_key",
    "cosine_score",
    "embed_text",
    "get_collection",
    "normalize_text",
    "open_chroma",
    "relevance_score",
]

EF_NAME = "katachi_ngram_hash"
EMBEDDER_EF_NAME = "katachi_embedder"
# HNSW search breadth. Short queries often share no n-gram with most documents: every distance is
# then exactly 1.0 and HNSW's greedy walk has no gradient, so with Chroma's default (100) it missed
# the one relevant document among 1,000 unrelated ones in ~1 of 3 runs. Searching at least as wide
# as the collection makes the walk exhaustive for our sizes; it costs ~1-3 ms per query.
HNSW_EF_SEARCH = 2000


@register_embedding_function
class NgramHashEmbedding(EmbeddingFunction[Documents]):
    """Offline Chroma embedding function: signed hashed character 2-/3-grams, L2-normalized.

    Deterministic across instances and processes (SplitMix64, not Python's salted ``hash``), needs no
    download, and suits Japanese text. Meant for cosine space (:meth:`default_space`).
    """

    def __init__(self, dim: int = DEFAULT_DIM) -> None:
        """Create the function; ``dim`` is the number of hash buckets (the vector length)."""
        self.validate_config({"dim": dim})
        self.dim = int(dim)

    def __call__(self, input: Documents) -> Embeddings:
        """Embed each document (see :func:`embed_text`); returns float32 numpy vectors."""
        return [embed_text(doc, self.dim) for doc in input]

    @staticmethod
    def name() -> str:
        """The name Chroma persists with the collection and looks the class up by."""
        return EF_NAME

    def default_space(self) -> Space:
        """Cosine: vectors are unit length, so cosine distance is the natural metric."""
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        """Cosine, and ``ip`` (equal to cosine on unit vectors); ``l2`` works too but ranks the same."""
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        """Serializable config persisted with the collection."""
        return {"dim": self.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> NgramHashEmbedding:
        """Rebuild the function from a persisted config (what Chroma calls on ``get_collection``)."""
        return NgramHashEmbedding(dim=int(config.get("dim", DEFAULT_DIM)))

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        """Reject a non-positive or non-integer ``dim``."""
        dim = config.get("dim", DEFAULT_DIM)
        if isinstance(dim, bool) or not isinstance(dim, int) or dim <= 0:
            raise ValueError(f"{EF_NAME}: dim must be a positive int, got {dim!r}")

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        """Changing ``dim`` would silently break stored vectors, so it is refused."""
        if "dim" in new_config and new_config["dim"] != old_config.get("dim", DEFAULT_DIM):
            raise ValueError(f"{EF_NAME}: dim cannot change on an existing collection")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NgramHashEmbedding) and other.dim == self.dim

    def __hash__(self) -> int:
        return hash((EF_NAME, self.dim))

    def __repr__(self) -> str:
        return f"NgramHashEmbedding(dim={self.dim})"


def open_chroma(
    data_dir: Path | str | None = None,
    host: str | None = None,
    port: int = 8000,
) -> ClientAPI:
    """Open Chroma: a server client (``HttpClient``) when ``host`` (or env ``CHROMA_HOST``) is set, else
    embedded (``PersistentClient``, one process only: Chroma's docs call it unsuitable for more).

    Embedded data lives in ``<data_dir>/chroma``; ``data_dir`` defaults to env ``APP_DATA_DIR`` or
    ``.data``. With ``CHROMA_HOST`` from the environment, env ``CHROMA_PORT`` overrides ``port``.
    Telemetry is switched off. Within one process Chroma shares one client per path, so every
    caller must use the same settings (this function always does).
    """
    settings = Settings(anonymized_telemetry=False, allow_reset=True)
    if host is None and os.environ.get("CHROMA_HOST"):
        host = os.environ["CHROMA_HOST"]
        port = int(os.environ.get("CHROMA_PORT", port))
    if host:
        return chromadb.HttpClient(host=host, port=port, settings=settings)
    base = Path(data_dir if data_dir is not None else os.environ.get("APP_DATA_DIR") or ".data")
    path = base / "chroma"
    path.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(path), settings=settings)


# Embedders this process has built collections with, by key: what Chroma's build_from_config finds when a
# collection is opened without passing its function (get_collection always passes it).
_LIVE: dict[str, Embedder] = {}


@register_embedding_function
class EmbedderFunction(EmbeddingFunction[Documents]):
    """Chroma's view of an app embedder: documents through ``embed_documents``, query texts through
    ``embed_queries`` (Chroma calls ``embed_query`` for ``query_texts``). Persisted as its key and dim."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        _LIVE.setdefault(embedder.key, embedder)

    def __call__(self, input: Documents) -> Embeddings:
        """Embed documents (e5: ``passage: ``)."""
        return list(self.embedder.embed_documents(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        """Embed query texts (e5: ``query: ``)."""
        return list(self.embedder.embed_queries(list(input)))

    @staticmethod
    def name() -> str:
        return EMBEDDER_EF_NAME

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "ip", "l2"]

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self.embedder.key, "dim": self.embedder.dim}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> EmbedderFunction:
        """The live embedder of that key; the offline ones can be rebuilt, an API one needs its settings."""
        key = str(config.get("embedder", ""))
        if key in _LIVE:
            return EmbedderFunction(_LIVE[key])
        if key == default_embedder().key:
            return EmbedderFunction(default_embedder())
        if key.startswith("ngram"):
            return EmbedderFunction(NgramEmbedder(int(config.get("dim", DEFAULT_DIM))))
        raise ValueError(f"{EMBEDDER_EF_NAME}: embedder {key!r} is not configured in this process")

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        if not isinstance(config.get("embedder"), str):
            raise ValueError(f"{EMBEDDER_EF_NAME}: config needs an embedder key")

    def validate_config_update(self, old_config: dict[str, Any], new_config: dict[str, Any]) -> None:
        if new_config.get("embedder", old_config.get("embedder")) != old_config.get("embedder"):
            raise ValueError(f"{EMBEDDER_EF_NAME}: a collection's embedder cannot change")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EmbedderFunction) and other.embedder.key == self.embedder.key

    def __hash__(self) -> int:
        return hash((EMBEDDER_EF_NAME, self.embedder.key))


def get_collection(
    client: ClientAPI,
    name: str,
    *,
    embedder: Embedder | None = None,
    metadata: dict[str, Any] | None = None,
) -> Collection:
    """Get or create the collection of ``name`` for ``embedder`` (default: the bundled model) in cosine space.

    The Chroma name is ``<name>-<embedder key>`` and the metadata records ``embedder`` and ``dim`` (applied
    when the collection is created), so each embedder has its own index. The space is set through
    ``configuration={"hnsw": {"space": "cosine", ...}}`` with a wide ``ef_search`` (:data:`HNSW_EF_SEARCH`).
    Raises ``ValueError`` if an existing collection of that name was built with another dimension.
    """
    embedder = embedder or default_embedder()
    collection = client.get_or_create_collection(
        f"{name}-{embedder.key}",
        configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
        metadata={**(metadata or {}), "embedder": embedder.key, "dim": embedder.dim},
        # chromadb types the parameter as EmbeddingFunction[Documents | Images] (invariant): a text-only
        # function, like chromadb's own, cannot match it.
        embedding_function=EmbedderFunction(embedder),  # type: ignore[arg-type]
    )
    stored_dim = (collection.metadata or {}).get("dim")
    if stored_dim is not None and stored_dim != embedder.dim:
        raise ValueError(
            f"collection {collection.name!r} holds dim={stored_dim} vectors, not dim={embedder.dim}"
        )
    return collection
