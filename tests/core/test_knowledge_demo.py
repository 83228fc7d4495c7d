"""The knowledge demo persona: believable, deterministic, always schema-valid, drafts within 6 user turns."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.documents.attachments import extract_text_from_document
from core.flows.knowledge import demo as kd
from core.flows.knowledge import interview as kf
from core.flows.knowledge.turn import TurnInput, run_turn
from core.flows.registry import demo_client
from core.llm.base import JSONSchemaSpec, LLMRequest
from core.store.knowledge.interviews import KnowledgeRepository
from tests.persons import ALICE

TURN, ENTRY = kf.turn_schema(), kf.entry_schema()


@pytest.fixture
def repo(engine):
    return KnowledgeRepository(engine, owner_id=ALICE.id)


def interview(repo, inputs, client=None):
    """Run the turns through run_turn, as the page does; returns call_llm's results."""
    client = client or demo_client()
    items, results, interview_id = [], [], None
    for text, files in inputs:
        outcome = run_turn(
            items, TurnInput(text, list(files)), interview_id=interview_id, client=client, repo=repo
        )
        out = outcome.result
        assert out["ok"], out
        assert items[-1]["content"] == kf.turn_json_text(out)
        interview_id = outcome.interview_id
        results.append(out)
    assert len(repo.interview_turns(interview_id)) == len(inputs)
    return results


def sample_text():
    return extract_text_from_document(kd.DEMO_SAMPLE, (kd.SAMPLE_DIR / kd.DEMO_SAMPLE).read_bytes()).text


def asked_count(message):
    return sum(q in message for q in kd.QUESTIONS.values())


def test_one_click_demo_uses_the_attachment_and_drafts_in_three_turns(repo):
    results = interview(repo, [(kd.DEMO_OPENING, [sample_text()]), *((t, []) for t in kd.DEMO_SCRIPT)])
    first = results[0]
    assert "第8条（秘密保持）" in first["assistant_message"] and "全12か条" in first["assistant_message"]
    assert first["state"]["phase"] == "organize_risks" and first["knowledge"] == []
    draft = results[2]
    assert (draft["state"]["phase"], draft["control"]["mode"]) == ("draft_knowledge", "finalize")
    entry = draft["knowledge"][0]
    assert entry["contract_type"] == "業務委託契約" and entry["target_clause"] == "第8条（秘密保持）"
    assert entry["clause_sample"].startswith("前項の義務は、本契約終了後5年間存続する。")
    assert all(entry.values())
    assert (
        results[3]["state"]["phase"] == "review_knowledge" and results[3]["knowledge"] == draft["knowledge"]
    )


def test_free_interview_asks_one_or_two_items_and_drafts_within_six_turns(repo):
    answers = [
        "相談があります",
        "売買契約の第12条（損害賠償）です",
        "相手方が損害賠償の上限を代金額に限定してきました",
        "高額な損害が出たときに回収できない",
        "上限を代金の2倍にすることで合意しました",
        "おまかせ",
    ]
    results = interview(repo, [(a, []) for a in answers])
    for out in results[:-1]:
        assert 1 <= asked_count(out["assistant_message"]) <= 2
    phases = [r["state"]["phase"] for r in results]
    assert "draft_knowledge" in phases and phases.index("draft_knowledge") <= 5
    entry = next(r for r in results if r["knowledge"])["knowledge"][0]
    assert entry["target_clause"] == "第12条（損害賠償）" and entry["contract_type"] == "売買契約"
    # a short title that names the case (not the first sentence cut with 「…」)
    assert entry["knowledge_title"] == "損害賠償条項：損害賠償の上限を代金額に限定する提示への対応"
    assert (
        entry["clause_sample"] == "（修正例）第12条　上限を代金の2倍にする。"
    )  # 「おまかせ」: a clause, not a to-do
    missing = [len(r["state"]["missing_info"]) for r in results]
    assert missing == sorted(missing, reverse=True)  # never asks for more than before


def test_corrections_after_the_draft_are_reflected(repo):
    answers = [
        "業務委託契約の第5条（再委託）です",
        "相手方が再委託の事前承諾を削除してきました",
        "品質と情報管理を管理できない",
        "事前承諾を残し、通知で足りる範囲を限定した",
        "おまかせ",
        "再委託先の監督責任も書いてください",
    ]
    results = interview(repo, [(a, []) for a in answers])
    last = results[-1]
    assert last["state"]["phase"] == "review_knowledge" and last["control"]["mode"] == "clarify"
    assert "再委託先の監督責任も書いてください" in last["knowledge"][0]["review_points"]


def test_an_unsure_answer_is_asked_again_then_left_unconfirmed(repo):
    opening = [
        "業務委託契約の第5条（再委託）です",
        "相手方が再委託の事前承諾を削除してきました",
    ]
    results = interview(repo, [(a, []) for a in [*opening, "よくわからない"]])
    again = results[-1]
    assert again["control"]["mode"] == "clarify" and "当方にとってのリスク" in again["state"]["missing_info"]
    assert again["assistant_message"].startswith("分かる範囲で構いません。")
    assert kd.QUESTIONS["risk"] in again["assistant_message"]
    results = interview(
        repo,
        [(a, []) for a in [*opening, "よくわからない", "分かりません", "通知で足りる形にした", "おまかせ"]],
    )
    entry = next(r for r in results if r["knowledge"])["knowledge"][0]
    assert "【リスク】（未確認）" in entry["review_points"] and entry["action_plan"] == "通知で足りる形にした"


def test_repair_requests_get_the_same_valid_turn():
    messages = kf.build_messages("売買契約です", [], "S", [])
    request = LLMRequest(
        messages, JSONSchemaSpec("T", TURN), tags={"flow": "knowledge", "step": "interview_turn"}
    )
    first = kd.knowledge_persona(request)
    repair = [
        *messages,
        {"role": "assistant", "content": "壊れた"},
        {"role": "user", "content": kf.build_repair_instruction("壊れた", "err", "parse_error")},
    ]
    assert kd.knowledge_persona(LLMRequest(repair, request.json_schema, tags=request.tags)) == first
    assert kd.knowledge_persona(request) == first  # deterministic


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=1, max_size=8))
def test_persona_output_is_always_schema_valid(user_texts):
    payloads = [kf.build_user_payload(t, []) or "添付テキスト:\n" for t in user_texts]
    raw = json.dumps(kd.reply_for(payloads), ensure_ascii=False)
    assert kf.parse_and_validate_turn(raw, TURN, ENTRY)["ok"] is True
