"""One companion per person (issue #14), with real SQLite + Chroma stores: what Alice told her companion never
reaches Bob's prompt (exact message stack), his browser, search test, edits or deletes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.flows.memory import browse
from core.flows.memory.chat import build_chat_messages, prepare_turn, run_turn, stream_reply
from core.flows.memory.deletion import hard_delete
from core.flows.memory.job_status import background_states, unfinished_episodes
from core.flows.memory.mood import load_mood
from core.flows.memory.provenance import Provenance, latest_trace, provenance, unit_summary
from core.flows.memory.reconcile import reconcile_memory_index
from core.flows.memory.retrieval import format_pack, retrieve
from core.flows.memory.sample_data import (
    generate_conversation,
    load_sample_memories,
    missing_exchanges,
    samples_loaded,
)
from core.flows.memory.stores import collection_name, memory_collection, memory_repository
from core.flows.memory.versions import EditError, edit_unit, soft_delete, versions_of
from core.flows.registry import demo_client
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from tests.persons import ALICE, BOB

NOW = 1_795_255_200
SECRET = "来月転職する予定で、上司の佐藤さんにはまだ言っていない"
QUESTION = "佐藤さんに転職のことをいつ話せばいいと思う？"


@pytest.fixture
def stores(tmp_path: Path):  # type: ignore[no-untyped-def]
    engine, client = open_store(tmp_path), open_chroma(tmp_path)

    def of(person):  # type: ignore[no-untyped-def]
        return memory_repository(engine, person, lambda: NOW), memory_collection(client, person)

    alice, bob = of(ALICE), of(BOB)
    _, told = run_turn(*alice, demo_client(), [], SECRET)  # reply, trailer, extraction: all inline
    assert told.ok and told.episode_id is not None and told.extraction is not None and told.extraction.ok
    return alice, bob, told.episode_id


def test_bobs_prompt_holds_nothing_of_alices_memories(stores) -> None:  # type: ignore[no-untyped-def]
    (alice_repo, alice_vectors), (bob_repo, bob_vectors), _ = stores
    prepared = prepare_turn(bob_repo, bob_vectors, [], QUESTION)
    client = ReplayClient(["そうですね。"])
    "".join(stream_reply(client, prepared))
    with bob_repo.connect() as conn:
        mood = load_mood(conn, BOB.id, NOW).describe()
    assert client.requests[0].messages == build_chat_messages(
        [], QUESTION, "（関連する記憶はありません）", mood, NOW
    )
    assert "転職" not in client.requests[0].messages[0]["content"]
    assert prepared.retrieval.selected == [] and prepared.retrieval.facts == []
    assert prepared.retrieval.loops == [] and prepared.retrieval.bond is None
    assert all(hits == [] for hits in prepared.retrieval.lanes.values())
    assert prepared.retrieval.matched_entities == []  # Alice's 「佐藤」 is not an entity of Bob's

    # the same question to Alice's companion does bring her memory back
    mine = retrieve(alice_repo, alice_vectors, [], QUESTION, NOW)
    assert mine.selected and SECRET in format_pack(mine)


def test_each_person_has_a_vector_collection_of_their_own(stores) -> None:  # type: ignore[no-untyped-def]
    (_, alice_vectors), (_, bob_vectors), episode = stores
    # the Chroma name is the person's collection name plus the embedder that built it
    assert alice_vectors.name == f"{collection_name(ALICE.id)}-e5q4-chive"
    assert bob_vectors.name == f"{collection_name(BOB.id)}-e5q4-chive" != alice_vectors.name
    assert collection_name(LOCAL_PERSON.id) == "memory_units"  # the collection from before there were people
    assert alice_vectors.count() > 0 and bob_vectors.count() == 0
    assert alice_vectors.get(ids=[str(episode)])["metadatas"][0]["owner_id"] == ALICE.id  # type: ignore[index]


def test_bobs_browser_search_and_status_show_nothing_of_alices(stores) -> None:  # type: ignore[no-untyped-def]
    (alice_repo, _), (bob_repo, bob_vectors), episode = stores
    assert browse.counts(alice_repo)["EPISODE"] == 1 and browse.counts(bob_repo) == {}
    frame, total = browse.units_frame(bob_repo, "EPISODE", browse.Filters())
    assert total == 0 and frame.empty
    assert browse.entities_frame(bob_repo).empty and browse.edges_frame(bob_repo).empty
    assert browse.entity_options(bob_repo) == {} and browse.entity_options(alice_repo)
    assert unit_summary(bob_repo, episode) is None and versions_of(bob_repo, episode) == []
    assert provenance(bob_repo, episode) == Provenance([], [])
    assert latest_trace(bob_repo) is None and latest_trace(alice_repo) is not None
    assert background_states(bob_repo, [episode]) == {} and unfinished_episodes(bob_repo) == []
    found = retrieve(bob_repo, bob_vectors, [], "転職", NOW)  # the search test tab
    assert found.selected == [] and all(hits == [] for hits in found.lanes.values())


def test_bob_cannot_edit_or_delete_alices_memories(stores) -> None:  # type: ignore[no-untyped-def]
    (alice_repo, alice_vectors), (bob_repo, bob_vectors), episode = stores
    with pytest.raises(EditError):
        edit_unit(bob_repo, bob_vectors, episode, {"salience": 0.1})
    with pytest.raises(EditError):
        soft_delete(bob_repo, bob_vectors, episode)
    report = hard_delete(bob_repo, bob_vectors, episode)
    assert report.unit_ids == [] and report.traces == 0
    assert unit_summary(alice_repo, episode) is not None and alice_vectors.count() > 0
    assert hard_delete(alice_repo, alice_vectors, episode).unit_ids[0] == episode


def test_the_same_entity_and_loop_text_may_exist_once_per_person(stores) -> None:  # type: ignore[no-untyped-def]
    (alice_repo, _), (bob_repo, bob_vectors), _ = stores
    _, told = run_turn(bob_repo, bob_vectors, demo_client(), [], SECRET)  # Bob happens to say the same
    assert told.ok and told.extraction is not None and told.extraction.ok
    alice_names = set(browse.entities_frame(alice_repo)["name"])
    bob_names = set(browse.entities_frame(bob_repo)["name"])
    assert alice_names == bob_names and alice_names  # equal names, separate entities
    assert browse.counts(bob_repo) == browse.counts(alice_repo)


def test_index_reconciliation_runs_over_one_persons_units_and_collection(stores) -> None:  # type: ignore[no-untyped-def]
    """Issue #15 item 6 per person: Bob's reconcile neither indexes Alice's units into his collection nor
    touches hers; Alice's restores her own vector that a crash lost."""
    (alice_repo, alice_vectors), (bob_repo, bob_vectors), episode = stores
    alice_before = alice_vectors.count()
    alice_vectors.delete(ids=[str(episode)])  # a crash between her commit and the Chroma upsert
    bob_vectors.upsert(
        ids=["999999"], documents=["消えた記憶"], metadatas=[{"kind": "EPISODE", "occurred_at": 0}]
    )

    bobs = reconcile_memory_index(bob_repo, bob_vectors)
    assert bobs.units == 0 and bobs.indexed == [] and bobs.removed == ["999999"]
    assert bob_vectors.count() == 0 and alice_vectors.count() == alice_before - 1

    alices = reconcile_memory_index(alice_repo, alice_vectors)
    assert alices.indexed == [episode] and alices.removed == [] and alice_vectors.count() == alice_before
    assert not reconcile_memory_index(alice_repo, alice_vectors).changed
    assert not reconcile_memory_index(bob_repo, bob_vectors).changed and bob_vectors.count() == 0


def test_the_sample_loader_counts_only_the_persons_own_episodes(stores) -> None:  # type: ignore[no-untyped-def]
    """Per-item idempotence (issue #15) is per person: Alice's copy of the sample is not Bob's."""
    (alice_repo, alice_vectors), (bob_repo, bob_vectors), _ = stores
    sample = generate_conversation(NOW, count=3)
    assert len(load_sample_memories(alice_repo, alice_vectors, demo_client(), NOW, count=3)) == 3
    assert missing_exchanges(alice_repo, sample) == [] and missing_exchanges(bob_repo, sample) == sample
    assert load_sample_memories(alice_repo, alice_vectors, demo_client(), NOW, count=3) == []
    assert not samples_loaded(bob_repo)
    assert len(load_sample_memories(bob_repo, bob_vectors, demo_client(), NOW, count=3)) == 3
    assert missing_exchanges(bob_repo, sample) == []
    assert not reconcile_memory_index(bob_repo, bob_vectors).changed
