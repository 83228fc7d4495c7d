"""Truncation is a state (issue 12 item 4): a reply cut by the token limit or a broken stream is kept, marked,
stored as such, continued with 「続きを生成」 or asked again with 「再試行」 — review chat and memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.flows.chat_item import ChatItem, history, user_item
from core.flows.memory import chat as memory_chat
from core.flows.memory.continuation import continue_memory_reply, discard_cut_memory_turn
from core.flows.memory.items import reply_item
from core.flows.memory.stores import memory_collection
from core.flows.registry import demo_client
from core.flows.review_chat import (
    continue_reply,
    discard_cut_turn,
    finish_turn,
    open_thread,
    prepare_turn,
    repository,
    stream_reply,
)
from core.guard.continuation import continuation_messages, cut_text, join_continuation
from core.guard.json_guard import guarded_text
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import payload_episode
from tests.core.test_review_messages import REVIEW

T0 = 1_795_255_200
CUT = "講評では、§11 の論述について次のように述"


def length(text: str) -> LLMReply:
    return LLMReply(text=text, finish_reason="length", provider="replay", model="replay")


class BrokenStream:
    """Streams `text` in pieces, then the connection breaks (a provider error mid-stream)."""

    provider, model = "replay", "broken"

    def __init__(self, text: str):
        self.text = text
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMReply:
        raise AssertionError("streamed only")

    def stream(self, request: LLMRequest) -> TextStream:
        self.requests.append(request)

        def gen() -> Iterator[str]:
            yield from (self.text[i : i + 5] for i in range(0, len(self.text), 5))
            raise ProviderError("connection", "stream closed")

        return TextStream(gen())


def test_cut_text_knows_both_kinds_of_cut() -> None:
    assert (
        cut_text(guarded_text(ReplayClient([length("途中")]), [{"role": "user", "content": "q"}])) == "途中"
    )
    assert cut_text(guarded_text(ReplayClient(["全部"]), [{"role": "user", "content": "q"}])) is None
    failed = guarded_text(
        ReplayClient([ProviderError("timeout", "slow")]), [{"role": "user", "content": "q"}]
    )
    assert cut_text(failed) is None  # nothing arrived: an error, not a cut reply
    assert join_continuation("次のように述", "べています。") == "次のように述べています。"
    messages = continuation_messages([{"role": "user", "content": "q"}], "途中")
    assert messages[-2] == {"role": "assistant", "content": "途中"} and "続き" in messages[-1]["content"]


@pytest.fixture
def review_setup(tmp_path: Path):  # type: ignore[no-untyped-def]
    repo = repository(open_store(tmp_path), LOCAL_PERSON, clock=lambda: T0)
    review = repo.get_review(repo.add_review(REVIEW))
    return repo, review


def review_turn(repo, review, client, chat: list[ChatItem], text: str, thread_id=None):  # type: ignore[no-untyped-def]
    chat.append(user_item(text))
    plan = prepare_turn(repo, review, thread_id, history(chat), text)
    stream = stream_reply(client, plan)
    "".join(stream)
    outcome = finish_turn(repo, client, plan, stream.result)
    chat[-1:] = outcome.items
    return outcome


@pytest.mark.parametrize("client", [ReplayClient([length(CUT)]), BrokenStream(CUT)], ids=["length", "broken"])
def test_a_cut_review_reply_is_marked_stored_and_continued(review_setup, client) -> None:  # type: ignore[no-untyped-def]
    repo, review = review_setup
    chat: list[ChatItem] = []
    outcome = review_turn(repo, review, client, chat, "§11 はどう評価されていますか？")
    assert outcome.truncated and outcome.stored
    assert [i["status"] for i in chat] == ["done", "truncated"] and chat[1]["content"] == CUT
    reopened = open_thread(repo, outcome.thread_id)
    assert reopened is not None and reopened.items[1]["status"] == "truncated"  # stored as such
    more = ReplayClient(["べています。"])
    assert continue_reply(repo, more, review, outcome.thread_id, chat) is None
    sent = more.requests[0].messages
    assert sent[-2] == {"role": "assistant", "content": CUT} and sent[-1]["role"] == "user"
    assert chat[1]["status"] == "done" and chat[1]["content"] == CUT + "べています。"
    reopened = open_thread(repo, outcome.thread_id)
    assert reopened is not None and reopened.items[1]["content"] == CUT + "べています。"
    assert reopened.items[1]["status"] == "done"


def test_a_continuation_cut_again_stays_truncated(review_setup) -> None:  # type: ignore[no-untyped-def]
    repo, review = review_setup
    chat: list[ChatItem] = []
    outcome = review_turn(repo, review, ReplayClient([length(CUT)]), chat, "質問")
    continue_reply(repo, ReplayClient([length("べて")]), review, outcome.thread_id, chat)
    assert chat[1]["status"] == "truncated" and chat[1]["content"] == CUT + "べて"
    failed = continue_reply(
        repo, ReplayClient([ProviderError("timeout", "slow")]), review, outcome.thread_id, chat
    )
    assert failed is not None and not failed.ok and chat[1]["content"] == CUT + "べて"


def test_retry_of_a_cut_reply_removes_the_rally_everywhere(review_setup) -> None:  # type: ignore[no-untyped-def]
    repo, review = review_setup
    chat: list[ChatItem] = []
    first = review_turn(repo, review, ReplayClient(["最初の回答"]), chat, "一つ目")
    review_turn(repo, review, ReplayClient([length(CUT)]), chat, "二つ目", first.thread_id)
    assert discard_cut_turn(repo, first.thread_id, chat) == "二つ目"
    assert [i["content"] for i in chat] == ["一つ目", "最初の回答"]
    reopened = open_thread(repo, first.thread_id)
    assert reopened is not None and len(reopened.items) == 2
    again = review_turn(repo, review, ReplayClient(["二つ目の回答"]), chat, "二つ目", first.thread_id)
    assert again.ok and [i["status"] for i in chat] == ["done"] * 4


class CutThenDemo:
    """The chat reply comes from `first` (cut); the background calls after it from the demo model."""

    provider, model = "replay", "cut-then-demo"

    def __init__(self, first: ReplayClient | BrokenStream):
        self.first, self.demo, self.streamed = first, demo_client(), False

    def complete(self, request: LLMRequest) -> LLMReply:
        return self.demo.complete(request)

    def stream(self, request: LLMRequest) -> TextStream:
        if self.streamed:
            return self.demo.stream(request)
        self.streamed = True
        return self.first.stream(request)


@pytest.fixture
def memory_store(tmp_path: Path):  # type: ignore[no-untyped-def]
    return MemoryRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id), memory_collection(
        open_chroma(tmp_path), LOCAL_PERSON
    )


@pytest.mark.parametrize("kind", ["length", "broken"])
def test_a_cut_memory_reply_is_kept_marked_and_continued(memory_store, kind: str) -> None:  # type: ignore[no-untyped-def]
    repo, collection = memory_store
    cut = "いいですね！田中さんと"
    client = CutThenDemo(ReplayClient([length(cut)]) if kind == "length" else BrokenStream(cut))
    prepared, outcome = memory_chat.run_turn(
        repo, collection, client, [], "田中さんとラーメン", 1_795_000_000
    )
    assert outcome.ok and outcome.truncated and outcome.episode_id is not None
    chat = [user_item("田中さんとラーメン", status="done"), reply_item(prepared, outcome)]
    assert chat[1]["status"] == "truncated" and chat[1]["content"] == cut
    more = ReplayClient(["ラーメン、楽しそうですね。"])
    assert continue_memory_reply(repo, collection, more, chat, now=1_795_000_060) is None
    assert chat[1]["status"] == "done" and chat[1]["content"] == cut + "ラーメン、楽しそうですね。"
    with repo.connect() as conn:
        stored = (
            conn.execute(payload_episode.select().where(payload_episode.c.unit_id == outcome.episode_id))
            .mappings()
            .one()
        )
    assert stored["reply_text"] == cut + "ラーメン、楽しそうですね。"
    assert more.requests[0].messages[-2] == {"role": "assistant", "content": cut}


def test_retry_of_a_cut_memory_reply_deletes_the_episode(memory_store) -> None:  # type: ignore[no-untyped-def]
    repo, collection = memory_store
    prepared, outcome = memory_chat.run_turn(
        repo, collection, CutThenDemo(ReplayClient([length("途中")])), [], "こんにちは", 1_795_000_000
    )
    chat = [user_item("こんにちは", status="done"), reply_item(prepared, outcome)]
    assert discard_cut_memory_turn(repo, collection, chat) == "こんにちは"
    assert chat == []
    with repo.connect() as conn:
        assert conn.execute(payload_episode.select()).first() is None
