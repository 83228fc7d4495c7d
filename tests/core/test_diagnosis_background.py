"""spec 04 §4 D.5 with a worker (issue #16): the 3-turn summary runs beside the RAG answer call and D.7 gets
the same summary as without a worker; a full queue falls back to the call at D.5."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from core.flows.diagnosis.models import ChatRequest
from core.flows.diagnosis.rag import RagAnswer
from core.flows.diagnosis.state_machine import process_step
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMReply, LLMRequest, TextStream, stream_from_reply
from tests.core.diagnosis_fixtures import FakeRag, diag, make_deps, make_session, src


class Scripted:
    """The summary call says when it started; the diagnostic call answers a question."""

    provider, model = "scripted", "scripted"

    def __init__(self) -> None:
        self.summary_started = threading.Event()
        self.requests: list[LLMRequest] = []

    def complete(self, request: LLMRequest) -> LLMReply:
        self.requests.append(request)
        if request.tags["step"] == "summary":
            self.summary_started.set()
            return LLMReply("- 要約テキスト")
        return LLMReply(diag(message="次の質問？"))

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


class WaitingRag(FakeRag):
    """Answers only once the summary call has started (a sequential D.4 -> D.5 would time out here)."""

    def __init__(self, started: threading.Event, wait: float):
        super().__init__([src("エンジン警告灯", "warning", 0.62, warning=True)])
        self.started, self.wait, self.overlapped = started, wait, False

    def query(self, symptom: str, vehicle_id: str, make: str, model: str, year: int, **kw: Any) -> RagAnswer:
        self.overlapped = self.started.wait(self.wait)
        return super().query(symptom, vehicle_id, make, model, year, **kw)


@pytest.fixture
def worker() -> Iterator[BackgroundWorker]:
    w = BackgroundWorker(threads=2)
    yield w
    w.close()


def third_turn(worker: BackgroundWorker | None, rag_wait: float) -> tuple[Scripted, WaitingRag, Any]:
    client = Scripted()
    rag = WaitingRag(client.summary_started, rag_wait)
    deps = make_deps(rag=rag)
    deps.client, deps.worker = client, worker
    session = make_session(
        diagnostic_turn=2, conversation_history=[{"role": "assistant", "content": "症状は？"}]
    )
    process_step(session, ChatRequest("s1", message="まだ鳴る"), deps)
    return client, rag, session


def test_the_summary_runs_beside_the_rag_answer_and_the_prompt_is_unchanged(worker) -> None:  # type: ignore[no-untyped-def]
    client, rag, session = third_turn(worker, rag_wait=10)
    assert rag.overlapped  # RAG was still answering when the summary call started
    assert session.conversation_summary == "- 要約テキスト"
    assert [r.tags["step"] for r in client.requests] == ["summary", "diagnosing"]
    inline_client, inline_rag, inline_session = third_turn(None, rag_wait=0.05)
    assert not inline_rag.overlapped  # without a worker D.4 and D.5 run one after the other, as specified
    assert client.requests[-1].messages == inline_client.requests[-1].messages  # D.7 got the same prompt
    assert session.conversation_summary == inline_session.conversation_summary


def test_a_full_queue_makes_the_call_at_d5() -> None:
    worker = BackgroundWorker(threads=1, max_queued=0)
    try:
        client, rag, session = third_turn(worker, rag_wait=0.05)
    finally:
        worker.close()
    assert not rag.overlapped and session.conversation_summary == "- 要約テキスト"
    assert [r.tags["step"] for r in client.requests] == ["summary", "diagnosing"]
