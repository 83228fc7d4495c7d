"""Nothing waits on memory's background work (issue #16 item 4): with a real BackgroundWorker, SQLite and an
embedded Chroma, finish_turn returns after the reply alone; ONE job per turn then fills a pending reflection,
extracts and summarises, and the page reads it all back from the store. Full queue, failure and retry."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select

from core.flows.chat_item import ChatItem, user_item
from core.flows.memory.background import memory_job_key
from core.flows.memory.chat import finish_turn, prepare_turn, run_turn, stream_reply
from core.flows.memory.constants import EXTRACTION_COMBINED, EXTRACTION_SEPARATE, TRAILER_MARKER
from core.flows.memory.items import refresh_items, reply_item
from core.flows.memory.job_status import unfinished_episodes
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.memory.tasks import defer_memory_retry
from core.flows.memory.versions import versions_of
from core.flows.registry import demo_client
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMClient, LLMReply, LLMRequest, ProviderError, TextStream, stream_from_reply
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import entities, payload_episode, payload_fact, payload_loop, units
from tests.core.gated_client import GatedClient

NOW = 1_795_000_000
USER = "同僚の田中さんと新宿でラーメンを食べた。来週また行く約束をした。ラーメンが大好き。"
KEY = memory_job_key(LOCAL_PERSON.id)
BACKGROUND_STEPS = {"reflection", "extract_all", "extract_entities", "summary_bond", "summary_person"}


@pytest.fixture
def worker() -> Iterator[BackgroundWorker]:
    w = BackgroundWorker(threads=2)
    yield w
    w.close()


@pytest.fixture
def store(tmp_path: Path, engine: Engine):  # type: ignore[no-untyped-def]
    return memory_repository(engine, LOCAL_PERSON, lambda: NOW), memory_collection(
        open_chroma(tmp_path), LOCAL_PERSON
    )


class ChatWithoutTrailer:
    """The demo model, except that the chat reply comes without its trailer (or fails, when told)."""

    provider, model = "demo", "no-trailer"

    def __init__(self, fail_steps: set[str] | None = None):
        self.demo = demo_client()
        self.fail_steps = fail_steps or set()

    def complete(self, request: LLMRequest) -> LLMReply:
        if request.tags.get("step") in self.fail_steps:
            raise ProviderError("timeout", "slow")
        reply = self.demo.complete(request)
        if request.tags.get("step") == "chat":
            reply.text = reply.text.split(TRAILER_MARKER)[0].rstrip()
        return reply

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


def page_turn(
    repo: MemoryRepository, collection: Any, client: LLMClient, worker: BackgroundWorker, text: str
):  # type: ignore[no-untyped-def]
    """What pages/ui/memory/chat.py does with one message, with the process's worker."""
    prepared = prepare_turn(repo, collection, [], text)
    reply = stream_reply(client, prepared)
    "".join(reply)
    outcome = finish_turn(repo, collection, client, prepared, reply, worker=worker)
    return prepared, outcome


def rows(repo: MemoryRepository, query: Any) -> list[Any]:
    with repo.connect() as conn:
        return list(conn.execute(query).all())


def test_the_turn_returns_after_one_call_and_the_job_stores_what_was_said(store, worker) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    client = GatedClient(demo_client(), gated=BACKGROUND_STEPS)
    prepared, outcome = page_turn(repo, collection, client, worker, USER)
    assert client.steps == ["chat"]  # exactly one model call before the input is usable again
    assert outcome.ok and outcome.background == "queued" and outcome.extraction is None
    items: list[ChatItem] = [user_item(USER, turn=1), reply_item(prepared, outcome, 1)]
    details = items[1]["meta"]["details"]
    assert details["pending"] and details["extraction"] is None and details["summaries"] == []
    assert worker.busy(KEY) and refresh_items(repo, items)  # still running: nothing landed yet
    # the job claims the episode (pending -> running) as it starts: either is "not extracted yet"
    assert rows(repo, select(units.c.extract_state).where(units.c.id == 1)) in (
        [("pending",)],
        [("running",)],
    )

    client.release()
    assert worker.wait(KEY, timeout=20)
    assert client.steps == [
        "chat",
        "extract_all",
        "summary_bond",
        "summary_person",
        "summary_topic",
    ]  # one job
    assert all(t.startswith("katachi-worker") for t in client.threads[1:])
    assert not refresh_items(repo, items)  # landed: the details fill in from the store
    assert details["extract_state"] == "done" and not details["pending"]
    assert [f["object_text"] for f in details["extraction"]["facts"]] == ["ラーメン"]
    assert details["summaries"] == [
        "絆サマリー（直近7日）を作成",
        "人物サマリー「田中」を作成",
        "トピックサマリー「ラーメン」を作成",
    ]
    names = {r.name for r in rows(repo, select(entities.c.name))}
    assert {"田中", "新宿", "ラーメン"} <= names
    assert rows(repo, select(payload_loop.c.loop_text)) == [("来週また行く約束をした。",)]
    [job] = worker.jobs(KEY)
    assert job["status"] == "done" and job["label"] == "記憶の整理（内省・抽出・サマリー）"
    assert job["message"].startswith(
        "エピソード #1 を記憶しました（人物・場所など 4 件・事実 1 件・約束 1 件）。"
    )
    assert (
        "サマリー: 絆サマリー（直近7日）を作成、人物サマリー「田中」を作成、トピックサマリー「ラーメン」を作成。"
        in job["message"]
    )


def test_a_missing_trailer_gets_its_reflection_in_the_job(store, worker) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    client = GatedClient(ChatWithoutTrailer(), gated=BACKGROUND_STEPS)
    prepared, outcome = page_turn(repo, collection, client, worker, USER)
    assert client.steps == ["chat"] and outcome.trailer_errors == ["trailer marker not found"]
    assert (outcome.reflection_source, outcome.reflection["persona_affect_label"]) == ("pending", "neutral")
    items = [user_item(USER, turn=1), reply_item(prepared, outcome, 1)]
    client.release()
    assert worker.wait(KEY, timeout=20)
    assert client.steps[:3] == ["chat", "reflection", "extract_all"]
    [(source, reflection)] = rows(
        repo, select(payload_episode.c.reflection_source, payload_episode.c.reflection_json)
    )
    assert source == "reflection" and json.loads(reflection)["topic_tags"] == ["ラーメン", "新宿"]
    refresh_items(repo, items)
    details = items[1]["meta"]["details"]
    assert details["reflection_source"] == "reflection" and details["reflection"]["topic_tags"] == [
        "ラーメン",
        "新宿",
    ]
    assert [v.change_kind for v in versions_of(repo, 1)] == ["create", "edit"]  # the fill-in is a version
    assert " 内省を補完しました。" in worker.jobs(KEY)[0]["message"]


def test_run_turn_without_a_worker_runs_the_same_job_inline(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    client = GatedClient(ChatWithoutTrailer())
    _, outcome = run_turn(repo, collection, client, [], USER)
    assert client.steps == [
        "chat",
        "reflection",
        "extract_all",
        "summary_bond",
        "summary_person",
        "summary_topic",
    ]
    assert outcome.background == "inline" and outcome.reflection_source == "reflection"
    assert outcome.extraction is not None and outcome.extraction.ok and len(outcome.summaries) == 3


def wait_running(worker: BackgroundWorker, key: object) -> None:
    deadline = time.monotonic() + 10
    while not any(j["status"] == "running" for j in worker.jobs(key)):
        assert time.monotonic() < deadline, "the blocker never started"
        time.sleep(0.01)


def test_a_full_queue_leaves_the_episode_pending_and_a_later_job_catches_up(store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    worker = BackgroundWorker(threads=1, max_queued=1)
    try:
        client = GatedClient(ChatWithoutTrailer(), gated={"blocker"})
        worker.submit("other", "x", "blocker", lambda: str(client.gate.wait(20)))
        wait_running(worker, "other")
        assert worker.submit("other", "x", "filler", lambda: "") is not None  # the queue is now full
        _, outcome = page_turn(repo, collection, client, worker, USER)
        assert outcome.background == "deferred" and outcome.job_id is None and not worker.busy(KEY)
        [pending] = unfinished_episodes(repo)
        assert (pending.unit_id, pending.state) == (1, "pending")
        assert pending.describe().startswith("#1「同僚の田中さんと") and pending.describe().endswith(
            "まだ整理されていません"
        )
        client.release()
        assert worker.wait("other", timeout=20)
        _, second = page_turn(repo, collection, client, worker, "今日は雨だった。")
        assert second.background == "queued" and worker.wait(KEY, timeout=20)
    finally:
        worker.close()
    # the second turn's job caught up on the first episode: its reflection, then its extraction
    assert client.steps.count("reflection") == 2 and unfinished_episodes(repo) == []
    assert rows(repo, select(payload_episode.c.reflection_source)) == [("reflection",), ("reflection",)]
    assert rows(repo, select(payload_fact.c.object_text)) == [("ラーメン",)]
    assert "以前の抽出を 1/1 件やり直しました。" in worker.jobs(KEY)[0]["message"]


def test_a_failed_extraction_is_recorded_and_the_retry_job_clears_it(store, worker) -> None:  # type: ignore[no-untyped-def]
    repo, collection = store
    failing = ChatWithoutTrailer(fail_steps={"extract_all"})
    prepared, outcome = page_turn(repo, collection, failing, worker, USER)
    assert worker.wait(KEY, timeout=20)
    [job] = worker.jobs(KEY)
    assert job["status"] == "failed" and job["message"].startswith(
        "エピソード #1 の抽出に失敗しました（人物・関係・事実・約束: LLM呼び出しエラー"
    )
    assert job["message"].endswith("エピソードは保存済みで、後で再試行できます。")
    [failed] = unfinished_episodes(repo)
    assert (
        failed.state == "failed"
        and failed.attempts == 1
        and "抽出に失敗（人物・関係・事実・約束: LLM呼び出しエラー" in failed.describe()
    )
    items = [user_item(USER, turn=1), reply_item(prepared, outcome, 1)]
    refresh_items(repo, items)
    details = items[1]["meta"]["details"]
    assert details["extract_state"] == "failed" and set(details["extraction"]["errors"]) == {
        "entities",
        "facts",
        "loops",
    }

    # the page's 再試行
    assert defer_memory_retry(worker, repo, collection, ChatWithoutTrailer()) is not None and worker.wait(
        KEY, timeout=20
    )
    assert worker.jobs(KEY)[-1]["message"] == "1 件の抽出をやり直しました。"
    assert unfinished_episodes(repo) == []
    refresh_items(repo, items)
    assert (
        details["extract_state"] == "done" and details["extraction"]["facts"][0]["object_text"] == "ラーメン"
    )


def stored(tmp_path: Path, mode: str) -> tuple[list[Any], int]:
    repo = MemoryRepository(open_store(tmp_path / mode), lambda: NOW, owner_id=LOCAL_PERSON.id)
    client = GatedClient(demo_client())
    run_turn(
        repo, memory_collection(open_chroma(tmp_path / mode), LOCAL_PERSON), client, [], USER, extraction=mode
    )
    with repo.connect() as conn:
        found = [
            sorted(tuple(r) for r in conn.execute(select(entities.c.type_label, entities.c.name)).all()),
            sorted(
                tuple(r) for r in conn.execute(select(payload_fact.c.predicate, payload_fact.c.object_text))
            ),
            sorted(tuple(r) for r in conn.execute(select(payload_loop.c.loop_text, payload_loop.c.due_at))),
        ]
    return found, sum(s.startswith("extract_") for s in client.steps)


def test_combined_and_separate_extraction_store_the_same_on_the_demo_model(tmp_path: Path) -> None:
    combined, one = stored(tmp_path, EXTRACTION_COMBINED)
    separate, three = stored(tmp_path, EXTRACTION_SEPARATE)
    assert combined == separate and (one, three) == (1, 3)
    assert ("PERSON", "田中") in combined[0] and combined[1] == [("likes", "ラーメン")]
