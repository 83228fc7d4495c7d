"""Replay an export through its flow: a demo recording replays with 0 changes on the demo model, and a
Replay client with altered replies reports exactly those changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.debuglog.events import DebugEvent, events_from_jsonl, events_to_jsonl
from core.flows import review_chat
from core.flows.chat_item import ChatItem, assistant_item, history, user_item
from core.flows.diagnosis.deps import open_deps
from core.flows.diagnosis.models import ChatRequest, ChatResponse
from core.flows.diagnosis.rag import RAGService
from core.flows.diagnosis.service import ChatService
from core.flows.diagnosis.service import run_turn as diagnosis_turn
from core.flows.knowledge import demo as kd
from core.flows.knowledge.stores import knowledge_stores
from core.flows.knowledge.turn import TurnInput
from core.flows.knowledge.turn import run_turn as knowledge_turn
from core.flows.memory.chat import run_turn as memory_turn
from core.flows.memory.stores import memory_repository
from core.flows.registry import demo_client
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store import open_store
from core.workbench.replay import RecordedConversation, conversations, replay
from core.workbench.replay_flows import open_runner
from tests.core import review_material_fixtures as material

REVIEW_INPUTS = ["§11 はどう評価されていますか？", "理由は？", "採点実感では？"]
KNOWLEDGE_INPUTS = [kd.DEMO_OPENING, *kd.DEMO_SCRIPT]


class ListSink:
    """Keeps the events as the guard stamped them (trace ids bound by the flows themselves)."""

    def __init__(self, events: list[DebugEvent]):
        self.events = events

    def emit(self, event: DebugEvent) -> None:
        self.events.append(event)


def record(tmp_path: Path) -> list[DebugEvent]:
    """A demo session like the pages run it: 3 review chat turns and 4 knowledge turns, trace bound."""
    events: list[DebugEvent] = []
    sink, client = ListSink(events), demo_client()
    engine = open_store(tmp_path / "recording")
    repo = review_chat.repository(engine, LOCAL_PERSON)
    review = repo.get_review(review_chat.sample_review_id(repo))
    chat: list[ChatItem] = []
    thread_id = None
    for text in REVIEW_INPUTS:
        prior = history(chat)
        chat.append(user_item(text))
        outcome = review_chat.run_turn(repo, client, review, thread_id, prior, text, sink=sink)
        chat[-1:], thread_id = outcome.items, outcome.thread_id
    interviews = knowledge_stores(engine, LOCAL_PERSON).interviews
    items: list[ChatItem] = []
    interview_id = None
    for text in KNOWLEDGE_INPUTS:
        done = knowledge_turn(
            items, TurnInput(text), interview_id=interview_id, client=client, repo=interviews, sink=sink
        )
        interview_id = done.interview_id
    engine.dispose()
    return events


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> list[RecordedConversation]:
    events = events_from_jsonl(events_to_jsonl(record(tmp_path_factory.mktemp("replay"))))
    return conversations(events)


def test_conversations_of_an_export_list_each_turns_input(exported) -> None:
    assert [(c.flow, [t.turn for t in c.turns], [t.user_input for t in c.turns]) for c in exported] == [
        ("review", [1, 2, 3], REVIEW_INPUTS),
        ("knowledge", [1, 2, 3, 4], KNOWLEDGE_INPUTS),
    ]
    assert exported[0].conversation_id == "1"  # the review thread's id, stamped by the flow
    assert len(exported[1].conversation_id) == 32  # the interview's id
    assert exported[0].label == "review / 1（3 ターン）"


@pytest.mark.parametrize("index", [0, 1])
def test_a_demo_recording_replays_on_the_demo_model_with_no_changes(exported, index) -> None:
    conversation = exported[index]
    progress: list[tuple[int, int]] = []
    report = replay(
        conversation.flow, conversation.turns, demo_client(), on_turn=lambda i, n: progress.append((i, n))
    )
    n = len(conversation.turns)
    assert progress == [(i, n) for i in range(1, n + 1)]
    assert [row.changes for row in report.rows] == [[]] * n
    if conversation.flow == "review":
        assert report.summary == "3ターン: 有効 3、修復 0、記録との違い 0ターン"
        assert [r.after.length for r in report.rows] == [r.before.length for r in report.rows]
        assert all(r.after.length > 100 for r in report.rows)
        assert list(report.table()[0]) == [  # no key-field column: the review chat replies in text
            "ターン",
            "入力",
            "有効（記録→再生）",
            "修復",
            "レイテンシ(ms)",
            "トークン",
            "文字数",
            "コスト",
            "違い",
        ]
    else:
        assert [r.after.key for r in report.rows] == [
            "organize_risks",
            "organize_risks",
            "draft_knowledge",
            "review_knowledge",
        ]
        assert report.summary == "4ターン: 有効 4、修復 0、フェーズの変化 2、記録との違い 0ターン"
    assert (report.provider, report.model) == ("demo", "katachi-demo")


def test_altered_replies_report_exactly_those_changes(exported) -> None:
    knowledge = exported[1]
    raws = [
        e.raw or ""
        for turn in knowledge.turns
        for e in turn.events
        if e.kind == "call" and e.step == "interview_turn"
    ]
    assert len(raws) == 4
    turn2 = json.loads(raws[1])
    turn2["state"]["phase"] = "collect_case"
    altered = [
        raws[0],
        json.dumps(turn2, ensure_ascii=False),
        "JSONではない",
        "まだ違う",
        "最後も違う",
        raws[3],
    ]
    client = ReplayClient(altered, model="altered")
    report = replay("knowledge", knowledge.turns, client)
    assert client.remaining == 0
    assert [row.changes for row in report.rows] == [[], ["key"], ["valid", "key", "repairs"], []]
    third = report.rows[2]
    assert (third.before.valid, third.after.valid, third.after.repairs, third.after.key) == (
        True,
        False,
        2,
        "",
    )
    assert report.summary == "4ターン: 有効 3、修復 2、フェーズの変化 3、記録との違い 2ターン"
    table = report.table()
    assert table[1]["フェーズ（記録→再生）"] == "organize_risks→collect_case"
    assert table[2]["有効（記録→再生）"] == "有効→無効" and table[2]["修復"] == "0→2"
    assert table[2]["違い"] == "有効/無効、フェーズ、修復回数" and table[0]["違い"] == "なし"


def test_a_flow_that_cannot_be_replayed_is_a_key_error(exported) -> None:
    with pytest.raises(KeyError):
        replay("no_such_flow", exported[0].turns, demo_client())


def test_a_memory_conversation_replays_with_no_changes(tmp_path) -> None:
    events: list[DebugEvent] = []
    engine = open_store(tmp_path / "memory")
    repo, items = memory_repository(engine, LOCAL_PERSON), []
    inputs = ["最近ジョギングを始めました", "昨日は5キロ走れました"]
    for text in inputs:
        _, outcome = memory_turn(
            repo, None, demo_client(), [dict(i) for i in history(items)], text, sink=ListSink(events)
        )
        items += [user_item(text, status="done"), assistant_item(outcome.reply_text)]
    engine.dispose()
    (conversation,) = conversations(events_from_jsonl(events_to_jsonl(events)))
    report = replay("memory", conversation.turns, demo_client())
    assert [r.before.key for r in report.rows] == [r.after.key for r in report.rows]
    assert report.changed == 0
    assert [r.after.key for r in report.rows] == ["neutral", "neutral"]  # the demo persona's trailer
    assert report.summary == "2ターン: 有効 2、修復 0、感情の変化 0、記録との違い 0ターン"


# --- diagnosis: button choices and typed text, replayed request by request --------------------------------


def record_diagnosis(tmp_path: Path, rag: RAGService) -> list[DebugEvent]:
    """A demo diagnosis like the page runs it (pages/ui/diagnosis_session.send → service.run_turn): the demo
    button (vehicle, photo, symptom), a choice button, a typed answer, then the booking button."""
    events: list[DebugEvent] = []
    engine = open_store(tmp_path / "diagnosis")
    service, session_id = ChatService(), None

    def send(request: ChatRequest) -> ChatResponse:
        nonlocal session_id
        request.session_id = session_id
        deps = open_deps(demo_client(), engine, LOCAL_PERSON, rag=rag, sink=ListSink(events))
        session, response = diagnosis_turn(service, request, deps)
        session_id = session.session_id
        return response

    send(ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"))
    send(ChatRequest(action="photo_confirm", action_value="yes"))
    first = send(ChatRequest(message="エンジン警告灯が点灯した"))
    send(ChatRequest(action=first.prompt.action, action_value=first.prompt.choices[0]["value"]))
    answer = send(ChatRequest(message="加速が弱い気がします"))
    assert answer.current_step == "reservation"
    send(ChatRequest(action="reservation", action_value="visit"))
    engine.dispose()
    return events


DIAGNOSIS_INPUTS = [
    "ミナト自動車 ソレイユ（2022年式）",
    "はい、この車両です",
    "エンジン警告灯が点灯した",
    "エンジン警告灯",
    "加速が弱い気がします",
    "来店予約をする",
]


@pytest.fixture(scope="module")
def manuals(tmp_path_factory: pytest.TempPathFactory) -> RAGService:
    rag = RAGService(open_chroma(tmp_path_factory.mktemp("manuals")))
    rag.index_manuals()
    return rag


@pytest.fixture(scope="module")
def diagnosis_export(tmp_path_factory: pytest.TempPathFactory, manuals: RAGService) -> RecordedConversation:
    events = record_diagnosis(tmp_path_factory.mktemp("diagnosis"), manuals)
    (conversation,) = conversations(events_from_jsonl(events_to_jsonl(events)))
    return conversation


def test_a_diagnosis_export_lists_every_request_with_the_request_itself(diagnosis_export) -> None:
    turns = diagnosis_export.turns
    assert diagnosis_export.flow == "diagnosis" and len(diagnosis_export.conversation_id) == 32
    assert [(t.turn, t.user_input) for t in turns] == list(enumerate(DIAGNOSIS_INPUTS, 1))
    assert [t.turn_input for t in turns] == [
        {
            "message": "",
            "action": "select_vehicle",
            "action_value": "minato-soleil-2022",
            "rewind_to_turn": None,
        },
        {"message": "", "action": "photo_confirm", "action_value": "yes", "rewind_to_turn": None},
        {"message": "エンジン警告灯が点灯した", "action": None, "action_value": None, "rewind_to_turn": None},
        {"message": "", "action": "choice", "action_value": "エンジン警告灯", "rewind_to_turn": None},
        {"message": "加速が弱い気がします", "action": None, "action_value": None, "rewind_to_turn": None},
        {"message": "", "action": "reservation", "action_value": "visit", "rewind_to_turn": None},
    ]
    # a button without a model call is in the log as its step's note
    assert [[e.step for e in t.events] for t in turns][:2] == [["diagnosis_step"], ["diagnosis_step"]]


def test_a_diagnosis_export_replays_on_the_demo_model_with_no_changes(diagnosis_export, manuals) -> None:
    report = replay("diagnosis", diagnosis_export.turns, demo_client(), rag=manuals)
    assert [row.changes for row in report.rows] == [[]] * 6
    assert [(r.after.key, r.after.second) for r in report.rows] == [
        ("", ""),
        ("", ""),
        ("ask_question", "none"),
        ("ask_question", "none"),
        ("provide_answer", "high"),
        ("", ""),
    ]
    assert report.summary == "6ターン: 有効 6、修復 0、行動の変化 1、緊急度の変化 1、記録との違い 0ターン"
    assert report.table()[4]["緊急度（記録→再生）"] == "high→high"


def test_altered_diagnosis_replies_report_exactly_those_changes(diagnosis_export, manuals) -> None:
    calls = [e for t in diagnosis_export.turns for e in t.events if e.kind == "call"]
    raws = [e.raw or "" for e in calls]
    steps = [e.step for e in calls]
    assert steps == [
        "rag_answer",
        "diagnosing",
        "rag_answer",
        "diagnosing",
        "rag_answer",
        "summary",
        "diagnosing",
    ]
    second = json.loads(raws[3])
    second["urgency_flag"] = "medium"  # turn 4: the model reads the urgency differently
    altered = [
        *raws[:3],
        json.dumps(second, ensure_ascii=False),
        *raws[4:6],
        "JSONではない",
        "まだ違う",
        "最後も違う",
    ]
    client = ReplayClient(altered, model="altered")
    report = replay("diagnosis", diagnosis_export.turns, client, rag=manuals)
    assert client.remaining == 0
    assert [row.changes for row in report.rows] == [
        [],
        [],
        [],
        ["second"],
        ["valid", "key", "second", "repairs"],
        [],
    ]
    fifth = report.rows[4]
    assert (fifth.after.valid, fifth.after.repairs, fifth.after.key) == (False, 2, "")
    assert report.summary == "6ターン: 有効 5、修復 2、行動の変化 0、緊急度の変化 1、記録との違い 2ターン"
    table = report.table()
    assert table[3]["緊急度（記録→再生）"] == "none→medium" and table[3]["違い"] == "緊急度"
    assert table[4]["違い"] == "有効/無効、行動、緊急度、修復回数"


def test_a_diagnosis_recorded_before_requests_were_kept_is_not_listed(tmp_path, manuals) -> None:
    events = record_diagnosis(tmp_path, manuals)
    for event in events:
        event.turn_input = None
    assert conversations(events) == []


def test_a_thread_on_your_own_review_replays_on_that_review(tmp_path) -> None:
    """A review-chat thread about the person's own material replays on it (review_of_thread), not on the
    bundled sample: the replayed calls' context holds the own answer's §3; with 0 changes on the demo model."""
    engine = open_store(tmp_path / "own")
    repo = review_chat.repository(engine, LOCAL_PERSON)
    saved = review_chat.save_material(repo, material.draft())
    own = repo.get_review(saved.review_id)
    events: list[DebugEvent] = []
    chat: list[ChatItem] = []
    thread_id = None
    for text in ["§3 について教えてください", "理由は？"]:
        prior = history(chat)
        chat.append(user_item(text))
        outcome = review_chat.run_turn(
            repo, demo_client(), own, thread_id, prior, text, sink=ListSink(events)
        )
        chat[-1:], thread_id = outcome.items, outcome.thread_id
    (conversation,) = conversations(events_from_jsonl(events_to_jsonl(events)))
    found = review_chat.review_of_thread(repo, conversation.conversation_id)
    assert found is not None and found.question_text == material.QUESTION
    assert review_chat.review_of_thread(repo, "no-such-thread") is None
    engine.dispose()

    replayed: list[DebugEvent] = []
    with open_runner("review", demo_client(), review=found) as run:
        run(conversation.turns[0].user_input, None, ListSink(replayed))
    context = "\n".join(m["content"] for e in replayed if e.kind == "call" for m in e.messages)
    assert material.PARAGRAPHS[2].splitlines()[0] in context  # §3 of the own answer, not the sample's
    report = replay("review", conversation.turns, demo_client(), review=found)
    assert report.changed == 0
    assert [r.after.length for r in report.rows] == [r.before.length for r in report.rows]
