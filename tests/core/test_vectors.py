"""core.search.vectors: the offline n-gram embedding, Chroma collections on disk, reopening elsewhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.utils.embedding_functions import DefaultEmbeddingFunction, known_embedding_functions
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

from core.search import vectors
from core.search.embedders import NgramEmbedder
from core.search.vectors import (
    EF_NAME,
    EMBEDDER_EF_NAME,
    HNSW_EF_SEARCH,
    NgramHashEmbedding,
    cosine_score,
    embed_text,
    get_collection,
    open_chroma,
)

REPO = Path(__file__).resolve().parents[2]

DOCS = {
    "d1": ("ブレーキが効きにくい", {"vehicle_id": "A"}),
    "d2": ("エアコンの風が弱い", {"vehicle_id": "B"}),
    "d3": ("新宿でラーメンを食べた", {"vehicle_id": "A"}),
    "d4": ("ABSの警告灯が点灯した", {"vehicle_id": "B"}),
}

# Run in the child process: poison Chroma's default embedding, open the collection with no
# embedding function, and print what it finds (plus one embedding, to compare across processes).
CHILD = textwrap.dedent(
    """
    import json, sys
    import chromadb
    from chromadb.api.types import DefaultEmbeddingFunction

    def boom(self, input):  # Chroma checks this exact signature
        raise AssertionError("Chroma default embedding function used")

    DefaultEmbeddingFunction.__call__ = boom
    DefaultEmbeddingFunction.embed_query = boom
    if sys.argv[2] == "import":
        import core.search.vectors  # registers katachi_embedder (and the older katachi_ngram_hash)
    client = chromadb.PersistentClient(path=sys.argv[1])
    col = client.get_collection("faults-ngram512")
    res = col.query(query_texts=["ブレーキの効きが悪い"], n_results=2)
    from chromadb.utils.embedding_functions import known_embedding_functions
    ef = known_embedding_functions["katachi_ngram_hash"](512)
    print(json.dumps({
        "ids": res["ids"][0],
        "ef": col.configuration_json["embedding_function"],
        "vec": [float(x) for x in ef(["ブレーキ"])[0]],
    }))
    """
)


@pytest.fixture(autouse=True)
def _fresh_chroma_cache() -> Iterator[None]:
    """Chroma keeps one system per path per process; drop them so tests stay independent."""
    yield
    SharedSystemClient.clear_system_cache()


@pytest.fixture
def no_default_ef(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any use of Chroma's default (downloading) embedding function fail loudly."""

    def boom(self: Any, input: Any) -> Any:  # Chroma checks this exact signature
        raise AssertionError("Chroma's default embedding function must never run")

    def boom_init(self: Any, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("Chroma's ONNX model must never be loaded")

    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", boom)
    monkeypatch.setattr(DefaultEmbeddingFunction, "embed_query", boom)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "__init__", boom_init)
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "__call__", boom)


@pytest.fixture
def filled(tmp_path: Path, no_default_ef: None) -> Any:
    """A collection in tmp_path with the four DOCS added."""
    col = get_collection(
        open_chroma(tmp_path), "faults", embedder=NgramEmbedder(), metadata={"purpose": "test"}
    )
    col.add(
        ids=list(DOCS),
        documents=[d for d, _ in DOCS.values()],
        metadatas=[m for _, m in DOCS.values()],
    )
    return col


class _SameKeyOtherDim(NgramEmbedder):
    """A misconfigured embedder: the n-gram key of 512 dimensions, but 256 of them."""

    def __init__(self) -> None:
        super().__init__(256)
        self.key = "ngram512"


def _cos(a: str, b: str) -> float:
    return float(np.dot(embed_text(a), embed_text(b)))


# --- the embedding function -------------------------------------------------------------------


def test_protocol_and_registration() -> None:
    ef = NgramHashEmbedding(256)
    assert NgramHashEmbedding.name() == EF_NAME == "katachi_ngram_hash"
    assert known_embedding_functions[EF_NAME] is NgramHashEmbedding
    assert ef.get_config() == {"dim": 256}
    assert NgramHashEmbedding.build_from_config(ef.get_config()) == ef
    assert NgramHashEmbedding.build_from_config({}).dim == 512
    assert ef.is_legacy() is False
    assert ef.default_space() == "cosine" and "cosine" in ef.supported_spaces()
    for bad in (0, -3, 1.5, True):
        with pytest.raises(ValueError):
            NgramHashEmbedding(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        ef.validate_config_update({"dim": 256}, {"dim": 512})


def test_vectors_are_float32_unit_length() -> None:
    texts = ["", "   \n\t", "車", "ab", "ブレーキが効きにくい", "x" * 5000, "壊れた\udc80文字"]
    out = NgramHashEmbedding()(texts)
    assert len(out) == len(texts)
    for v in out:
        assert isinstance(v, np.ndarray) and v.dtype == np.float32 and v.shape == (512,)
        assert np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)


def test_empty_text_is_fixed_bucket_zero_vector() -> None:
    empty, blank = NgramHashEmbedding()(["", " \u3000 "])  # ideographic space too
    expected = np.zeros(512, dtype=np.float32)
    expected[0] = 1.0
    assert np.array_equal(empty, expected) and np.array_equal(blank, expected)


def test_deterministic_across_instances() -> None:
    text = "ブレーキの効きが悪い。ABS警告灯。"
    a, b = NgramHashEmbedding()([text])[0], NgramHashEmbedding()([text])[0]
    assert np.array_equal(a, b)
    assert not np.array_equal(embed_text(text, 512), embed_text("エアコン", 512))


def test_nfkc_lowercase_and_whitespace() -> None:
    assert np.array_equal(embed_text("ＡＢＳ"), embed_text("ABS"))
    assert np.array_equal(embed_text("ＡＢＳ"), embed_text("abs"))
    assert np.array_equal(embed_text("ｶﾞｿﾘﾝ"), embed_text("ガソリン"))  # half-width kana
    assert np.array_equal(embed_text("ブレーキ が\n効かない"), embed_text("ブレーキが効かない"))


def test_japanese_near_duplicates_score_higher() -> None:
    q = "ブレーキの効きが悪い"
    near = _cos(q, "ブレーキが効きにくい")
    assert near > _cos(q, "エアコンの風が弱い")
    assert near > _cos(q, "新宿でラーメンを食べた")
    assert near > 0.3


def test_embedding_is_fast() -> None:
    text = "ブレーキの効きが悪く、停止距離が伸びている。ABS警告灯も点灯。" * 17  # ~500 chars
    ef = NgramHashEmbedding()
    start = time.perf_counter()
    for _ in range(200):
        ef([text])
    assert (time.perf_counter() - start) / 200 < 0.005  # ~0.1 ms in practice; generous for CI


def test_cosine_score() -> None:
    assert cosine_score(0.0) == 1.0
    assert cosine_score(0.25) == pytest.approx(0.75)
    assert cosine_score(1.0) == 0.0
    assert cosine_score(1.7) == 0.0
    assert cosine_score(-1e-7) == 1.0
    assert cosine_score(None) == 0.0


# --- Chroma -------------------------------------------------------------------------------------


def test_add_and_query_rank_near_duplicate_first(filled: Any) -> None:
    res = filled.query(query_texts=["ブレーキの効きが悪い"], n_results=4)
    ids = res["ids"][0]
    assert ids[0] == "d1"
    assert ids.index("d1") < ids.index("d2") and ids.index("d1") < ids.index("d3")
    scores = [cosine_score(d) for d in res["distances"][0]]
    assert scores == sorted(scores, reverse=True)
    assert res["metadatas"][0][0] == {"vehicle_id": "A"}


def test_where_filter_returns_only_that_vehicle(filled: Any) -> None:
    res = filled.query(query_texts=["ブレーキ"], n_results=4, where={"vehicle_id": "A"})
    assert set(res["ids"][0]) == {"d1", "d3"}
    assert all(m["vehicle_id"] == "A" for m in res["metadatas"][0])
    got = filled.get(where={"vehicle_id": "B"})
    assert sorted(got["ids"]) == ["d2", "d4"]


def test_fullwidth_query_finds_ascii_doc(filled: Any) -> None:
    res = filled.query(query_texts=["ＡＢＳ警告灯"], n_results=1)
    assert res["ids"][0] == ["d4"]


def test_empty_document_and_query_do_not_crash(filled: Any) -> None:
    filled.add(ids=["empty"], documents=[""], metadatas=[{"vehicle_id": "C"}])
    res = filled.query(query_texts=[""], n_results=1)
    assert res["ids"][0] == ["empty"]
    assert cosine_score(res["distances"][0][0]) == pytest.approx(1.0, abs=1e-5)


def test_collection_config_is_cosine_with_our_ef(filled: Any) -> None:
    cfg = filled.configuration_json
    assert cfg["hnsw"]["space"] == "cosine"
    assert cfg["hnsw"]["ef_search"] == HNSW_EF_SEARCH
    assert cfg["embedding_function"] == {
        "type": "known",
        "name": EMBEDDER_EF_NAME,
        "config": {"embedder": "ngram512", "dim": 512},
    }
    assert filled.name == "faults-ngram512"
    assert filled.metadata == {"purpose": "test", "embedder": "ngram512", "dim": 512}


def test_get_collection_reopens_and_rejects_other_dim(filled: Any, tmp_path: Path) -> None:
    client = open_chroma(tmp_path)
    again = get_collection(client, "faults", embedder=NgramEmbedder())
    assert again.count() == len(DOCS)
    reopened = client.get_collection("faults-ngram512")  # no function passed: rebuilt from its config
    assert reopened.query(query_texts=["ブレーキ"], n_results=1)["ids"][0] == ["d1"]
    with pytest.raises(ValueError, match="holds dim=512 vectors, not dim=256"):
        get_collection(client, "faults", embedder=_SameKeyOtherDim())


def test_thousand_docs(tmp_path: Path, no_default_ef: None) -> None:
    """The query shares no n-gram with the 1,000 fillers (all at distance 1.0): with Chroma's default
    ef_search this missed the target in ~1 of 3 runs; HNSW_EF_SEARCH makes it reliable."""
    col = get_collection(open_chroma(tmp_path), "bulk", embedder=NgramEmbedder())
    docs = [f"車両{i:04d}の点検記録: タイヤ空気圧{i % 7}、オイル交換{i % 13}回目" for i in range(1000)]
    col.add(ids=[f"n{i}" for i in range(1000)], documents=docs, metadatas=[{"i": i} for i in range(1000)])
    col.add(ids=["target"], documents=["ブレーキパッドが摩耗して異音がする"])
    res = col.query(query_texts=["ブレーキから異音"], n_results=3)
    assert res["ids"][0][0] == "target"


# --- configuration and a fresh process ----------------------------------------------------------


def test_open_chroma_uses_app_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHROMA_HOST", raising=False)
    monkeypatch.setenv("APP_DATA_DIR", str(tmp_path / "appdata"))
    client = open_chroma()
    get_collection(client, "probe").add(ids=["x"], documents=["テスト"])
    assert (tmp_path / "appdata" / "chroma").is_dir()


def test_open_chroma_http_when_host_set(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def fake_http_client(**kw: Any) -> str:
        calls.append(kw)
        return "http"

    monkeypatch.setattr(vectors.chromadb, "HttpClient", fake_http_client)
    monkeypatch.setenv("CHROMA_HOST", "chroma.internal")
    monkeypatch.setenv("CHROMA_PORT", "9000")
    assert open_chroma() == "http"
    assert calls[-1]["host"] == "chroma.internal" and calls[-1]["port"] == 9000
    assert calls[-1]["settings"].anonymized_telemetry is False
    open_chroma(host="other", port=8001)
    assert calls[-1]["host"] == "other" and calls[-1]["port"] == 8001


def _run_child(tmp_path: Path, mode: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "random", "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "chroma"), mode],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_new_process_reopens_without_passing_ef(filled: Any, tmp_path: Path) -> None:
    SharedSystemClient.clear_system_cache()  # release our handle before the child opens the path
    proc = _run_child(tmp_path, "import")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ids"][0] == "d1"
    assert out["ef"]["name"] == EMBEDDER_EF_NAME and out["ef"]["config"] == {
        "embedder": "ngram512",
        "dim": 512,
    }
    assert np.array_equal(np.array(out["vec"], dtype=np.float32), embed_text("ブレーキ"))


def test_new_process_without_import_cannot_embed(filled: Any, tmp_path: Path) -> None:
    """Documents the contract: a process must import core.search.vectors before querying by text."""
    SharedSystemClient.clear_system_cache()
    proc = _run_child(tmp_path, "no-import")
    assert proc.returncode != 0
    assert EMBEDDER_EF_NAME in proc.stderr and "not found" in proc.stderr
