"""Issue #9 items 1: the debug tree (core.workbench.tree.build_tree) of real turns driven through the very
functions the pages call, with real SQLite stores: every event carries the browser session, the
conversation, the turn and its parent, and follow-up calls hang under the call that caused them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from core.debuglog import trace
from core.debuglog.events import DebugEvent, ListSink
from core.flows.chat_item import ChatItem, history, user_item
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest, ChatStep
from core.flows.diagnosis.service import ChatService, run_turn
from core.flows.knowledge import turn as kt
from core.flows.knowledge.stores import knowledge_stores
from core.flows.memory.background import memory_job_key
from core.flows.memory.chat import finish_turn as memory_finish
from core.flows.memory.chat import prepare_turn as memory_prepare
from core.flows.memory.chat import stream_reply as memory_stream
from core.flows.memory.stores import memory_collection, memory_repository
from core.flows.registry import demo_personas
from core.flows.review_chat import finish_turn, prepare_turn, repository, stream_reply
from core.flows.review_chat.summary_job import summary_job_key
from core.jobs.worker import BackgroundWorker
from core.llm.base import ProviderError
from core.llm.demo import DemoClient
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.workbench.tree import CallNode, ConversationNode, build_tree
from tests.core.diagnosis_fixtures import NOW_TS, diag, spec_json, urgency_json
from tests.core.test_knowledge_turn import raw
from tests.core.test_memory_flow import NOW, USER
from tests.core.test_memory_flow import combined_turn_outputs as memory_outputs
from tests.core.test_review_messages import REVIEW
from tests.persons import ALICE

BROWSER = "browser-1"  # what pages/ui/last_call.capture binds for the turn
Shape = tuple[Any, ...]


@pytest.fixture
def worker():  # type: ignore[no-untyped-def]
    w = BackgroundWorker(threads=2)
    yield w
    w.close()


def call_shape(node: CallNode) -> Shape:
    """(step, attempts, repairs, notes, children) of a call, children in log order."""
    return (
        node.step,
        len(node.attempts),
        len(node.repairs),
        len(node.notes),
        [call_shape(c) for c in node.children],
    )


def tree_shape(tree: list[ConversationNode]) -> list[Shape]:
    return [
        (
            c.flow,
            c.conversation_id,
            c.session_id,
            [(t.turn, [call_shape(n) for n in t.calls]) for t in c.turns],
        )
        for c in tree
    ]


def trace_of(event: DebugEvent) -> tuple[str, str, str, int, str]:
    return (event.session_id, event.flow, event.conversation_id, event.turn, event.parent_id)


def reply(*children: Shape) -> Shape:
    return ("reply", 1, 0, 0, list(children))


SUMMARY = ("summarize", 1, 0, 0, [])


def test_a_12_turn_review_chat_with_its_summaries(engine: Engine, worker: BackgroundWorker) -> None:
    repo = repository(engine, ALICE, clock=lambda: 1_795_255_200)
    review_id = repo.add_review(REVIEW)
    review = repo.get_review(review_id)
    assert review is not None
    client = DemoClient(personas=demo_personas())
    events: list[DebugEvent] = []
    sink, chat, thread_id = ListSink(events), [], None  # type: list[ChatItem] | Any
    for n in range(1, 13):  # what pages/ui/review_session.stream_turn does, inside last_call.capture
        text = f"質問{n}：§{n % 3 + 1} の講評を詳しく"
        chat.append(user_item(text))
        with trace.bind(session_id=BROWSER):
            plan = prepare_turn(repo, review, thread_id, history(chat), text, worker=worker)
            stream = stream_reply(client, plan, sink=sink)
            "".join(stream)
            result = finish_turn(repo, client, plan, stream.result, sink=sink, worker=worker)
        assert result.ok and result.stored, result.notices
        chat[-1:] = result.items
        thread_id = result.thread_id
    assert thread_id is not None
    assert worker.wait(summary_job_key(thread_id, repo.owner_id), timeout=20)
    from_worker = [e for e in events if e.step == "summarize"]
    assert len(from_worker) == 4  # call + result of each of the two summaries (turns 5 and 10)

    tree = build_tree(events)
    thread = str(thread_id)
    turns = [(n, [reply(SUMMARY) if n in (5, 10) else reply()]) for n in range(1, 13)]
    assert tree_shape(tree) == [("review", thread, BROWSER, turns)]
    by_turn = {t.turn: t.calls[0] for t in tree[0].turns}
    for n, call in by_turn.items():
        assert {trace_of(e) for e in events if e.call_id == call.call_id} == {
            (BROWSER, "review", thread, n, "")
        }
        assert {e.user_input for e in events if e.call_id == call.call_id} == {
            f"質問{n}：§{n % 3 + 1} の講評を詳しく"
        }
    for n in (5, 10):
        summary = by_turn[n].children[0]
        assert {trace_of(e) for e in events if e.call_id == summary.call_id} == {
            (BROWSER, "review", thread, n, by_turn[n].call_id)
        }


def test_a_knowledge_interview_with_a_repair(engine: Engine) -> None:
    stores = knowledge_stores(engine, ALICE, clock=lambda: 1_700_000_000)
    client = ReplayClient(['{"assistant_message": "項目が足りない"}', raw(), raw("次の質問です。")])
    events: list[DebugEvent] = []
    items: list[ChatItem] = []
    outcomes = []
    interview_id = None
    for text in ("秘密保持期間を3年に限定されました", "相手方は大手の製造業です"):
        with trace.bind(session_id=BROWSER):
            outcome = kt.run_turn(
                items,
                kt.TurnInput(text, [], []),
                interview_id=interview_id,
                client=client,
                repo=stores.interviews,
                sink=ListSink(events),
            )
        assert outcome.ok
        interview_id = outcome.interview_id
        outcomes.append(outcome)
    assert interview_id is not None and client.remaining == 0

    tree = build_tree(events)
    assert tree_shape(tree) == [
        (
            "knowledge",
            interview_id,
            BROWSER,
            [(1, [("interview_turn", 2, 1, 0, [])]), (2, [("interview_turn", 1, 0, 0, [])])],
        )
    ]
    first = tree[0].turns[0].calls[0]
    assert [a.attempt for a in first.attempts] == [1, 2] and first.attempts[0].error_type == "schema_error"
    assert first.call_id == outcomes[0].result["call_id"]
    assert {trace_of(e) for e in events} == {
        (BROWSER, "knowledge", interview_id, 1, ""),
        (BROWSER, "knowledge", interview_id, 2, ""),
    }
    assert [e.user_input for e in events if e.kind == "call"] == [
        "秘密保持期間を3年に限定されました",
        "秘密保持期間を3年に限定されました",
        "相手方は大手の製造業です",
    ]


def test_a_memory_turn_with_its_extraction_and_summaries(
    tmp_path: Path, engine: Engine, worker: BackgroundWorker
) -> None:
    repo = memory_repository(engine, LOCAL_PERSON, lambda: NOW)
    collection = memory_collection(open_chroma(tmp_path), LOCAL_PERSON)
    client = ReplayClient(memory_outputs())
    events: list[DebugEvent] = []
    sink = ListSink(events)
    with trace.bind(session_id=BROWSER):  # pages/ui/memory/chat.py inside last_call.capture
        prepared = memory_prepare(repo, collection, [], USER)
        stream = memory_stream(client, prepared, sink)
        "".join(stream)
        outcome = memory_finish(repo, collection, client, prepared, stream, sink, worker=worker)
    assert outcome.ok and outcome.background == "queued"
    assert worker.wait(memory_job_key(repo.owner_id), timeout=20)
    assert client.remaining == 0

    tree = build_tree(events)
    children = [
        ("extract_all", 1, 0, 0, []),
        ("summary_bond", 1, 0, 0, []),
        ("summary_person", 1, 0, 0, []),
    ]
    assert tree_shape(tree) == [("memory", LOCAL_PERSON.id, BROWSER, [(1, [("chat", 1, 0, 0, children)])])]
    chat_call = tree[0].turns[0].calls[0]
    assert chat_call.call_id == stream.call_id
    assert {trace_of(e) for e in events if e.call_id != chat_call.call_id} == {
        (BROWSER, "memory", LOCAL_PERSON.id, 1, chat_call.call_id)
    }
    assert {e.user_input for e in events} == {USER}


def test_a_diagnosis_session_with_urgency_and_spec_checks_under_the_step(engine: Engine) -> None:
    worker = BackgroundWorker(threads=1)
    client = ReplayClient([spec_json(is_spec=False), "これまでの症状の要約", diag(), urgency_json()])
    deps = open_deps(client, engine, LOCAL_PERSON, clock=lambda: NOW_TS, worker=worker)
    events: list[DebugEvent] = []
    deps.sink = ListSink(events)
    service = ChatService()
    session = service.session(None, LOCAL_PERSON.id)
    session.vehicle_id, session.make, session.model, session.year = (
        "minato-soleil-2022",
        "ミナト",
        "ソレイユ",
        2022,
    )
    session.symptom_text = "Pに入れてもキーが抜けない"
    session.current_step = ChatStep.SPEC_CHECK  # free text routed it to the spec check
    session.diagnostic_turn, session.max_diagnostic_turns = 2, 3  # this turn is the 3rd: summary due
    try:
        with trace.bind(session_id=BROWSER):
            first = ChatRequest(session.session_id, message="Pに入れてもキーが抜けない")
            run_turn(service, first, deps)  # spec_check -> not a spec -> diagnosing (summary on the worker)
            second = ChatRequest(session.session_id, action="choice", action_value="走行中")
            run_turn(service, second, deps)  # past the last interview turn -> urgency_check, no main call
    finally:
        worker.close()
    assert client.remaining == 0 and session.current_step in (ChatStep.DONE, ChatStep.RESERVATION)

    tree = build_tree(events)
    step_one = ("diagnosing", 1, 0, 0, [("spec_check", 1, 0, 0, []), ("summary", 1, 0, 0, [])])
    step_two = ("diagnosis_step", 0, 0, 1, [("urgency_check", 1, 0, 0, [])])
    sid = session.session_id
    assert tree_shape(tree) == [("diagnosis", sid, BROWSER, [(1, [step_one]), (2, [step_two])])]
    main = tree[0].turns[0].calls[0]
    span = tree[0].turns[1].calls[0]
    assert {trace_of(e) for e in events if e.call_id == main.call_id} == {(BROWSER, "diagnosis", sid, 1, "")}
    for child in main.children:
        assert {trace_of(e) for e in events if e.call_id == child.call_id} == {
            (BROWSER, "diagnosis", sid, 1, main.call_id)
        }
    (urgency,) = span.children
    assert {trace_of(e) for e in events if e.call_id == urgency.call_id} == {
        (BROWSER, "diagnosis", sid, 2, span.call_id)
    }
    (note,) = span.notes
    assert trace_of(note) == (BROWSER, "diagnosis", sid, 2, "") and note.step == "diagnosis_step"
    assert {e.user_input for e in events if e.turn == 2} == {"走行中"}


def test_a_new_threads_first_reply_is_logged_under_the_thread_once_it_exists(engine: Engine) -> None:
    repo = repository(engine, ALICE, clock=lambda: 1_795_255_200)
    review = repo.get_review(repo.add_review(REVIEW))
    assert review is not None
    client = ReplayClient([ProviderError("rate_limit", "slow down"), "最初の返答"])
    events: list[DebugEvent] = []
    sink = ListSink(events)
    results = []
    for index in range(2):  # the failed first turn, then its retry (still no thread before the reply)
        plan = prepare_turn(repo, review, None, [], "§1 について")
        stream = stream_reply(client, plan, sink=sink)
        "".join(stream)
        assert len(events) == 2 * index  # this turn's events are held until finish_turn
        results.append(finish_turn(repo, client, plan, stream.result, sink=sink))
    failed, stored = results
    assert not failed.ok and failed.thread_id is None and stored.thread_id is not None
    assert [(e.kind, e.conversation_id, e.turn) for e in events] == [
        ("error", "", 1),
        ("result", "", 1),
        ("call", str(stored.thread_id), 1),
        ("result", str(stored.thread_id), 1),
    ]
