"""Embeddings from the cloud providers, so text that must stay inside a company's cloud can (spec 04: embed):
Amazon Bedrock (Titan Text Embeddings, Cohere Embed) through boto3's InvokeModel, and Gemini through the
google-genai SDK's embed_content. Same interface as core.search.embedders: unit-length float32 rows.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.search.embedder_base import EmbeddingError, Matrix, clip, unit_rows
from core.search.embedder_labels import DEFAULT_PROVIDER_MODELS as DEFAULT_MODELS
from core.search.embedder_labels import provider_label
from core.settings import EmbeddingSettings

_BATCH = 64


def _key(kind: str, model: str, dim: int | None) -> str:
    return re.sub(r"[^a-zA-Z0-9._-]", "-", f"{kind}-{model}" + (f"-{dim}" if dim else ""))[:60]


class BedrockEmbedder:
    """Titan (`amazon.titan-embed-*`, one text per request) or Cohere (`cohere.embed-*`, batches with an
    input_type for documents and queries) on Bedrock; credentials from the AWS chain, like the LLM client."""

    def __init__(self, model: str, credentials: dict[str, str], dimensions: int | None = None):
        from botocore.config import Config  # noqa: PLC0415 - the optional bedrock extra

        from core.llm.aws import session  # noqa: PLC0415 - imports boto3 (optional extra)

        self.model, self.dimensions = model, dimensions
        endpoint = credentials.get("KATACHI_BEDROCK_ENDPOINT_URL") or None
        config = Config(retries={"total_max_attempts": 2})
        self._client = session(credentials).client("bedrock-runtime", endpoint_url=endpoint, config=config)
        self._dim: int | None = dimensions

    @property
    def key(self) -> str:
        return _key("bedrock", self.model, self.dimensions)

    @property
    def label(self) -> str:
        return provider_label("bedrock", self.model)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_queries(["次元"]).shape[1])
        return self._dim

    def _invoke(self, body: dict[str, Any]) -> dict[str, Any]:
        try:
            response = self._client.invoke_model(
                modelId=self.model, body=json.dumps(body, ensure_ascii=False)
            )
            data: dict[str, Any] = json.loads(response["body"].read())
            return data
        except Exception as exc:  # noqa: BLE001 - botocore errors: the message says what failed
            raise EmbeddingError(f"Bedrock の埋め込みに失敗しました（{type(exc).__name__}）。") from None

    def _embed(self, texts: Sequence[str], input_type: str) -> Matrix:
        clipped = clip(texts)
        if "cohere." in self.model:
            rows: list[list[float]] = []
            for i in range(0, len(clipped), _BATCH):
                data = self._invoke({"texts": clipped[i : i + _BATCH], "input_type": input_type})
                rows.extend(data["embeddings"])
        else:
            extra = {"dimensions": self.dimensions} if self.dimensions else {}
            rows = [self._invoke({"inputText": t, "normalize": True, **extra})["embedding"] for t in clipped]
        matrix = unit_rows(np.asarray(rows, dtype=np.float32))
        self._dim = int(matrix.shape[1])
        return matrix

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "search_document")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "search_query")


class GeminiEmbedder:
    """Gemini's `embed_content` with RETRIEVAL_DOCUMENT / RETRIEVAL_QUERY task types (API key or Vertex AI)."""

    def __init__(self, model: str, credentials: dict[str, str], dimensions: int | None = None):
        from core.llm.gemini_client import GeminiClient  # noqa: PLC0415 - imports google-genai (optional extra)

        self.model, self.dimensions = model, dimensions
        self._client = GeminiClient(model, credentials)._client
        self._dim: int | None = dimensions

    @property
    def key(self) -> str:
        return _key("gemini", self.model, self.dimensions)

    @property
    def label(self) -> str:
        return provider_label("gemini", self.model)

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed_queries(["次元"]).shape[1])
        return self._dim

    def _embed(self, texts: Sequence[str], task: str) -> Matrix:
        from google.genai import types  # noqa: PLC0415 - the optional gemini extra

        rows: list[list[float]] = []
        clipped = clip(texts)
        config = types.EmbedContentConfig(task_type=task, output_dimensionality=self.dimensions)
        for i in range(0, len(clipped), _BATCH):
            try:
                response = self._client.models.embed_content(
                    model=self.model, contents=list[Any](clipped[i : i + _BATCH]), config=config
                )
            except Exception as exc:  # noqa: BLE001 - google.genai errors
                raise EmbeddingError(f"Gemini の埋め込みに失敗しました（{type(exc).__name__}）。") from None
            rows.extend(list(e.values or []) for e in response.embeddings or [])
        matrix = unit_rows(np.asarray(rows, dtype=np.float32))
        self._dim = int(matrix.shape[1])
        return matrix

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "RETRIEVAL_DOCUMENT")

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return self._embed(texts, "RETRIEVAL_QUERY")


def build_provider_embedder(settings: EmbeddingSettings) -> BedrockEmbedder | GeminiEmbedder:
    """The Bedrock or Gemini embedder the settings name (`kind` bedrock / gemini)."""
    model = settings.model or DEFAULT_MODELS[settings.kind]
    credentials = dict(settings.credentials)
    if settings.kind == "bedrock":
        return BedrockEmbedder(model, credentials, settings.dimensions)
    return GeminiEmbedder(model, credentials, settings.dimensions)
