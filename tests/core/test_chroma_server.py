"""Chroma as a server (issue #14 item 4): `chroma run` on 127.0.0.1, reached with HttpClient (CHROMA_HOST).

The offline embedding function is the one that embeds (client side; the server never loads a model), two
clients (two replicas) see each other's writes, and the memory and diagnosis flows work against it.
Skipped, with the reason, when the server cannot start here.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine

from core.flows.diagnosis.rag import RAGService
from core.flows.memory.chat import run_turn
from core.flows.memory.constants import EXTRACTION_SEPARATE
from core.flows.memory.lanes import vector_lane
from core.flows.memory.stores import memory_collection
from core.flows.registry import demo_client
from core.search.embedders import BundledEmbedder
from core.search.vectors import EMBEDDER_EF_NAME, chroma_label, get_collection, open_chroma
from core.settings import load_settings
from core.store.memory.repository import MemoryRepository
from tests.persons import ALICE
from tests.servers import ChromaServer

NOW = 1_795_000_000


@pytest.fixture
def server(chroma_server: ChromaServer) -> ChromaServer:
    return chroma_server


def _client(server: ChromaServer):  # type: ignore[no-untyped-def]
    return open_chroma(host=server.host, port=server.port)


def test_settings_name_the_server() -> None:
    settings = load_settings(env={"CHROMA_HOST": "chroma.internal", "CHROMA_PORT": "8100"})
    assert (settings.chroma_host, settings.chroma_port) == ("chroma.internal", 8100)
    assert load_settings(env={"CHROMA_HOST": "c", "CHROMA_PORT": "x"}).chroma_port == 8000
    assert (
        chroma_label("c", 8100) == "Chroma サーバー c:8100"
        and chroma_label(None, 8000) == "Chroma（組み込み）"
    )


def test_the_app_embeds_and_a_second_client_sees_the_writes(server: ChromaServer) -> None:
    """The app's embedder (the bundled model and word vectors by default) embeds on the client side; the server
    stores vectors."""
    name = f"probe_{uuid.uuid4().hex[:8]}"
    first = get_collection(_client(server), name)
    first.add(ids=["a", "b"], documents=["ブレーキから異音がする", "エアコンが効かない"])
    config = first.configuration_json or {}
    assert config["embedding_function"] == {
        "type": "known",
        "name": EMBEDDER_EF_NAME,
        "config": {"embedder": "e5q4-chive", "dim": 684},
    }
    stored = first.get(ids=["a"], include=["embeddings"])["embeddings"]
    expected = BundledEmbedder().embed_documents(["ブレーキから異音がする"])[0]
    assert stored is not None and np.allclose(np.asarray(stored[0]), expected, atol=1e-6)
    other = _client(server).get_collection(first.name)  # as another replica: no function passed
    assert other.query(query_texts=["ブレーキの異音"], n_results=1)["ids"][0] == ["a"]


def test_a_memory_turn_indexes_into_the_server(server: ChromaServer, engine: Engine) -> None:
    repo = MemoryRepository(engine, lambda: NOW, owner_id=ALICE.id)
    collection = memory_collection(_client(server), ALICE)
    collection.delete(ids=collection.get(include=[])["ids"] or ["-"])
    run_turn(
        repo, collection, demo_client(), [], "新宿でラーメンを食べた", NOW, extraction=EXTRACTION_SEPARATE
    )
    again = memory_collection(_client(server), ALICE)
    (hits,) = vector_lane(again, ["ラーメン"], 5)
    assert 1 in [unit_id for unit_id, _ in hits]  # the episode (its entities and loop may rank too)


def test_manual_rag_on_the_server(server: ChromaServer, tmp_path: Path) -> None:
    rag = RAGService(_client(server), collection_name=f"manuals_{uuid.uuid4().hex[:8]}")
    count = rag.index_manuals()
    assert count > 100 and rag.is_indexed()
    assert RAGService(_client(server), collection_name=rag.collection_name).chunk_count() == count
