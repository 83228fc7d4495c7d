"""What each embedder is called on screen, from its settings alone: the sidebar and the debug page name the
deployment's embedder on every page, and building the embedder (numpy, the model) only to read its name would put
those imports on the first paint. The embedders take their labels from here, so the two never disagree."""

from __future__ import annotations

import re

from core.settings import EmbeddingSettings

# a non-breaking hyphen in e5‑small: the narrow sidebar wrapped the name after "e5-"
BUNDLED_LABEL = "同梱モデル（e5‑small＋語ベクトル chiVe・オフライン）"
E5_LABEL = "同梱モデル multilingual-e5-small（4bit・384次元・オフライン）"
NGRAM_LABEL = "文字 n-gram ハッシュ（モデルなし）"
DEFAULT_API_MODEL = "text-embedding-3-small"
# the cloud providers' embedding models when KATACHI_EMBEDDINGS_MODEL names none (core.search.provider_embedders)
DEFAULT_PROVIDER_MODELS = {"bedrock": "amazon.titan-embed-text-v2:0", "gemini": "gemini-embedding-001"}


def host(url: str) -> str:
    """The host of a URL (credentials in it left out): what a label may show of an endpoint."""
    m = re.match(r"^[a-z]+://([^/@]*@)?([^/]+)", url)
    return m.group(2) if m else url


def api_label(model: str, base_url: str | None) -> str:
    return f"埋め込み API {model}（{host(base_url) if base_url else 'OpenAI'}）"


def provider_label(kind: str, model: str) -> str:
    return f"Amazon Bedrock の埋め込み（{model}）" if kind == "bedrock" else f"Gemini の埋め込み（{model}）"


def embedder_label(settings: EmbeddingSettings) -> str:
    """The label of the embedder `core.search.embedders.build_embedder(settings)` builds."""
    if settings.kind == "openai":
        return api_label(settings.model or DEFAULT_API_MODEL, settings.base_url)
    if settings.kind == "ngram":
        return NGRAM_LABEL
    if settings.kind == "e5":
        return E5_LABEL
    if settings.kind in DEFAULT_PROVIDER_MODELS:
        return provider_label(settings.kind, settings.model or DEFAULT_PROVIDER_MODELS[settings.kind])
    return BUNDLED_LABEL


def knowledge_embedder_label(settings: EmbeddingSettings) -> str:
    """The label of the embedder the knowledge base uses: the bundled embedder's sentence model alone
    (core.search.embedders.sentence_model), any other embedder as it is."""
    return E5_LABEL if settings.kind == "bundled" else embedder_label(settings)
