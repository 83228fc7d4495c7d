"""ChromaDB client, collections and the offline embedding function (ARCHITECTURE.md, "Data at rest").

Chroma's default embedding function downloads an ONNX model at first use and fails offline, so
every collection here is created with :class:`NgramHashEmbedding`: hashed character 2-/3-grams,
which need no model, work for Japanese (no tokenizer) and are deterministic across processes.

The class is registered with Chroma under ``"katachi_ngram_hash"`` when this module is imported.
Chroma stores the function's name and config (``{"dim": ...}``) with the collection, so any process
that has imported ``core.vectors`` can call ``client.get_collection(name)`` without passing the
function again. A process that has not imported it gets a "not found" error on the first text query.

The same holds against a Chroma server (``CHROMA_HOST``, `chroma run`): an ``HttpClient`` embeds on the
client side with this function, so the server stores and searches vectors and never loads a model; every
replica computes identical vectors (the function is deterministic across processes).
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import numpy.typing as npt
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function

__all__ = [
    "DEFAULT_DIM",
    "EF_NAME",
    "HNSW_EF_SEARCH",
    "NgramHashEmbedding",
    "chroma_label",
    "cosine_score",
    "embed_text",
    "get_collection",
    "normalize_text",
    "open_chroma",
]

EF_NAME = "katachi_ngram_hash"
DEFAULT_DIM = 512
# HNSW search breadth. Short queries often share no n-gram with most documents: every distance is
# then exactly 1.0 and HNSW's greedy walk has no gradient, so with Chroma's default (100) it missed
# the one relevant document among 1,000 unrelated ones in ~1 of 3 runs. Searching at least as wide
# as the collection makes the walk exhaustive for our sizes; it costs ~1-3 ms per query.
HNSW_EF_SEARCH = 2000

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_TAG_SHORT = np.uint64(1 << 63)  # marks 1-/2-gram keys so they never equal a 3-gram key


def _mix64(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """SplitMix64 finalizer on uint64 arrays: a fixed bijection that spreads every input bit.

    Pure integer arithmetic (wrapping mod 2**64), so the result is the same in every process and
    on every platform, unlike Python's salted ``hash``.
    """
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def _ngram_keys(text: str) -> npt.NDArray[np.uint64]:
    """Pack each character 2-gram and 3-gram of ``text`` into one distinct uint64 key.

    Code points fit in 21 bits, so a 3-gram packs exactly into 63 bits and a 2-gram into 42 bits
    plus a tag bit: different n-grams always get different keys (no collisions before bucketing).
    A 1-character text is its own feature; an empty text has none.
    """
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.uint64)
    if len(cps) < 2:
        return cps | _TAG_SHORT
    bigrams = (cps[:-1] << np.uint64(21)) | cps[1:] | _TAG_SHORT
    trigrams = (cps[:-2] << np.uint64(42)) | (cps[1:-1] << np.uint64(21)) | cps[2:]
    return np.concatenate([bigrams, trigrams])


def normalize_text(text: str) -> str:
    """NFKC-normalize, lowercase and drop all whitespace (so ``"ＡＢＳ"`` and ``"a b s"`` equal ``"abs"``)."""
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


def embed_text(text: str, dim: int = DEFAULT_DIM) -> np.ndarray:
    """Embed one text as a unit-length float32 vector of length ``dim``.

    Each n-gram adds ±1 to its hashed bucket (a sign bit from the same stable 64-bit hash, so
    colliding n-grams tend to cancel rather than pile up; see :func:`_mix64`), then
    the vector is L2-normalized. Text with no features (empty or whitespace only) gets the fixed
    unit vector ``e_0`` instead of a zero vector, whose cosine distance is undefined; all such texts
    are therefore identical to each other and roughly orthogonal to real text.
    """
    hashes = _mix64(_ngram_keys(normalize_text(text)))
    vec: np.ndarray = np.zeros(dim, dtype=np.float64)
    if hashes.size:
        buckets = ((hashes & np.uint64(0x7FFF_FFFF_FFFF_FFFF)) % np.uint64(dim)).astype(np.intp)
        signs = np.where(hashes >> np.uint64(63), -1.0, 1.0)
        vec = np.bincount(buckets, weights=signs, minlength=dim)
    norm = float(np.linalg.norm(vec))
    if norm == 0.0:  # no features, or (very unlikely) every feature cancelled out
        vec = np.zeros(dim, dtype=np.float64)
        vec[0] = 1.0
        norm = 1.0
    return (vec / norm).astype(np.float32)


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


def chroma_label(host: str | None, port: int) -> str:
    """Which Chroma is in use, safe to show."""
    return f"Chroma サーバー {host}:{port}" if host else "Chroma（組み込み）"


def get_collection(
    client: ClientAPI,
    name: str,
    *,
    dim: int = DEFAULT_DIM,
    metadata: dict[str, Any] | None = None,
) -> Collection:
    """Get or create collection ``name`` with :class:`NgramHashEmbedding` in cosine space.

    The space is set through ``configuration={"hnsw": {"space": "cosine", ...}}`` (the Chroma 1.x
    way; ``metadata["hnsw:space"]`` is the legacy form), with a wide ``ef_search`` (see
    :data:`HNSW_EF_SEARCH`). ``metadata`` must not be empty (Chroma rejects
    ``{}``); it is only applied when the collection is created. Raises ``ValueError`` if an
    existing collection was built with another embedding function or another ``dim``.
    """
    collection = client.get_or_create_collection(
        name,
        configuration={"hnsw": {"space": "cosine", "ef_search": HNSW_EF_SEARCH}},
        metadata=metadata or None,
        # chromadb types the parameter as EmbeddingFunction[Documents | Images] (invariant): a text-only
        # function, like chromadb's own, cannot match it.
        embedding_function=NgramHashEmbedding(dim),  # type: ignore[arg-type]
    )
    persisted = (collection.configuration_json or {}).get("embedding_function") or {}
    persisted_dim = (persisted.get("config") or {}).get("dim")
    if persisted.get("name") == EF_NAME and persisted_dim is not None and persisted_dim != dim:
        raise ValueError(f"collection {name!r} was created with dim={persisted_dim}, not dim={dim}")
    return collection


def cosine_score(distance: float | None) -> float:
    """Turn a Chroma cosine distance (0 = same direction, up to 2) into a similarity in [0, 1].

    ``1 - distance`` clamped; ``None`` (no distance returned) scores 0. Used by RAG thresholds.
    """
    if distance is None:
        return 0.0
    return min(1.0, max(0.0, 1.0 - float(distance)))
