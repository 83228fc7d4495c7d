"""Nothing small lost (issue 12 item 6): clamped numbers, refusal_allowed carried over, loops kept past their
due time, the knowledge draft kept and edits sent back, the demo interviewer's fields and attachments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.contracts.schemas import load_schema
from core.documents.attachments import extract_text_from_document
from core.flows.knowledge import demo as kd
from core.flows.knowledge import interview as kf
from core.flows.knowledge.turn import TurnInput, run_turn
from core.flows.memory.browse import Filters, units_frame
from core.flows.memory.constants import DAY
from core.flows.memory.extraction import call_extractors
from core.flows.memory.loops import compute_loop_expires_at
from core.flows.memory.mood import compute_mood
from core.guard.clamps import clamp_numbers
from core.guard.json_guard import guarded_json
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.store import open_store
from core.store.knowledge.interviews import KnowledgeRepository
from core.store.memory.repository import MemoryRepository

NOW = 1_795_000_000


def test_clamp_numbers_brings_values_into_range_with_notes() -> None:
    schema = load_schema("memory_persona_affect")
    value = {"persona_affect_intensity": 1.4, "salience": -0.2, "confidence": 0.5}
    clamped, notes = clamp_numbers(value, schema)
    assert clamped == {"persona_affect_intensity": 1.0, "salience": 0.0, "confidence": 0.5}
    assert value["persona_affect_intensity"] == 1.4  # the input is not changed
    assert notes == [
        "persona_affect_intensity: 1.4 は範囲外のため 1.0 に丸めました",
        "salience: -0.2 は範囲外のため 0.0 に丸めました",
    ]


def test_an_out_of_range_extraction_number_is_clamped_not_repaired() -> None:
    extraction = {
        "entities": {
            "entities": [
                {"type_label": "PERSON", "roles": [], "name": "田中", "aliases": [], "confidence": 1.3}
            ],
            "relations": [],
        },
        "facts": {"facts": []},
        "loops": {"loops": []},
    }
    client = ReplayClient([json.dumps(extraction, ensure_ascii=False)])
    results = call_extractors(client, "田中さんと話した", "いいですね", NOW, NOW)
    assert all(r.ok for r in results.values()) and len(client.requests) == 1  # no repair call spent
    assert results["entities"].value["entities"][0]["confidence"] == 1.0
    notes = [n for r in results.values() for a in r.attempts for n in a.notes]
    assert any("1.3 は範囲外のため 1.0 に丸めました" in n for n in notes)


def test_clamping_is_off_unless_asked() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number", "maximum": 1}}, "required": ["x"]}
    client = ReplayClient(['{"x": 2}', '{"x": 1}'])
    result = guarded_json(client, [{"role": "user", "content": "q"}], schema, name="x")
    assert result.ok and len(client.requests) == 2  # repaired, as before


def test_refusal_allowed_of_the_last_trailer_reaches_the_next_policy() -> None:
    calm = [{"label": "joy", "intensity": 0.3, "salience": 0.3, "confidence": 0.5, "occurred_at": NOW}]
    mood = compute_mood(calm, NOW, {"cooperation": 0.6, "refusal_bias": 0.4, "refusal_allowed": True})
    assert mood.response_policy["refusal_allowed"] is True and "断ってもよい" in mood.describe()
    assert compute_mood(calm, NOW, {"refusal_allowed": False}).response_policy["refusal_allowed"] is False


def test_loops_live_three_days_past_due_and_expired_ones_leave_the_browser(tmp_path: Path) -> None:
    assert compute_loop_expires_at(NOW + 2 * DAY, NOW) == NOW + 5 * DAY  # 「明後日のプレゼン」
    assert compute_loop_expires_at(NOW + 29 * DAY, NOW) == NOW + 30 * DAY  # capped
    clock = [NOW]
    repo = MemoryRepository(open_store(tmp_path), lambda: clock[0], owner_id=LOCAL_PERSON.id)
    with repo.begin() as conn:
        ep = repo.save_episode(
            "明後日プレゼン", "頑張って", {}, source="t", occurred_at=NOW, now=NOW, conn=conn
        )
    repo.upsert_loop("明後日のプレゼン", 0.8, NOW + 2 * DAY, NOW + 5 * DAY, ep, NOW, NOW)
    clock[0] = NOW + 3 * DAY  # the day after the presentation: still there to ask about
    assert len(units_frame(repo, "LOOP", Filters())[0]) == 1
    clock[0] = NOW + 5 * DAY + 1  # expired: gone from the browser at once, before any turn purges it
    frame, total = units_frame(repo, "LOOP", Filters())
    assert len(frame) == 0 and total == 0


def turn(knowledge: dict[str, str] | None, message: str = "確認です。") -> str:
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": "clarify"},
            "state": {"phase": "review_knowledge", "missing_info": []},
            "assistant_message": message,
            "knowledge_json": knowledge,
        },
        ensure_ascii=False,
    )


def test_a_turn_without_a_draft_keeps_it_and_edits_go_back_as_the_current_draft(tmp_path: Path) -> None:
    repo = KnowledgeRepository(open_store(tmp_path), owner_id=LOCAL_PERSON.id)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    client = ReplayClient([turn(entry, "草案です。"), turn(None)])
    items: list = []
    first = run_turn(items, TurnInput("相談です"), interview_id=None, client=client, repo=repo)
    assert first.new_draft == [entry]
    edited = {**entry, "knowledge_title": "担当者が直した題名"}
    second = run_turn(
        items,
        TurnInput("題名を直しました", draft=edited),
        interview_id=first.interview_id,
        client=client,
        repo=repo,
    )
    assert second.ok and second.knowledge == [] and second.new_draft is None  # the card keeps its draft
    sent = client.requests[1].messages[-1]["content"]
    assert kf.DRAFT_HEADER in sent and "担当者が直した題名" in sent
    assert items[-2]["meta"]["draft"] == edited  # kept on the item, so 再試行 sends it again


def sample_text() -> str:
    return extract_text_from_document(kd.DEMO_SAMPLE, (kd.SAMPLE_DIR / kd.DEMO_SAMPLE).read_bytes()).text


def payload(text: str, files: tuple[str, ...] = (), draft: dict[str, str] | None = None) -> str:
    return kf.build_user_payload(text, list(files), draft)


def test_demo_files_the_contract_type_without_taking_it_for_the_clause() -> None:
    reply = kd.reply_for([payload("秘密保持契約です")])
    assert "秘密保持契約" not in str(reply["state"]["missing_info"])
    assert "問題になった条項（条番号・見出し）" in reply["state"]["missing_info"]  # still asked
    assert "第8条" not in reply["assistant_message"] or "条番号" in reply["assistant_message"]


def test_demo_reads_an_attachment_sent_later_and_does_not_ask_for_it_again() -> None:
    first = kd.reply_for([payload("相談があります")])
    assert kd.QUESTIONS["contract_type"] in first["assistant_message"]
    later = kd.reply_for([payload("相談があります"), payload("", (sample_text(),))])
    assert kd.QUESTIONS["contract_type"] not in later["assistant_message"]
    assert "契約書の種類" not in later["state"]["missing_info"]


def test_demo_takes_the_edited_card_as_the_current_draft() -> None:
    texts = [payload(kd.DEMO_OPENING, (sample_text(),)), *(payload(t) for t in kd.DEMO_SCRIPT[:2])]
    draft = kd.reply_for(texts)["knowledge_json"]
    assert isinstance(draft, dict)
    edited = {**draft, "knowledge_title": "秘密保持の存続期間（担当者が修正）"}
    again = kd.reply_for([*texts, payload("題名を直しました", draft=edited)])["knowledge_json"]
    assert isinstance(again, dict) and again["knowledge_title"] == "秘密保持の存続期間（担当者が修正）"
    assert kd.split_payload(payload("本文", draft=edited)) == ("本文", "")


@pytest.mark.parametrize("answer", ["業務委託契約の第8条（秘密保持）です"])
def test_demo_fills_both_asked_fields_from_one_answer(answer: str) -> None:
    reply = kd.reply_for([payload("相談です"), payload(answer)])
    missing = reply["state"]["missing_info"]
    assert "契約書の種類" not in missing and "問題になった条項（条番号・見出し）" not in missing
