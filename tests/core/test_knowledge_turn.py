"""The knowledge turn owner (core.flows.knowledge.turn): the very functions the page calls, with a Replay
client and a real SQLite store (spec 00 セッション状態とUI更新, spec 01 §7.2)."""

from __future__ import annotations

import json

import pytest
from sqlalchemy.exc import OperationalError

from core.contracts.prompts import load_prompt
from core.debuglog.events import CaptureSink
from core.flows.chat_item import meta
from core.flows.knowledge import base as kb
from core.flows.knowledge import interview as kf
from core.flows.knowledge import interviews as ki
from core.flows.knowledge import turn as kt
from core.flows.knowledge.demo import DEMO_OPENING, DEMO_SCRIPT
from core.flows.knowledge.stores import KnowledgeStoreError, knowledge_stores
from core.llm.replay import ReplayClient
from tests.persons import ALICE, BOB

ENTRY = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}


def turn(message="契約の種類を教えてください。", knowledge=None, phase="collect_case", mode="interview"):
    return {
        "control": {"schema_version": "1.0", "mode": mode},
        "state": {"phase": phase, "missing_info": ["契約書の種類"]},
        "assistant_message": message,
        "knowledge_json": knowledge,
    }


def raw(*args, **kwargs) -> str:
    return json.dumps(turn(*args, **kwargs), ensure_ascii=False)


@pytest.fixture
def stores(engine):
    return knowledge_stores(engine, ALICE, clock=lambda: 1_700_000_000)


def run(items, stores, client, text, files=(), interview_id=None, **kw):
    return kt.run_turn(
        items,
        kt.TurnInput(
            text, list(files), [{"name": "a.txt", "kind": "txt", "paragraphs": 1, "chars": 3}] * len(files)
        ),
        interview_id=interview_id,
        client=client,
        repo=stores.interviews,
        **kw,
    )


def test_two_turns_stack_items_and_store(stores):
    first, second = raw(), raw("草案です。", ENTRY, "draft_knowledge", "finalize")
    client = ReplayClient([first, second])
    items: list = []
    added: list = []
    sink = CaptureSink()
    one = run(
        items,
        stores,
        client,
        "秘密保持期間を3年に限定されました",
        ["第8条（秘密保持）"],
        on_added=added.append,
    )
    assert added == [items[0]] and one.ok and one.knowledge == []
    two = run(items, stores, client, "業務委託契約です", interview_id=one.interview_id, sink=sink)
    assert two.ok and two.interview_id == one.interview_id and two.notices == []
    assert two.knowledge == [ENTRY]
    # the exact stack of turn 2 (spec 00): system, few-shot, turn 1's rally, the new payload
    payload_1 = "ユーザー指示:\n秘密保持期間を3年に限定されました\n\n添付テキスト:\n第8条（秘密保持）"
    assert client.requests[1].messages == [
        {"role": "system", "content": load_prompt(kf.SYSTEM_PROMPT_NAME)},
        {"role": "assistant", "content": kf.FEW_SHOT_TURN},
        {"role": "user", "content": payload_1},
        {"role": "assistant", "content": json.dumps(turn(), ensure_ascii=False)},
        {"role": "user", "content": "ユーザー指示:\n業務委託契約です"},
    ]
    assert [c["messages"] for c in sink.calls()] == [client.requests[1].messages]
    # the ChatItems
    assert items == [
        {
            "role": "user",
            "content": payload_1,
            "status": "done",
            "turn": 1,
            "meta": {
                "text": "秘密保持期間を3年に限定されました",
                "attachments": [{"name": "a.txt", "kind": "txt", "paragraphs": 1, "chars": 3}],
                "attachment_errors": [],
                "file_texts": ["第8条（秘密保持）"],
                "turn_no": 1,
            },
        },
        {
            "role": "assistant",
            "content": json.dumps(turn(), ensure_ascii=False),
            "status": "done",
            "turn": 1,
            "raw": first,
            "meta": {"turn_json": turn(), "assistant_message": "契約の種類を教えてください。"},
        },
        {
            "role": "user",
            "content": "ユーザー指示:\n業務委託契約です",
            "status": "done",
            "turn": 2,
            "meta": {
                "text": "業務委託契約です",
                "attachments": [],
                "attachment_errors": [],
                "file_texts": [],
                "turn_no": 2,
            },
        },
        {
            "role": "assistant",
            "content": second,
            "status": "done",
            "turn": 2,
            "raw": second,
            "meta": {
                "turn_json": turn("草案です。", ENTRY, "draft_knowledge", "finalize"),
                "assistant_message": "草案です。",
            },
        },
    ]
    # the store: both turns, full JSON, attachment names only; the interview is named after the draft
    rows = stores.interviews.interview_turns(one.interview_id)
    assert [(r["turn_no"], r["ok"], r["phase"], r["user_text"]) for r in rows] == [
        (1, True, "collect_case", "秘密保持期間を3年に限定されました"),
        (2, True, "draft_knowledge", "業務委託契約です"),
    ]
    assert rows[1]["turn"] == turn("草案です。", ENTRY, "draft_knowledge", "finalize")
    assert rows[0]["attachments"] == [
        {"name": "a.txt", "kind": "txt", "pages": None, "paragraphs": 1, "chars": 3}
    ]
    assert all("第8条" not in r["user_text"] + r["attachments_json"] for r in rows)  # text never stored
    [listed] = stores.interviews.list_interviews()
    assert listed["title"] == ENTRY["knowledge_title"] and listed["created_at"] == 1_700_000_000


def test_failed_turn_then_retry(stores):
    client = ReplayClient(["壊れた", "まだ壊れた", "最後も壊れた", raw()])
    items: list = []
    failed = run(items, stores, client, "相談です")
    assert not failed.ok and failed.knowledge is None
    assert [(i["role"], i["status"]) for i in items] == [("user", "error"), ("assistant", "error")]
    error = items[1]
    assert (error["error_type"], error["raw"], error["turn"]) == ("parse_error", "最後も壊れた", 1)
    assert error["content"] == error["message"] == "LLMの出力をJSONとして読み取れませんでした。"
    assert meta(error)["error"]
    retried = kt.retry_turn(items, interview_id=failed.interview_id, client=client, repo=stores.interviews)
    assert retried is not None and retried.ok
    assert [(i["role"], i["status"], i["turn"]) for i in items] == [
        ("user", "done", 1),
        ("assistant", "done", 1),
    ]
    assert client.requests[3].messages[2:] == [{"role": "user", "content": "ユーザー指示:\n相談です"}]
    rows = stores.interviews.interview_turns(failed.interview_id)
    assert [(r["turn_no"], r["ok"], r["error_type"], r["attempts"]) for r in rows] == [
        (1, False, "parse_error", 3),
        (1, True, None, 1),
    ]
    assert (
        kt.retry_turn(items, interview_id=failed.interview_id, client=client, repo=stores.interviews) is None
    )


def test_a_failed_rally_stays_out_of_the_next_stack(stores):
    client = ReplayClient(["x", "y", "z", raw()])
    items: list = []
    failed = run(items, stores, client, "一つ目")
    run(items, stores, client, "二つ目", interview_id=failed.interview_id)
    assert client.requests[3].messages[2:] == [{"role": "user", "content": "ユーザー指示:\n二つ目"}]
    assert [i["turn"] for i in items] == [1, 1, 2, 2]


def test_unexpected_exception_is_an_error_item_with_secrets_redacted(stores):
    class Broken:
        provider, model = "broken", "m"

        def complete(self, request):
            raise RuntimeError("boom sk-test-SECRET-0000000000")

    items: list = []
    out = run(items, stores, Broken(), "相談です", secrets=["sk-test-SECRET-0000000000"])
    error = items[-1]
    assert not out.ok and error["error_type"] == "unexpected_error"
    assert error["message"] == "予期しないエラーが発生しました。"
    assert "boom" in meta(error)["error"] and "SECRET" not in meta(error)["error"]
    assert stores.interviews.interview_turns(out.interview_id)[0]["error_type"] == "unexpected_error"


def test_store_failures_keep_the_conversation(stores, monkeypatch):
    def fail(*args, **kwargs):
        raise OperationalError("INSERT", {}, Exception("database is locked"))

    monkeypatch.setattr(stores.interviews, "create_interview", fail)
    items: list = []
    out = run(items, stores, ReplayClient([raw()]), "相談です")
    assert out.ok and out.interview_id is None and out.notices == [kt.NOTICE_NOT_STARTED]
    assert [i["status"] for i in items] == ["done", "done"]
    monkeypatch.setattr(stores.interviews, "record_turn", fail)
    out = run(items, stores, ReplayClient([raw()]), "続きです", interview_id="missing")
    assert out.ok and out.notices == [kt.NOTICE_NOT_RECORDED] and len(items) == 4


def test_resume_rebuilds_items_and_a_retry_sends_what_the_history_shows(stores):
    interview = stores.interviews.create_interview(title="相談")
    attachments = [{"name": "contract.docx", "kind": "docx", "pages": None, "paragraphs": 3, "chars": 90}]
    repo = stores.interviews
    repo.record_turn(interview, turn_no=1, user_text="最初", attachments=attachments, turn=turn(), raw=raw())
    repo.record_turn(interview, turn_no=2, user_text="次", raw="壊れた", error_type="parse_error", error="E")
    repo.record_turn(interview, turn_no=2, user_text="次", turn=turn("草案", ENTRY, "draft_knowledge"))
    repo.record_turn(
        interview, turn_no=3, user_text="最後", raw="壊れた", error_type="parse_error", error="E"
    )
    entry_id, version = kb.save_draft(
        stores.base, ENTRY, by=ALICE, interview_id=interview, saved_entry_id=None
    )
    items, knowledge, saved = ki.resume_interview(stores, interview)
    assert (saved, version, knowledge) == (entry_id, 1, [ENTRY])
    assert [(i["role"], i["status"], i["turn"]) for i in items] == [
        ("user", "done", 1),
        ("assistant", "done", 1),
        ("user", "done", 2),
        ("assistant", "done", 2),
        ("user", "error", 3),
        ("assistant", "error", 3),
    ]
    shown = (
        "ユーザー指示:\n最初\n\n添付テキスト:\n（添付ファイル: contract.docx — 本文は保存していないため省略）"
    )
    assert items[0]["content"] == shown and meta(items[0])["resumed"] is True
    assert meta(items[3])["assistant_message"] == "草案"
    assert (items[5]["raw"], meta(items[5])["error"]) == ("壊れた", "E")
    client = ReplayClient([raw()])
    kt.retry_turn(items, interview_id=interview, client=client, repo=repo)
    assert [m["content"] for m in client.requests[0].messages[2:]] == [
        shown,
        json.dumps(turn(), ensure_ascii=False),
        "ユーザー指示:\n次",
        json.dumps(turn("草案", ENTRY, "draft_knowledge"), ensure_ascii=False),
        "ユーザー指示:\n最後",
    ]
    assert ki.resume_interview(stores, "unknown") is None
    # saving the resumed interview's draft again adds a version to the same entry
    assert kb.save_draft(
        stores.base, {**ENTRY, "action_plan": "変更"}, by=BOB, interview_id=interview, saved_entry_id=saved
    ) == (entry_id, 2)


def test_resume_reports_an_unreadable_store(stores, monkeypatch):
    def fail(*args, **kwargs):
        raise OperationalError("SELECT", {}, Exception("disk I/O error"))

    monkeypatch.setattr(stores.interviews, "interview_turns", fail)
    with pytest.raises(KnowledgeStoreError):
        ki.resume_interview(stores, "x")


def test_demo_pieces():
    opening = ki.demo_opening()
    assert opening.text == DEMO_OPENING and opening.attachments[0]["name"] == "service_agreement.docx"
    assert "第8条（秘密保持）" in opening.file_texts[0]
    done = [{"role": "assistant", "status": "done"}]
    assert ki.next_demo_answer(done, 0) == DEMO_SCRIPT[0]
    assert ki.next_demo_answer(done, len(DEMO_SCRIPT)) is None
    assert ki.next_demo_answer(done, None) is None
    assert ki.next_demo_answer([{"role": "assistant", "status": "error"}], 0) is None
    assert ki.next_demo_answer([{"role": "user", "status": "pending"}], 0) is None


def test_an_empty_input_is_refused(stores):
    with pytest.raises(ValueError):
        run([], stores, ReplayClient([]), "")
