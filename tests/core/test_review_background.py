"""Nothing waits on the review summary (issue #16 item 4): with a real BackgroundWorker and SQLite, turn 5
returns after the reply alone, the summary lands as a job, turn 6 uses it (and waits for it, bounded, when it
is still running); failures and a full queue leave the segment due for a retry."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from core.flows.chat_item import ChatItem
from core.flows.review_chat import (
    ReviewRecord,
    TurnResult,
    repository,
    submit_summary_job,
    summary_backlog,
    summary_job_key,
)
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMReply, LLMRequest, ProviderError, TextStream, stream_from_reply
from core.store.review.repository import ReviewRepository
from tests.core.gated_client import GatedClient
from tests.core.test_review_messages import CTX_S12, INPUTS, REVIEW, SUM1, SYSTEM, a, ctx, q, u
from tests.core.test_review_turn import page_turn
from tests.persons import ALICE

T0 = 1_795_255_200
DONE = "ターン1～5の会話を要約しました。次のターンから要約を使います。"


class Scripted:
    """Replies A1, A2, … and summaries S1, S2, … by step, whatever the order the threads ask in."""

    provider, model = "scripted", "scripted"

    def __init__(self, fail_summaries: int = 0):
        self.counts = {"reply": 0, "summarize": 0}
        self.fail_summaries = fail_summaries
        self.lock = threading.Lock()

    def complete(self, request: LLMRequest) -> LLMReply:
        step = request.tags["step"]
        with self.lock:
            self.counts[step] += 1
            n = self.counts[step]
        if step == "summarize" and n <= self.fail_summaries:
            raise ProviderError("server_error")
        return LLMReply(
            ("A" if step == "reply" else "S") + str(n - (self.fail_summaries if step == "summarize" else 0))
        )

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


@pytest.fixture
def worker() -> Iterator[BackgroundWorker]:
    w = BackgroundWorker(threads=2)
    yield w
    w.close()


@pytest.fixture
def repo(engine: Engine) -> ReviewRepository:
    return repository(engine, ALICE, clock=lambda: T0)


@pytest.fixture
def review(repo: ReviewRepository) -> ReviewRecord:
    stored = repo.get_review(repo.add_review(REVIEW))
    assert stored is not None
    return stored


def five_turns(repo, client, review, worker) -> tuple[int, list[ChatItem], TurnResult]:  # type: ignore[no-untyped-def]
    chat: list[ChatItem] = []
    thread_id = None
    for text in INPUTS[:5]:
        outcome = page_turn(repo, client, review, thread_id, chat, text, worker=worker)
        thread_id = outcome.thread_id
    assert thread_id is not None
    return thread_id, chat, outcome


def test_turn_five_returns_after_one_call_and_turn_six_uses_the_summary(repo, review, worker) -> None:  # type: ignore[no-untyped-def]
    client = GatedClient(Scripted(), gated={"summarize"})
    thread_id, chat, fifth = five_turns(repo, client, review, worker)
    assert client.steps == ["reply"] * 5  # turn 5 returned after its reply; the summary waits on the gate
    assert fifth.stored and fifth.summary is None and fifth.summary_job is not None and fifth.notices == []
    key = summary_job_key(thread_id, ALICE.id)
    assert worker.busy(key, "summary") and repo.thread_state(thread_id).summary_up_to_turn == 0
    client.release()
    assert worker.wait(key, timeout=20)
    assert [(j["label"], j["status"], j["message"]) for j in worker.jobs(key)] == [
        ("会話の要約", "done", DONE)
    ]
    assert repo.thread_state(thread_id).conversation_summary == "【1～5ターンの要約】\nS1"
    sixth = page_turn(repo, client, review, thread_id, chat, INPUTS[5], worker=worker)
    assert sixth.summary_job is None and client.steps == ["reply"] * 5 + ["summarize", "reply"]
    assert sixth.plan is not None and sixth.plan.messages == [SYSTEM, ctx(**CTX_S12), SUM1, u(5), a(5), q(6)]


def test_turn_six_waits_for_a_summary_still_running(repo, review, worker) -> None:  # type: ignore[no-untyped-def]
    client = GatedClient(Scripted(), gated={"summarize"})
    thread_id, chat, _ = five_turns(repo, client, review, worker)
    timer = threading.Timer(0.3, client.release)
    timer.start()
    start = time.monotonic()
    sixth = page_turn(repo, client, review, thread_id, chat, INPUTS[5], worker=worker)
    assert time.monotonic() - start >= 0.25  # prepare_turn waited for the summary
    assert sixth.plan is not None and sixth.plan.summary_in_force == "【1～5ターンの要約】\nS1"
    assert client.steps[5:] == ["summarize", "reply"]


def test_a_summary_still_running_after_the_wait_is_used_from_a_later_turn(repo, review, worker) -> None:  # type: ignore[no-untyped-def]
    client = GatedClient(Scripted(), gated={"summarize"})
    thread_id, chat, _ = five_turns(repo, client, review, worker)
    sixth = page_turn(repo, client, review, thread_id, chat, INPUTS[5], worker=worker, wait=0.05)
    assert (
        sixth.plan is not None and sixth.plan.summary_in_force == ""
    )  # went on un-summarised, as on failure
    assert sixth.stored and len(repo.load_messages(thread_id)) == 12
    client.release()
    assert worker.wait(summary_job_key(thread_id, ALICE.id), timeout=20)
    assert repo.thread_state(thread_id).summary_up_to_turn == 5 and summary_backlog(repo, thread_id) is None
    seventh = page_turn(repo, client, review, thread_id, chat, INPUTS[6], worker=worker)
    assert seventh.plan is not None and seventh.plan.summary_in_force == "【1～5ターンの要約】\nS1"


def test_a_failed_summary_is_recorded_and_retried(repo, review, worker) -> None:  # type: ignore[no-untyped-def]
    client = Scripted(fail_summaries=1)
    thread_id, _chat, _ = five_turns(repo, client, review, worker)
    key = summary_job_key(thread_id, ALICE.id)
    assert worker.wait(key, timeout=20)
    [job] = worker.jobs(key)
    assert job["status"] == "failed" and job["message"].startswith(
        "会話の要約を作成できませんでした（LLMの呼び出しに失敗しました。"
    )
    assert job["message"].endswith("要約ができるまでは会話履歴をそのまま送り、次のターンの後に再試行します。")
    assert summary_backlog(repo, thread_id) == (1, 5)
    assert submit_summary_job(worker, repo, client, thread_id) is not None  # the page's 再試行
    assert worker.wait(key, timeout=20) and worker.jobs(key)[-1]["message"] == DONE
    assert summary_backlog(repo, thread_id) is None
    assert repo.thread_state(thread_id).conversation_summary == "【1～5ターンの要約】\nS1"


def test_a_full_queue_leaves_the_segment_due_for_the_next_turn(repo, review) -> None:  # type: ignore[no-untyped-def]
    worker = BackgroundWorker(threads=1, max_queued=1)
    gate = threading.Event()
    try:
        worker.submit("other", "x", "blocker", lambda: str(gate.wait(20)))
        while not any(j["status"] == "running" for j in worker.jobs("other")):
            time.sleep(0.01)
        assert worker.submit("other", "x", "filler", lambda: "") is not None
        client = Scripted()
        thread_id, chat, fifth = five_turns(repo, client, review, worker)
        assert fifth.stored and fifth.summary_job is None and summary_backlog(repo, thread_id) == (1, 5)
        gate.set()
        assert worker.wait("other", timeout=20)
        sixth = page_turn(repo, client, review, thread_id, chat, INPUTS[5], worker=worker)
        assert sixth.summary_job is not None  # the missed segment is caught up after turn 6
        assert worker.wait(summary_job_key(thread_id, ALICE.id), timeout=20)
    finally:
        worker.close()
    assert repo.thread_state(thread_id).summary_up_to_turn == 5 and summary_backlog(repo, thread_id) is None
