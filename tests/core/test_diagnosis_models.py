"""Session store (spec 04 §1), booking validation and repository (§7), schemas (§9, §12), the demo persona."""

from __future__ import annotations

import json
import threading

import pytest

from core.contracts.prompts import load_prompt
from core.contracts.schemas import load_schema
from core.contracts.strict_copies import is_strict_compatible, openai_strict_schema
from core.flows.diagnosis.booking import clean_booking, validate_booking
from core.flows.diagnosis.deps import DiagnosisDeps
from core.flows.diagnosis.models import ChatRequest, ChatStep, SessionState
from core.flows.diagnosis.session_store import SessionStore
from core.flows.diagnosis.state_machine import process_step
from core.flows.registry import demo_client
from core.people import LOCAL_PERSON
from core.store.diagnosis import DiagnosisRepository
from tests.core.diagnosis_fixtures import NOW, NOW_TS, FakeRag, make_session, src


def test_session_defaults_cover_spec_fields() -> None:
    s = SessionState(session_id="x")
    for name in (
        "session_id",
        "current_step",
        "vehicle_id",
        "make",
        "model",
        "year",
        "symptom_text",
        "collected_symptoms",
        "conversation_history",
        "diagnostic_turn",
        "max_diagnostic_turns",
        "last_confidence",
        "candidates_shown",
        "solutions_tried",
        "conversation_summary",
        "rewritten_query",
        "urgency_level",
        "can_drive",
        "manual_coverage",
        "visit_urgency",
        "state_snapshots",
        "spec_hint",
        "spec_check_shown",
        "booking_type",
        "booking_data",
    ):
        assert hasattr(s, name), name
    assert s.max_diagnostic_turns == 8 and s.diagnostic_turn == 0 and s.current_step == ChatStep.VEHICLE_ID
    assert set(ChatRequest.__dataclass_fields__) == {
        "session_id",
        "message",
        "action",
        "action_value",
        "rewind_to_turn",
    }


def test_session_defaults_exactly() -> None:
    """spec 04 §8: every field of the table with its default (diagnostic_turn 0-based, max 8)."""
    s = SessionState(session_id="x")
    assert vars(s) == {
        "session_id": "x",
        "current_step": ChatStep.VEHICLE_ID,
        "vehicle_id": "",
        "make": "",
        "model": "",
        "year": 0,
        "symptom_text": "",
        "collected_symptoms": [],
        "conversation_history": [],
        "diagnostic_turn": 0,
        "max_diagnostic_turns": 8,
        "last_confidence": 0.0,
        "candidates_shown": False,
        "solutions_tried": 0,
        "conversation_summary": "",
        "rewritten_query": "",
        "urgency_level": "none",
        "can_drive": True,
        "manual_coverage": "",
        "visit_urgency": "",
        "state_snapshots": [],
        "spec_hint": False,
        "spec_check_shown": False,
        "booking_type": "",
        "booking_data": {},
        # page-side extras
        "urgency_reasons": [],
        "last_prompt": {},
        "last_rag_sources": [],
        "asked_questions": [],
        "booking_id": None,
        "visited_steps": ["vehicle_id"],
        "owner_id": "local",
        "store_version": 0,  # never stored yet
    }
    assert [str(step) for step in ChatStep] == [
        "vehicle_id",
        "photo_confirm",
        "free_text",
        "spec_check",
        "diagnosing",
        "urgency_check",
        "reservation",
        "booking_info",
        "booking_confirm",
        "done",
    ]


def test_session_store_is_thread_safe() -> None:
    store = SessionStore()
    made: list[str] = []

    def work() -> None:
        for _ in range(200):
            s = store.create("someone")
            made.append(s.session_id)
            store.update(s)
            assert store.get(s.session_id, "someone") is s

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store) == 800 == len(set(made))


@pytest.mark.parametrize(
    ("schema", "prompt"),
    [
        ("diagnostic_response", "diagnostic_prompt"),
        ("urgency", "urgency_assessment_prompt"),
        ("spec_classification", "spec_classification_prompt"),
    ],
)
def test_prompts_state_the_meaning_of_every_field(schema: str, prompt: str) -> None:
    """spec 04 §12 step 2: the prompt explains every schema field (schema = types, prompt = meaning)."""
    text = load_prompt(prompt)
    for name in load_schema(schema)["properties"]:
        assert f"- {name}:" in text, name


def test_session_store_ttl_crud() -> None:
    now = [0.0]
    store = SessionStore(ttl_seconds=10, clock=lambda: now[0])
    s = store.create("a")
    assert store.get(s.session_id, "a") is s
    now[0] = 9
    assert store.get(s.session_id, "a") is s  # a hit refreshes the TTL
    now[0] = 18
    assert store.get(s.session_id, "a") is s
    now[0] = 29
    assert store.get(s.session_id, "a") is None and len(store) == 0
    s2 = store.create("a")
    store.update(s2)
    assert store.delete(s2.session_id, "a") and not store.delete(s2.session_id, "a")
    assert store.get(None, "a") is None


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "", "phone": "090-1234-5678", "preferred_time": "2026-11-22 10:00"}, "name"),
        ({"name": "a", "phone": "1234", "preferred_time": "2026-11-22 10:00"}, "phone"),
        ({"name": "a", "phone": "090-1234-56789", "preferred_time": "2026-11-22 10:00"}, "phone"),
        ({"name": "a", "phone": "090-1234-5678", "preferred_time": "あした"}, "preferred_time"),
        ({"name": "a", "phone": "090-1234-5678", "preferred_time": "2026-11-21 09:59"}, "preferred_time"),
    ],
)
def test_visit_validation_errors(data: dict[str, str], field: str) -> None:
    assert field in validate_booking("visit", data, NOW)


def test_valid_bookings() -> None:
    assert (
        validate_booking(
            "visit", {"name": "a", "phone": "03-1234-5678", "preferred_time": "2026/11/22 10:00"}, NOW
        )
        == {}
    )
    assert validate_booking("dispatch", {"name": "a", "phone": "09012345678", "address": "港区"}, NOW) == {}
    assert "address" in validate_booking("dispatch", {"name": "a", "phone": "09012345678"}, NOW)


@pytest.mark.parametrize(
    "text",
    ["2026-11-25 10:30", "2026/11/25 10:30", "2026年11月25日 10時30分", "２０２６年１１月２５日　１０：３０"],
)
def test_visit_time_accepts_japanese_formats(text: str) -> None:
    data = {"name": "山田", "phone": "090-1234-5678", "preferred_time": text}
    assert validate_booking("visit", data, NOW) == {}
    assert clean_booking("visit", data)["preferred_time"] == "2026-11-25 10:30"


def test_visit_time_messages_are_japanese() -> None:
    base = {"name": "山田", "phone": "090-1234-5678"}
    assert validate_booking("visit", {**base, "preferred_time": "2026-02-30 10:00"}, NOW) == {
        "preferred_time": "来店希望日時は「2026-11-25 10:00」または「2026年11月25日 10時」の形式で入力してください。"
    }
    assert validate_booking("visit", {**base, "preferred_time": "2026年11月21日 9時"}, NOW) == {
        "preferred_time": "来店希望日時は現在より後の日時を指定してください。"
    }
    assert validate_booking("dispatch", {"name": " ", "phone": "", "address": ""}, NOW) == {
        "name": "お名前を入力してください。",
        "phone": "電話番号を入力してください。",
        "address": "車両のある場所（住所・目印）を入力してください。",
    }
    assert validate_booking("visit", {**base, "phone": "0120-12"}, NOW)["phone"] == (
        "電話番号の形式が正しくありません（例: 090-1234-5678）。"
    )


def test_booking_repository_roundtrip(engine) -> None:  # type: ignore[no-untyped-def]
    repo = DiagnosisRepository(engine, clock=lambda: NOW_TS, owner_id=LOCAL_PERSON.id)
    booking_id = repo.save_booking(
        {
            "booking_type": "visit",
            "vehicle_id": "v",
            "name": "山田",
            "phone": "090",
            "preferred_time": "2026-11-25 10:00",
            "urgency_level": "high",
            "can_drive": True,
            "reasons": ["警告灯の点灯"],
        }
    )
    rows = repo.list_bookings()
    assert [r["id"] for r in rows] == [booking_id]
    assert (
        rows[0]["reasons"] == ["警告灯の点灯"]
        and rows[0]["created_at"] == NOW_TS
        and rows[0]["can_drive"] is True
    )
    assert repo.get_booking(booking_id)["preferred_time"] == "2026-11-25 10:00"  # type: ignore[index]


@pytest.mark.parametrize("name", ["diagnostic_response", "urgency", "spec_classification"])
def test_schemas_strict_mode_valid(name: str) -> None:
    schema = load_schema(name)
    assert is_strict_compatible(schema)
    # nothing to rewrite: every property is already required, so strict mode sends the schema as written
    assert openai_strict_schema(schema) == {k: v for k, v in schema.items() if k != "$schema"}
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(schema["properties"])
    text = json.dumps(schema)
    for banned in ("uniqueItems", "pattern", "minItems", "maxItems"):
        assert banned not in text


def test_demo_persona_registers_and_plays_the_flow() -> None:
    rag = FakeRag(
        [
            src("エンジン警告灯", "warning", 0.62, warning=True),
            src("水温警告灯（赤）", "danger", 0.34, warning=True),
        ]
    )
    deps = DiagnosisDeps(demo_client(), rag=rag, clock=lambda: NOW_TS)
    s = make_session(ChatStep.FREE_TEXT)
    r = process_step(s, ChatRequest("s1", message="エンジン警告灯が点灯した"), deps)
    assert [c.get("icon") for c in r.prompt.choices][:2] == [
        "icons/warning-lights/engine.svg",
        "icons/warning-lights/coolant.svg",
    ]
    r = process_step(s, ChatRequest("s1", action="choice", action_value="エンジン警告灯"), deps)
    assert s.last_confidence > 0.3 and r.prompt.action == "choice"
    r = process_step(s, ChatRequest("s1", action="choice", action_value="走行中"), deps)
    assert s.current_step == ChatStep.RESERVATION and "p.30「エンジン警告灯」" in r.prompt.message
