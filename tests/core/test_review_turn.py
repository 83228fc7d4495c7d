"""The review turn owner with a real SQLite store: the same functions the page calls (prepare_turn ->
stream_reply -> finish_turn), run_turn, summaries stored and used, failures, and the thread functions."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine
from sqlalchemy.exc import OperationalError

from core.debuglog.events import CaptureSink
from core.flows.chat_item import ChatItem, history, pop_failed_turn, user_item
from core.flows.review_chat import (
    ChatMessage,
    ReviewRecord,
    ThreadListing,
    ThreadState,
    TurnResult,
    finish_turn,
    import_review,
    list_threads,
    open_thread,
    prepare_turn,
    repository,
    run_turn,
    sample_review_id,
    stream_reply,
    turn_info_of,
)
from core.flows.review_chat.notices import STORE_FAILED, UNEXPECTED_AFTER, UNEXPECTED_REPLY
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMClient, LLMReply, LLMRequest, ProviderError, TextStream
from core.llm.replay import ReplayClient
from core.store.review.repository import ReviewRepository
from tests.core.test_review_messages import CTX_S3, CTX_S12, INPUTS, REVIEW, SUM1, SYSTEM, a, ctx, q, u
from tests.persons import ALICE

T0 = 1_795_255_200


@pytest.fixture
def repo(engine: Engine) -> ReviewRepository:
    return repository(engine, ALICE, clock=lambda: T0)


@pytest.fixture
def review(repo: ReviewRepository) -> ReviewRecord:
    stored = repo.get_review(repo.add_review(REVIEW))
    assert stored is not None
    return stored


def page_turn(
    repo: ReviewRepository,
    client: LLMClient,
    review: ReviewRecord,
    thread_id: int | None,
    chat: list[ChatItem],
    text: str,
    sink: CaptureSink | None = None,
    worker: BackgroundWorker | None = None,
    wait: float = 20.0,
) -> TurnResult:
    """What pages/ui/review/session.py does: the pending question first, one core call before the stream,
    the stream read to its end, one core call after it, the pending question replaced by the items
    (with the process's worker when one is given)."""
    chat.append(user_item(text))
    plan = prepare_turn(repo, review, thread_id, history(chat), text, worker=worker, wait=wait)
    stream = stream_reply(client, plan, sink=sink)
    "".join(stream)
    outcome = finish_turn(repo, client, plan, stream.result, sink=sink, worker=worker)
    chat[-1:] = outcome.items
    return outcome


def test_two_turns_through_the_page_functions(repo: ReviewRepository, review: ReviewRecord) -> None:
    client, chat = ReplayClient(["A1", "A2"]), []
    first = page_turn(repo, client, review, None, chat, INPUTS[0])
    assert first.ok and first.stored and first.notices == [] and first.thread_id is not None
    second = page_turn(repo, client, review, first.thread_id, chat, INPUTS[1])
    assert second.thread_id == first.thread_id and second.notices == []

    # turn 2 sends: system, the rebuilt context (§3 carried from turn 1), the raw history, the question
    assert client.requests[1].messages == [SYSTEM, ctx(**CTX_S3), u(1), a(1), q(2)]
    assert client.requests[1].tags == {"flow": "review", "step": "reply"}
    assert [(i["role"], i["status"], i["content"], i["turn"]) for i in chat] == [
        ("user", "done", INPUTS[0], 1),
        ("assistant", "done", "A1", 1),
        ("user", "done", INPUTS[1], 2),
        ("assistant", "done", "A2", 2),
    ]
    info2 = chat[3]["meta"]["info"]
    assert (info2["turn"], info2["paragraph_source"], info2["paragraph_numbers"]) == (2, "carried", [3])
    typed = turn_info_of(chat[3])  # what the page reads
    assert typed is not None and (typed.turn, typed.paragraph_source, typed.paragraph_numbers) == (
        2,
        "carried",
        [3],
    )
    assert [b.header for b in typed.blocks] == [b["header"] for b in info2["blocks"]]
    assert typed.message_count == info2["message_count"] and turn_info_of(chat[2]) is None

    thread_id = second.thread_id
    assert thread_id is not None
    assert repo.load_messages(thread_id) == [
        ChatMessage("user", INPUTS[0], 1, {}),
        ChatMessage("assistant", "A1", 1, chat[1]["meta"]["info"]),
        ChatMessage("user", INPUTS[1], 2, {}),
        ChatMessage("assistant", "A2", 2, info2),
    ]
    assert repo.get_thread(thread_id) == {
        "id": thread_id,
        "review_id": review.id,
        "title": INPUTS[0],
        "state": ThreadState("", 0, 1, "[3]"),
    }
    assert list_threads(repo, review.id or 0) == [ThreadListing(thread_id, INPUTS[0], updated_at=T0, turns=2)]
    # spec 02 注意点: the context is never stored
    assert not [m for m in repo.load_messages(thread_id) if "【問題文】" in m.content]


def test_summary_after_turn_five_is_stored_and_used_on_turn_six(
    repo: ReviewRepository, review: ReviewRecord
) -> None:
    client, chat, thread_id = ReplayClient(["A1", "A2", "A3", "A4", "A5", "S1", "A6"]), [], None
    outcomes = []
    for text in INPUTS[:5]:
        sink = CaptureSink()
        outcome = page_turn(repo, client, review, thread_id, chat, text, sink)
        thread_id = outcome.thread_id
        outcomes.append((outcome, sink))
    fifth, sink = outcomes[4]
    assert fifth.plan is not None and fifth.plan.summary_due == (1, 5)
    assert [o.plan.summary_due for o, _ in outcomes[:4] if o.plan] == [None] * 4
    assert fifth.notices == [("success", "ターン1～5の会話を要約しました。次のターンから要約を使います。")]
    assert [c["step"] for c in sink.calls()] == ["reply", "summarize"]  # one captured set per turn
    assert thread_id is not None
    assert repo.thread_state(thread_id) == ThreadState("【1～5ターンの要約】\nS1", 5, 5, "[12]")

    # turn 6 after a reload: the chat comes back from the store, the summary from the thread columns
    reopened = open_thread(repository(repo.engine, ALICE), thread_id)
    assert reopened is not None and reopened.review_id == review.id
    assert [i["content"] for i in reopened.items] == [
        m for i in range(1, 6) for m in (INPUTS[i - 1], f"A{i}")
    ]
    sixth = page_turn(repo, client, review, thread_id, reopened.items, INPUTS[5])
    assert client.requests[6].messages == [SYSTEM, ctx(**CTX_S12), SUM1, u(5), a(5), q(6)]
    info = sixth.items[1]["meta"]["info"]
    assert (info["summary_in_force"], info["summary_up_to_turn"]) == ("【1～5ターンの要約】\nS1", 5)
    assert sixth.notices == [] and len(repo.load_messages(thread_id)) == 12
    assert repo.thread_state(thread_id) == ThreadState("【1～5ターンの要約】\nS1", 5, 5, "[12]")


def test_a_failed_reply_stores_nothing_and_can_be_sent_again(
    repo: ReviewRepository, review: ReviewRecord
) -> None:
    client, chat = ReplayClient([ProviderError("timeout", "slow"), "二度目"]), []
    failed = page_turn(repo, client, review, None, chat, "§3 は？")
    assert not failed.ok and failed.thread_id is None and not failed.stored
    assert [(i["role"], i["status"]) for i in chat] == [("user", "error"), ("assistant", "error")]
    assert chat[1]["error_type"] == "provider_error" and "タイムアウト" in chat[1]["content"]
    assert list_threads(repo, review.id or 0) == []
    resent = pop_failed_turn(chat)
    assert resent is not None and chat == []
    again = page_turn(repo, client, review, None, chat, resent["content"])
    assert again.ok and client.requests[1].messages == client.requests[0].messages
    assert again.thread_id is not None and len(repo.load_messages(again.thread_id)) == 2


def test_a_failed_summary_warns_and_is_caught_up_after_the_next_turn(
    repo: ReviewRepository, review: ReviewRecord
) -> None:
    outputs: list[str | ProviderError] = [
        "A1",
        "A2",
        "A3",
        "A4",
        "A5",
        ProviderError("server_error"),
        "A6",
        "S1",
    ]
    client, chat, thread_id = ReplayClient(outputs), [], None
    for text in INPUTS[:6]:
        outcome = run_turn(repo, client, review, thread_id, history(chat), text)
        chat += outcome.items
        thread_id = outcome.thread_id
        if text == INPUTS[4]:
            assert outcome.stored and outcome.summary is not None and outcome.summary.failed
            assert outcome.notices == [
                (
                    "warning",
                    "会話の要約を作成できませんでした（LLMの呼び出しに失敗しました。 LLMのサーバーでエラーが発生しました（5xx）。"
                    "時間をおいて再試行してください。）。"
                    "要約ができるまでは会話履歴をそのまま送り、次のターンの後に再試行します。",
                )
            ]
    assert outcome.notices == [("success", "ターン1～5の会話を要約しました。次のターンから要約を使います。")]
    assert thread_id is not None and repo.thread_state(thread_id).summary_up_to_turn == 5


class FailingRepository(ReviewRepository):
    def save_turn(self, *args: object, **kwargs: object) -> None:
        raise OperationalError("INSERT", {}, Exception("disk I/O error"))


def test_a_reply_that_cannot_be_stored_is_still_returned(engine: Engine) -> None:
    repo = FailingRepository(engine, owner_id=ALICE.id)
    review = repo.get_review(repo.add_review(REVIEW))
    assert review is not None
    outcome = run_turn(repo, ReplayClient(["A1"]), review, None, [], "§3 は？")
    assert [(i["status"], i["content"]) for i in outcome.items] == [("done", "§3 は？"), ("done", "A1")]
    assert outcome.notices == [("error", STORE_FAILED)] and not outcome.stored
    assert outcome.thread_id is not None  # the thread was created; the next turn goes on in it


class BrokenClient:
    """Fails in a way the guard does not translate (a bug, not a provider error)."""

    provider, model = "broken", "broken"

    def __init__(self, replies: int = 0):
        self.replies = replies

    def complete(self, request: LLMRequest) -> LLMReply:
        if self.replies:
            self.replies -= 1
            return LLMReply("A")
        raise RuntimeError("boom")

    def stream(self, request: LLMRequest) -> TextStream:
        raise RuntimeError("boom")


def test_an_unexpected_error_becomes_an_error_item(repo: ReviewRepository, review: ReviewRecord) -> None:
    outcome = run_turn(repo, BrokenClient(), review, None, [], "§3 は？")  # type: ignore[arg-type]
    assert [(i["role"], i["status"]) for i in outcome.items] == [("user", "error"), ("assistant", "error")]
    assert (
        outcome.items[1]["content"] == UNEXPECTED_REPLY
        and outcome.items[1]["error_type"] == "unexpected_error"
    )
    assert outcome.thread_id is None and list_threads(repo, review.id or 0) == []


def test_an_unexpected_error_after_the_reply_keeps_the_reply(
    repo: ReviewRepository, review: ReviewRecord
) -> None:
    client, chat, thread_id = BrokenClient(replies=5), [], None  # the summary call after turn 5 raises
    for text in INPUTS[:5]:
        outcome = run_turn(repo, client, review, thread_id, history(chat), text)  # type: ignore[arg-type]
        chat += outcome.items
        thread_id = outcome.thread_id
    assert outcome.notices == [("error", UNEXPECTED_AFTER)] and outcome.stored
    assert [i["status"] for i in outcome.items] == ["done", "done"]
    assert thread_id is not None and repo.thread_state(thread_id).summary_up_to_turn == 0


def test_a_missing_thread_starts_a_new_one(repo: ReviewRepository, review: ReviewRecord) -> None:
    plan = prepare_turn(repo, review, 999, [], "§3")
    assert plan.thread_id is None and plan.review_id == review.id
    with pytest.raises(ValueError):
        prepare_turn(repo, REVIEW, None, [], "§3")  # a review that was never stored


def test_sample_and_import(repo: ReviewRepository) -> None:
    first = sample_review_id(repo)
    assert sample_review_id(repo) == first
    bad = import_review(repo, b'{"title": "x"}')
    assert (
        bad.review_id is None
        and bad.notice is None
        and "必須の項目「question_text」がありません。" in bad.errors[1]
    )
    good = {
        "title": "取り込み",
        "question_text": "Q",
        "answer_text": "$$[1] 一",
        "review_json": {"overall_review": "OV", "weaknesses": [{"title": "w", "paragraph_number": 2}]},
    }
    result = import_review(repo, json.dumps(good).encode())
    assert result.review_id == first + 1 and result.errors == []
    assert result.notice == (
        "warning",
        "「取り込み」を読み込みました。 注意: 講評が答案にない段落 §2 を参照しています。",
    )
    assert open_thread(repo, 12345) is None
