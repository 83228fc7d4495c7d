"""Embeddings from the providers (core.search.provider_embedders): Bedrock Titan and Cohere through boto3's
InvokeModel (SigV4-signed), Gemini through google-genai's embed_content, against tests/core/cloud_wire.py."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from core.search.embedders import build_embedder
from core.settings import EmbeddingSettings, load_settings
from tests.core.cloud_wire import CloudWire

pytest.importorskip("boto3")
pytest.importorskip("google.genai")

KEY = "test-key-7Qm2Zx9Lw4"


@pytest.fixture
def wire() -> Iterator[CloudWire]:
    with CloudWire() as server:
        yield server


def bedrock(wire: CloudWire, model: str) -> EmbeddingSettings:
    creds = (
        ("AWS_REGION", "ap-northeast-1"),
        ("AWS_ACCESS_KEY_ID", "AKIDTESTKATACHI01"),
        ("AWS_SECRET_ACCESS_KEY", KEY),
        ("KATACHI_BEDROCK_ENDPOINT_URL", wire.url),
    )
    return EmbeddingSettings("bedrock", model, credentials=creds)


def test_titan_embeds_one_text_per_signed_request(wire: CloudWire) -> None:
    embedder = build_embedder(bedrock(wire, "amazon.titan-embed-text-v2:0"))
    rows = embedder.embed_documents(["契約書", "見積書"])
    assert rows.shape == (2, 3) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    first, second = wire.requests
    assert first.path == "/model/amazon.titan-embed-text-v2%3A0/invoke"
    assert first.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTESTKATACHI01/")
    assert (first.body, second.body) == (
        {"inputText": "契約書", "normalize": True},
        {"inputText": "見積書", "normalize": True},
    )
    assert embedder.key == "bedrock-amazon.titan-embed-text-v2-0" and "Bedrock" in embedder.label


def test_cohere_batches_with_the_input_type_of_documents_and_queries(wire: CloudWire) -> None:
    embedder = build_embedder(bedrock(wire, "cohere.embed-multilingual-v3"))
    docs = embedder.embed_documents(["契約書", "見積書", "請求書"])
    query = embedder.embed_queries(["契約"])
    assert docs.shape == (3, 3) and query.shape == (1, 3) and embedder.dim == 3
    assert wire.requests[0].body == {"texts": ["契約書", "見積書", "請求書"], "input_type": "search_document"}
    assert wire.requests[1].body == {"texts": ["契約"], "input_type": "search_query"}


def test_gemini_embeds_with_retrieval_task_types(wire: CloudWire) -> None:
    creds = (("GEMINI_API_KEY", KEY), ("KATACHI_GEMINI_BASE_URL", wire.url))
    embedder = build_embedder(
        EmbeddingSettings("gemini", "gemini-embedding-001", dimensions=3, credentials=creds)
    )
    rows = embedder.embed_documents(["契約書", "見積書"])
    assert rows.shape == (2, 3) and np.allclose(np.linalg.norm(rows, axis=1), 1.0)
    (request,) = wire.requests
    assert request.path.startswith("/v1") and "gemini-embedding-001" in request.path
    assert request.headers["x-goog-api-key"] == KEY
    text = json.dumps(request.body, ensure_ascii=False)
    assert "RETRIEVAL_DOCUMENT" in text and "契約書" in text and "見積書" in text
    embedder.embed_queries(["契約"])
    assert "RETRIEVAL_QUERY" in json.dumps(wire.requests[-1].body)


def test_settings_name_the_provider_embedders_and_hide_their_keys() -> None:
    s = load_settings(env={"KATACHI_EMBEDDINGS": "gemini", "GEMINI_API_KEY": KEY})
    assert s.embeddings.kind == "gemini" and KEY in s.secrets and KEY not in repr(s.embeddings)
    b = load_settings(
        env={"KATACHI_EMBEDDINGS": "bedrock", "KATACHI_EMBEDDINGS_MODEL": "cohere.embed-multilingual-v3"}
    )
    assert (b.embeddings.kind, b.embeddings.model) == ("bedrock", "cohere.embed-multilingual-v3")


def test_the_label_read_from_the_settings_is_the_provider_embedders_own(wire: CloudWire) -> None:
    from core.search.embedder_labels import embedder_label  # noqa: PLC0415

    for settings in (
        bedrock(wire, "cohere.embed-multilingual-v3"),
        EmbeddingSettings("bedrock", None, credentials=bedrock(wire, "x").credentials),
    ):
        assert embedder_label(settings) == build_embedder(settings).label
    assert (
        embedder_label(EmbeddingSettings("bedrock"))
        == "Amazon Bedrock の埋め込み（amazon.titan-embed-text-v2:0）"
    )
    assert embedder_label(EmbeddingSettings("gemini")) == "Gemini の埋め込み（gemini-embedding-001）"
