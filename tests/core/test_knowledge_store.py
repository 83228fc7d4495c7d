"""KnowledgeRepository, KnowledgeBaseRepository and core.flows.knowledge.analytics (spec 01 §4 step 4, §7.2)."""

from __future__ import annotations

import json

import pytest

from core.flows.knowledge import interview as kf
from core.flows.knowledge.analytics import interview_overview, interview_progress, stop_phase_counts
from core.flows.knowledge.turn import record_fields
from core.people import Person
from core.store.knowledge.entries import ENTRY_FIELDS, KnowledgeBaseRepository
from core.store.knowledge.interviews import KnowledgeRepository
from tests.persons import ALICE

YAMADA, SATO = Person("yamada", "山田"), Person("sato", "佐藤")

ENTRY = {k: f"{k}-値" for k in kf.KNOWLEDGE_FIELDS}
FAILED = {"raw": "", "error_type": "parse_error"}


class Clock:
    """A settable clock: each call returns `now`, then advances it by `step`."""

    def __init__(self, now: int = 100, step: int = 0):
        self.now, self.step = now, step

    def __call__(self) -> int:
        value = self.now
        self.now += self.step
        return value


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def store(engine, clock):
    return KnowledgeRepository(engine, clock, owner_id=ALICE.id)


@pytest.fixture
def kbase(engine, clock):
    return KnowledgeBaseRepository(engine, clock)


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
    return record_fields({**result, "attempts": [{"kind": "initial"}]})


def test_entry_fields_of_the_store_are_the_flows_knowledge_fields():
    assert ENTRY_FIELDS == kf.KNOWLEDGE_FIELDS


def test_turn_stores_full_json_and_metadata(store, clock):
    clock.now = 100
    interview = store.create_interview(provider="demo", model="m")
    clock.now = 101
    store.record_turn(
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
        **ok_result("draft_knowledge", "finalize", ENTRY),
        provider="demo",
        model="m",
    )
    [row] = store.interview_turns(interview)
    assert row["turn"] == {
        "control": {"schema_version": "1.0", "mode": "finalize"},
        "state": {"phase": "draft_knowledge", "missing_info": ["契約書の種類"]},
        "assistant_message": "質問です",
        "knowledge_json": ENTRY,
    }
    assert (row["turn_no"], row["created_at"], row["provider"], row["model"]) == (1, 101, "demo", "m")
    assert isinstance(row["created_at"], int)
    assert (row["phase"], row["mode"], row["ok"]) == ("draft_knowledge", "finalize", True)
    assert row["attachments"] == [{"name": "a.pdf", "kind": "pdf", "pages": 2, "paragraphs": 9, "chars": 300}]
    [listed] = store.list_interviews()
    assert (listed["created_at"], listed["updated_at"]) == (100, 101)
    assert listed["title"] == ENTRY["knowledge_title"] and listed["turns"] == 1
    assert listed["last_phase"] == "draft_knowledge"


def test_failed_turn_stores_raw_and_error_type(store):
    interview = store.create_interview()
    result = {
        "ok": False,
        "raw": "壊れた",
        "error": "Expecting value",
        "error_type": "parse_error",
        "attempts": [{}, {}, {}],
    }
    store.record_turn(interview, turn_no=1, user_text="最初の相談\n2行目", **record_fields(result))
    [row] = store.interview_turns(interview)
    assert (row["ok"], row["raw"], row["error_type"], row["turn"], row["attempts"]) == (
        False,
        "壊れた",
        "parse_error",
        None,
        3,
    )
    assert store.list_interviews()[0]["title"] == "最初の相談"


def test_entries_are_versioned(kbase, clock):
    clock.now = 10
    entry_id = kbase.save_entry(ENTRY, by=YAMADA, source_interview_id="abc")
    clock.now = 11
    assert kbase.update_entry(entry_id, ENTRY, by=SATO) == 1  # unchanged: no new version
    clock.now = 12
    assert kbase.update_entry(entry_id, {**ENTRY, "action_plan": "5年"}, by=SATO, note="修正") == 2
    current = kbase.get_entry(entry_id)
    assert (current["version"], current["action_plan"], current["created_by"], current["updated_by"]) == (
        2,
        "5年",
        "山田",
        "佐藤",
    )
    versions = kbase.entry_versions(entry_id)
    assert [(v["version"], v["edited_by"], v["action_plan"], v["edited_at"]) for v in versions] == [
        (1, "山田", ENTRY["action_plan"], 10),
        (2, "佐藤", "5年", 12),
    ]
    assert (current["created_at"], current["updated_at"]) == (10, 12)
    with pytest.raises(KeyError):
        kbase.update_entry(999, ENTRY, by=SATO)


def test_entry_for_interview_is_the_latest_entry_saved_from_it(kbase, clock):
    clock.step = 1
    assert kbase.entry_for_interview("abc") is None
    kbase.save_entry(ENTRY, source_interview_id="other", by=YAMADA)
    first = kbase.save_entry(ENTRY, source_interview_id="abc", by=YAMADA)
    assert kbase.entry_for_interview("abc")["id"] == first
    latest = kbase.save_entry({**ENTRY, "knowledge_title": "二件目"}, source_interview_id="abc", by=YAMADA)
    assert kbase.entry_for_interview("abc")["id"] == latest


def test_search_and_contract_type_filter(kbase, clock):
    clock.step = 1
    kbase.save_entry({**ENTRY, "contract_type": "売買契約", "review_points": "損害賠償の上限"}, by=YAMADA)
    kbase.save_entry({**ENTRY, "contract_type": "業務委託契約"}, by=YAMADA)
    assert kbase.contract_types() == ["売買契約", "業務委託契約"]
    assert [e["contract_type"] for e in kbase.list_entries()] == ["業務委託契約", "売買契約"]
    assert [e["contract_type"] for e in kbase.list_entries(search="損害賠償")] == ["売買契約"]
    assert [e["contract_type"] for e in kbase.list_entries(contract_types=["業務委託契約"])] == [
        "業務委託契約"
    ]
    assert kbase.list_entries(search="存在しない") == []


def test_newest_first_orderings_break_ties_by_id(store, kbase):
    """One clock second for everything: the newest row still comes first."""
    entries = [kbase.save_entry({**ENTRY, "knowledge_title": f"{n}件目"}, by=YAMADA) for n in range(3)]
    assert [e["id"] for e in kbase.list_entries()] == entries[::-1]
    interviews = [store.create_interview(title=f"{n}件目") for n in range(3)]
    listed = [i["id"] for i in store.list_interviews()]
    assert listed == sorted(interviews, reverse=True)  # same second: a stable order, by id


def test_analytics_turns_to_draft_and_finalize_and_stop_phase(store):
    a = store.create_interview()
    for n, (phase, mode) in enumerate(
        [("collect_case", "interview"), ("organize_risks", "interview"), ("draft_knowledge", "finalize")],
        start=1,
    ):
        store.record_turn(
            a,
            turn_no=n,
            user_text="x",
            **ok_result(phase, mode, ENTRY if phase == "draft_knowledge" else None),
        )
    b = store.create_interview()
    store.record_turn(b, turn_no=1, user_text="y", **ok_result())
    store.record_turn(b, turn_no=2, user_text="z", **FAILED)
    store.record_turn(b, turn_no=2, user_text="z", **ok_result("organize_risks"))  # a retry
    c = store.create_interview()
    store.record_turn(c, turn_no=1, user_text="w", **FAILED)
    progress = {p.interview_id: p for p in interview_progress(store.turn_phases())}
    assert (progress[a].turns, progress[a].to_draft, progress[a].to_finalize) == (3, 3, 3)
    assert (progress[b].turns, progress[b].to_draft, progress[b].last_phase) == (
        2,
        None,
        "organize_risks",
    )
    assert progress[c].last_phase is None
    assert stop_phase_counts(progress.values()) == {
        "collect_case": 0,
        "organize_risks": 1,
        "draft_knowledge": 1,
        "review_knowledge": 0,
        "未応答": 1,
    }
    overview = interview_overview(store)
    assert {i.id for i in overview.interviews} == {a, b, c}
    assert overview.stop_counts == stop_phase_counts(progress.values())
