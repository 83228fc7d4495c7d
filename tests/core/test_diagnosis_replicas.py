"""One diagnosis session served by two replicas on one database (SQLite file and PostgreSQL): the stored
session is the truth, a save names the version it started from, and a replica holding an older copy reloads
the stored session instead of overwriting it, so every user turn is kept."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy import Engine

from core.debuglog.events import WireFacts
from core.flows.diagnosis.deps import DiagnosisDeps, open_deps, session_archive
from core.flows.diagnosis.models import ChatRequest, ChatStep, SessionState
from core.flows.diagnosis.service import ChatService, run_turn
from core.llm.base import LLMReply, LLMRequest, TextStream, stream_from_reply
from core.people import LOCAL_PERSON
from core.store.diagnosis import DiagnosisRepository, SessionConflict
from tests.core.diagnosis_fixtures import NOW_TS, diag


class AskingClient:
    """Asks the next question for every structured call, answers "要約" otherwise; `before_call` runs once,
    before the first call (a test makes the other replica save a turn right then)."""

    provider, model, sdk = "replay", "replay", "replay"
    base_host: str | None = None

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []
        self.before_call: Callable[[], None] | None = None

    def complete(self, request: LLMRequest) -> LLMReply:
        hook, self.before_call = self.before_call, None
        if hook is not None:
            hook()
        self.requests.append(request)
        text = diag(message=f"質問{len(self.requests)}？") if request.json_schema is not None else "要約"
        return LLMReply(text=text, provider="replay", model="replay", wire=WireFacts(sdk="replay"))

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


class Replica:
    """One server process: its own engine, its own in-memory sessions, its own model client."""

    def __init__(self, engine: Engine):
        self.service = ChatService()
        self.client = AskingClient()
        self.engine = engine
        self.deps: DiagnosisDeps = open_deps(self.client, engine, LOCAL_PERSON, clock=lambda: NOW_TS)

    def turn(self, session_id: str | None, request: ChatRequest) -> SessionState:
        request.session_id = session_id
        session, _ = run_turn(self.service, request, self.deps)
        return session

    def page_session(self, session_id: str) -> SessionState:
        """What the page draws on a rerun (pages/ui/diagnosis/session.current_session)."""
        archive = session_archive(self.engine, LOCAL_PERSON, lambda: NOW_TS)
        return self.service.session(session_id, LOCAL_PERSON.id, archive)


def user_turns(session: SessionState) -> list[str]:
    return [item["content"] for item in session.conversation_history if item["role"] == "user"]


def stored(engine: Engine, session_id: str) -> dict[str, object]:
    state = DiagnosisRepository(engine, lambda: NOW_TS, owner_id=LOCAL_PERSON.id).load_session(session_id)
    assert state is not None
    return state


@pytest.fixture
def replicas(engine: Engine, engine_factory: Callable[[], Engine]) -> tuple[Replica, Replica]:
    return Replica(engine), Replica(engine_factory())


def start_interview(a: Replica) -> str:
    session = a.turn(None, ChatRequest(action="select_vehicle", action_value="minato-soleil-2022"))
    a.turn(session.session_id, ChatRequest(action="photo_confirm", action_value="yes"))
    a.turn(session.session_id, ChatRequest(message="ドアがきしむ"))
    return session.session_id


def test_two_replicas_serving_one_session_alternately_keep_every_turn(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    sid = start_interview(a)
    answers = ["走行中", "右前から", "雨の日に", "段差で"]
    for replica, answer in zip([b, a, b, a], answers, strict=True):
        session = replica.turn(sid, ChatRequest(message=answer))
        assert session.session_id == sid
    expected = ["ドアがきしむ", *answers]
    for replica in (a, b):  # each replica's next page run shows the stored session, not its older copy
        assert user_turns(replica.page_session(sid)) == expected
    state = stored(a.engine, sid)
    assert state["collected_symptoms"] == expected
    assert state["store_version"] == 7  # 3 turns on A, then 4 alternating: one version per saved turn
    assert state["diagnostic_turn"] == 5


def test_a_stale_replica_reloads_instead_of_overwriting(replicas: tuple[Replica, Replica]) -> None:
    a, b = replicas
    sid = start_interview(a)
    before = a.page_session(sid)  # A holds version 3 in memory
    assert before.store_version == 3
    b.turn(sid, ChatRequest(message="走行中"))  # B stores version 4
    assert a.service.store.get(sid, LOCAL_PERSON.id) is before  # A's cache is still the old copy
    session = a.turn(sid, ChatRequest(message="右前から"))
    assert session is not before and session.store_version == 5
    assert user_turns(session) == ["ドアがきしむ", "走行中", "右前から"]
    assert stored(b.engine, sid)["collected_symptoms"] == ["ドアがきしむ", "走行中", "右前から"]


def test_a_save_that_loses_the_race_reloads_and_applies_the_turn_again(
    replicas: tuple[Replica, Replica],
) -> None:
    a, b = replicas
    sid = start_interview(a)
    # A's turn starts on version 3; while A waits for its model, B saves "走行中" as version 4
    a.client.before_call = lambda: b.turn(sid, ChatRequest(message="走行中"))
    asked = len(a.client.requests)
    session = a.turn(sid, ChatRequest(message="右前から"))
    assert user_turns(session) == ["ドアがきしむ", "走行中", "右前から"]
    assert session.store_version == 5 and session.current_step == ChatStep.DIAGNOSING
    assert stored(a.engine, sid)["collected_symptoms"] == ["ドアがきしむ", "走行中", "右前から"]
    # the turn ran twice on A: once on the stale copy (its save refused), once on the stored session
    turn_calls = [r for r in a.client.requests[asked:] if r.json_schema is not None]
    assert len(turn_calls) == 2
    assert "右前から" in str(turn_calls[1].messages) and "走行中" in str(turn_calls[1].messages)
    assert "走行中" not in str(turn_calls[0].messages)


def test_a_stale_save_is_refused_and_writes_nothing(engine: Engine) -> None:
    repo = DiagnosisRepository(engine, lambda: NOW_TS, owner_id=LOCAL_PERSON.id)
    assert repo.save_session("s1", {"turn": 1}) == 1
    assert repo.save_session("s1", {"turn": 2}, expected_version=1) == 2
    with pytest.raises(SessionConflict):
        repo.save_session("s1", {"turn": "stale"}, expected_version=1)
    with pytest.raises(SessionConflict):  # a first save of an id that is stored already
        repo.save_session("s1", {"turn": "again"})
    assert repo.load_session("s1") == {"turn": 2, "store_version": 2}
    assert repo.session_version("s1") == 2
    repo.delete_session("s1")
    with pytest.raises(SessionConflict):  # deleted on another replica (「最初からやり直す」)
        repo.save_session("s1", {"turn": 3}, expected_version=2)
    assert repo.session_version("s1") is None
