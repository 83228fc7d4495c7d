"""spec 04 §4 A (rewind) and D.2 (snapshots), D.5 summary, D.6 candidates, D.7 exact message stack."""

from __future__ import annotations

from dataclasses import fields

from core.contracts.prompts import fill, load_prompt
from core.flows.diagnosis.models import ChatRequest, ChatStep, SessionState
from core.flows.diagnosis.prompting import CANDIDATES_INSTRUCTION
from core.flows.diagnosis.snapshots import rewind, save_snapshot, snapshot_turns, turn_preview
from core.flows.diagnosis.state_machine import process_step
from tests.core.diagnosis_fixtures import FakeRag, diag, make_deps, make_session, src


def answer(session: SessionState, text: str, deps) -> None:  # type: ignore[no-untyped-def]
    process_step(session, ChatRequest("s1", message=text), deps)


def test_rewind_restores_every_field_but_snapshots_and_drops_later() -> None:
    replies = [diag(message=f"質問{i}？", confidence_to_answer=0.1 * i) for i in range(1, 5)]
    deps = make_deps([*replies[:2], "要約", *replies[2:]], rag=FakeRag())  # turn 3 summarizes
    s = make_session()
    for text in ("A", "B", "C", "D"):
        answer(s, text, deps)
    assert snapshot_turns(s) == [1, 2, 3, 4]
    expected = s.state_snapshots[1]["state"]
    r = process_step(s, ChatRequest("s1", rewind_to_turn=2), deps)
    assert r.rewound_to_turn == 2
    assert snapshot_turns(s) == [1, 2]
    # the snapshot does not carry the stored version: a rewind is saved as the next version, not an old one
    assert "store_version" not in expected
    for f in fields(SessionState):
        if f.name not in ("state_snapshots", "store_version"):
            assert getattr(s, f.name) == expected[f.name], f.name
    assert s.diagnostic_turn == 1 and s.collected_symptoms == ["A"] and r.prompt.message == "質問1？"
    # answering again replaces snapshot 2 and continues from there
    deps2 = make_deps([diag(message="別の質問？")])
    answer(s, "B2", deps2)
    assert snapshot_turns(s) == [1, 2] and s.collected_symptoms == ["A", "B2"] and s.diagnostic_turn == 2


def test_rewind_to_turn_one_returns_to_symptom_entry() -> None:
    deps = make_deps([diag()], rag=FakeRag())
    s = make_session(ChatStep.FREE_TEXT, conversation_history=[{"role": "assistant", "content": "症状は？"}])
    process_step(s, ChatRequest("s1", message="ドアがきしむ"), deps)
    process_step(s, ChatRequest("s1", rewind_to_turn=1), deps)
    assert s.current_step == ChatStep.FREE_TEXT and s.symptom_text == "" and s.diagnostic_turn == 0
    assert s.conversation_history == [{"role": "assistant", "content": "症状は？"}]


def test_rewind_works_from_reservation_and_unknown_turn_is_refused() -> None:
    deps = make_deps([diag(), diag(action="escalate", choices=None)])
    s = make_session()
    answer(s, "A", deps)
    answer(s, "B", deps)
    assert s.current_step == ChatStep.RESERVATION
    process_step(s, ChatRequest("s1", rewind_to_turn=2), deps)
    assert s.current_step == ChatStep.DIAGNOSING and s.diagnostic_turn == 1
    before = s.dump()
    r = process_step(s, ChatRequest("s1", rewind_to_turn=7), deps)
    assert r.rewound_to_turn is None and s.dump() == before


def test_snapshots_capped_at_max_turns() -> None:
    s = make_session(max_diagnostic_turns=3)
    for turn in range(1, 6):
        save_snapshot(s, turn, {"diagnostic_turn": turn - 1})
    assert snapshot_turns(s) == [3, 4, 5]
    assert not rewind(s, 1)


def test_turn_over_max_goes_to_urgency_check() -> None:
    deps = make_deps(
        [
            '{"level": "low", "can_drive": true, "visit_urgency": "when_convenient", "reasons": [], "recommendation": "様子を見てください。"}'
        ]
    )
    s = make_session(diagnostic_turn=8)
    process_step(s, ChatRequest("s1", message="まだ鳴る"), deps)
    assert s.current_step == ChatStep.DONE and deps.client.requests[0].json_schema.name == "urgency"  # type: ignore[attr-defined]


def test_summary_every_three_turns_and_candidates_from_turn_four() -> None:
    outputs = [
        diag(message="Q1？"),
        diag(message="Q2？"),
        "要約テキスト",
        diag(message="Q3？"),
        diag(message="Q4？"),
    ]
    deps = make_deps(outputs)
    s = make_session()
    for text in ("A", "B", "C", "D"):
        answer(s, text, deps)
    steps = [r.tags["step"] for r in deps.client.requests]  # type: ignore[attr-defined]
    assert steps == ["diagnosing", "diagnosing", "summary", "diagnosing", "diagnosing"]
    assert s.conversation_summary == "要約テキスト" and s.candidates_shown
    assert CANDIDATES_INSTRUCTION in deps.client.requests[-1].messages[1]["content"]  # type: ignore[attr-defined]
    assert CANDIDATES_INSTRUCTION not in deps.client.requests[3].messages[1]["content"]  # type: ignore[attr-defined]


def test_exact_diagnostic_message_stack() -> None:
    rag = FakeRag([src("エンジン警告灯", "warning", 0.62, warning=True, page=20)], answer="要約です")
    deps = make_deps([diag()], rag=rag)
    s = make_session(conversation_history=[{"role": "assistant", "content": "症状は？"}])
    answer(s, "オレンジのランプ", deps)
    request = deps.client.requests[0]  # type: ignore[attr-defined]
    excerpt = "- p.20「エンジン警告灯」(warning)【警告あり】 関連度 0.62\n  エンジン警告灯の説明です。"
    user = fill(
        load_prompt("diagnostic_prompt"),
        VEHICLE="ミナト自動車 ソレイユ（2022年式）",
        SYMPTOM="ドアの閉まりが悪い",
        COLLECTED_SYMPTOMS="- オレンジのランプ",
        SUMMARY="（まだありません）",
        RECENT_TURNS="アドバイザー: 症状は？\nお客様: オレンジのランプ",
        RAG_CONTEXT="要約: 要約です\n" + excerpt,
        ASKED_QUESTIONS="（なし）",
        DIAGNOSTIC_TURN="1",
        MAX_TURNS="8",
        LAST_CONFIDENCE="0.00",
        ADDITIONAL_INSTRUCTIONS="（なし）",
    )
    assert request.messages == [
        {"role": "system", "content": load_prompt("diagnosis_system_prompt")},
        {"role": "user", "content": user},
    ]
    assert request.json_schema.name == "diagnostic_response"
    assert request.tags == {"flow": "diagnosis", "step": "diagnosing"} and request.temperature == 0.3
    assert "{" + "VEHICLE}" not in user and rag.queries == ["ドアの閉まりが悪い\nオレンジのランプ"]


def test_turn_preview_names_the_question_and_its_answer() -> None:
    deps = make_deps([diag(message="いつ鳴りますか？"), diag(message="どこから鳴りますか？")], rag=FakeRag())
    s = make_session(ChatStep.FREE_TEXT, conversation_history=[{"role": "assistant", "content": "症状は？"}])
    s.last_prompt = {"type": "text", "message": "症状は？"}
    process_step(s, ChatRequest("s1", message="ドアがきしむ"), deps)
    answer(s, "走行中", deps)
    assert turn_preview(s, 1)[1] == "ドアがきしむ" and turn_preview(s, 1)[0].startswith("どのような症状")
    assert turn_preview(s, 2) == ("いつ鳴りますか？", "走行中")
    assert turn_preview(s, 3) == ("", "")
    assert turn_preview(s, 2, limit=4) == ("いつ鳴…", "走行中")


def test_visited_steps_follow_the_path_and_rewind() -> None:
    deps = make_deps([diag(), diag(action="escalate", choices=None)], rag=FakeRag())
    s = make_session(ChatStep.FREE_TEXT)
    s.visited_steps = ["vehicle_id", "photo_confirm", "free_text"]
    process_step(s, ChatRequest("s1", message="ドアがきしむ"), deps)
    answer(s, "走行中", deps)
    assert s.visited_steps == ["vehicle_id", "photo_confirm", "free_text", "diagnosing", "reservation"]
    process_step(s, ChatRequest("s1", rewind_to_turn=2), deps)
    assert s.visited_steps[-1] == "diagnosing" and "reservation" not in s.visited_steps
    process_step(s, ChatRequest("s1", rewind_to_turn=1), deps)
    assert s.visited_steps == ["vehicle_id", "photo_confirm", "free_text"]
