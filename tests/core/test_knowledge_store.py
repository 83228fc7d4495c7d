"""core.store.knowledge and core.flows.knowledge_analytics (spec 01 §4 step 4, §7.2)."""

from __future__ import annotations

import json

import pytest

from core.flows import knowledge as kf
from core.flows.knowledge_analytics import interview_progress, stop_phase_counts
from core.store import knowledge as store
from core.store import knowledge_base as kbase
from core.store import open_store

ENTRY = {k: f"{k}-値" for k in kf.KNOWLEDGE_FIELDS}


@pytest.fixture
def engine(tmp_path):
    return open_store(tmp_path)


def ok_result(phase="collect_case", mode="interview", knowledge=None):
    raw = json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": mode},
            "state": {"phase": phase, "missing_info": ["契約書の種類"]},
            "assistant_message": "質問です",
            "knowledge_json": knowledge,
        },
        ensure_ascii=False,
    )
    result = kf.parse_and_validate_turn(raw, kf.turn_schema(), kf.entry_schema())
    return {**result, "attempts": [{"kind": "initial"}]}


def test_turn_stores_full_json_and_metadata(engine):
    interview = store.create_interview(engine, provider="demo", model="m", now=100.0)
    store.record_turn(
        engine,
        interview,
        turn_no=1,
        user_text="相談です",
        attachments=[
            {
                "name": "a.pdf",
                "kind": "pdf",
                "pages": 2,
                "paragraphs": 9,
                "chars": 300,
                "text": "本文は保存しない",
            }
        ],
        result=ok_result("draft_knowledge", "finalize", ENTRY),
        provider="demo",
        model="m",
        now=101.0,
    )
    [row] = store.interview_turns(engine, interview)
    assert row["turn"] == {
        "control": {"schema_version": "1.0", "mode": "finalize"},
        "state": {"phase": "draft_knowledge", "missing_info": ["契約書の種類"]},
        "assistant_message": "質問です",
        "knowledge_json": ENTRY,
    }
    assert (row["turn_no"], row["created_at"], row["provider"], row["model"]) == (1, 101.0, "demo", "m")
    assert (row["phase"], row["mode"], row["ok"]) == ("draft_knowledge", "finalize", True)
    assert row["attachments"] == [{"name": "a.pdf", "kind": "pdf", "pages": 2, "paragraphs": 9, "chars": 300}]
    [listed] = store.list_interviews(engine)
    assert listed["title"] == ENTRY["knowledge_title"] and listed["turns"] == 1
    assert listed["last_phase"] == "draft_knowledge"


def test_failed_turn_stores_raw_and_error_type(engine):
    interview = store.create_interview(engine)
    result = {
        "ok": False,
        "raw": "壊れた",
        "error": "Expecting value",
        "error_type": "parse_error",
        "attempts": [{}, {}, {}],
    }
    store.record_turn(engine, interview, turn_no=1, user_text="最初の相談\n2行目", result=result)
    [row] = store.interview_turns(engine, interview)
    assert (row["ok"], row["raw"], row["error_type"], row["turn"], row["attempts"]) == (
        False,
        "壊れた",
        "parse_error",
        None,
        3,
    )
    assert store.list_interviews(engine)[0]["title"] == "最初の相談"


def test_entries_are_versioned(engine):
    entry_id = kbase.save_entry(engine, ENTRY, by="山田", source_interview_id="abc", now=10.0)
    assert kbase.update_entry(engine, entry_id, ENTRY, by="佐藤", now=11.0) == 1  # unchanged: no new version
    assert (
        kbase.update_entry(
            engine, entry_id, {**ENTRY, "action_plan": "5年"}, by="佐藤", note="修正", now=12.0
        )
        == 2
    )
    current = kbase.get_entry(engine, entry_id)
    assert (current["version"], current["action_plan"], current["created_by"], current["updated_by"]) == (
        2,
        "5年",
        "山田",
        "佐藤",
    )
    versions = kbase.entry_versions(engine, entry_id)
    assert [(v["version"], v["edited_by"], v["action_plan"]) for v in versions] == [
        (1, "山田", ENTRY["action_plan"]),
        (2, "佐藤", "5年"),
    ]
    with pytest.raises(KeyError):
        kbase.update_entry(engine, 999, ENTRY)


def test_entry_for_interview_is_the_latest_entry_saved_from_it(engine):
    assert kbase.entry_for_interview(engine, "abc") is None
    kbase.save_entry(engine, ENTRY, source_interview_id="other", now=1.0)
    first = kbase.save_entry(engine, ENTRY, source_interview_id="abc", now=2.0)
    assert kbase.entry_for_interview(engine, "abc")["id"] == first
    latest = kbase.save_entry(
        engine, {**ENTRY, "knowledge_title": "二件目"}, source_interview_id="abc", now=3.0
    )
    assert kbase.entry_for_interview(engine, "abc")["id"] == latest


def test_search_and_contract_type_filter(engine):
    kbase.save_entry(
        engine, {**ENTRY, "contract_type": "売買契約", "review_points": "損害賠償の上限"}, now=1.0
    )
    kbase.save_entry(engine, {**ENTRY, "contract_type": "業務委託契約"}, now=2.0)
    assert kbase.contract_types(engine) == ["売買契約", "業務委託契約"]
    assert [e["contract_type"] for e in kbase.list_entries(engine)] == ["業務委託契約", "売買契約"]
    assert [e["contract_type"] for e in kbase.list_entries(engine, search="損害賠償")] == ["売買契約"]
    assert [e["contract_type"] for e in kbase.list_entries(engine, contract_types=["業務委託契約"])] == [
        "業務委託契約"
    ]
    assert kbase.list_entries(engine, search="存在しない") == []


def test_analytics_turns_to_draft_and_finalize_and_stop_phase(engine):
    a = store.create_interview(engine)
    for n, (phase, mode) in enumerate(
        [("collect_case", "interview"), ("organize_risks", "interview"), ("draft_knowledge", "finalize")],
        start=1,
    ):
        store.record_turn(
            engine,
            a,
            turn_no=n,
            user_text="x",
            result=ok_result(phase, mode, ENTRY if phase == "draft_knowledge" else None),
        )
    b = store.create_interview(engine)
    store.record_turn(engine, b, turn_no=1, user_text="y", result=ok_result())
    store.record_turn(
        engine, b, turn_no=2, user_text="z", result={"ok": False, "raw": "", "error_type": "parse_error"}
    )
    store.record_turn(engine, b, turn_no=2, user_text="z", result=ok_result("organize_risks"))  # a retry
    c = store.create_interview(engine)
    store.record_turn(
        engine, c, turn_no=1, user_text="w", result={"ok": False, "raw": "", "error_type": "parse_error"}
    )
    progress = {p["interview_id"]: p for p in interview_progress(store.turn_phases(engine))}
    assert (progress[a]["turns"], progress[a]["to_draft"], progress[a]["to_finalize"]) == (3, 3, 3)
    assert (progress[b]["turns"], progress[b]["to_draft"], progress[b]["last_phase"]) == (
        2,
        None,
        "organize_risks",
    )
    assert progress[c]["last_phase"] is None
    assert stop_phase_counts(progress.values()) == {
        "collect_case": 0,
        "organize_risks": 1,
        "draft_knowledge": 1,
        "review_knowledge": 0,
        "未応答": 1,
    }
