"""AppTest: the knowledge interview page (demo interview to a saved entry, failures, attachments, exports, resume)."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.flows import knowledge as kf
from core.llm.replay import ReplayClient
from core.samples.knowledge.build_samples import build_docx
from core.store import knowledge as store
from core.store import knowledge_base as kbase
from core.store import open_store
from tests.pages.conftest import make_app

PAGE = "pages/knowledge.py"


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def valid_turn(
    message="契約の種類を教えてください。", knowledge=None, phase="collect_case", mode="interview"
):
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": mode},
            "state": {"phase": phase, "missing_info": ["契約書の種類"]},
            "assistant_message": message,
            "knowledge_json": knowledge,
        },
        ensure_ascii=False,
    )


def texts(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_demo_interview_reaches_draft_and_saves_an_entry(tmp_path):
    at = make_app(tmp_path, page=PAGE)
    at.session_state["knowledge_demo_request"] = True
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert chat[0]["attachments"][0]["name"] == "service_agreement.docx"
    assert "第8条（秘密保持）" in chat[1]["assistant_message"]
    assert "service_agreement.docx" in "\n".join(c.value for c in at.caption)
    for _ in range(2):
        at.button(key="knowledge_demo_next").click()
        run(at)
    turn = at.session_state["chat"]["knowledge"][-1]["turn"]
    assert turn["state"]["phase"] == "draft_knowledge" and turn["control"]["mode"] == "finalize"
    outputs = at.session_state["knowledge_outputs"]
    assert len(outputs) == 1 and all(outputs[0][k] for k in kf.KNOWLEDGE_FIELDS)
    assert "ナレッジ草案作成" in texts(at) and '"control"' not in texts(at)  # only assistant_message is shown
    # edit the card, then save
    title_key = next(
        w.key for w in at.text_input if w.key and w.key.startswith("knowledge_card_knowledge_title")
    )
    at.text_input(key=title_key).set_value("秘密保持の存続期間（3年→5年）")
    at.button[[b.label for b in at.button].index("ナレッジベースに保存")].click()
    run(at)
    assert any("ナレッジベースに保存しました" in s.value for s in at.success)
    engine = open_store(tmp_path)
    entries = kbase.list_entries(engine)
    assert [e["knowledge_title"] for e in entries] == ["秘密保持の存続期間（3年→5年）"]
    assert entries[0]["source_interview_id"] == at.session_state["knowledge_interview_id"]
    turns = store.interview_turns(engine, entries[0]["source_interview_id"])
    assert [t["turn"]["state"]["phase"] for t in turns] == [
        "organize_risks",
        "organize_risks",
        "draft_knowledge",
    ]
    assert turns[0]["attachments"][0]["paragraphs"] > 10 and "第8条" not in turns[0]["user_text"]


def test_failed_turn_shows_raw_output_and_error_type_then_retry(tmp_path):
    client = ReplayClient(["壊れた出力です", "まだ壊れています", "最後も壊れています", valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    at.chat_input(key="knowledge_input").set_value("秘密保持期間を3年に限定されました")
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert [m["role"] for m in chat] == ["user", "error"]
    assert chat[0]["text"] == "秘密保持期間を3年に限定されました"
    assert any("parse_error" in e.value for e in at.error)
    assert any(c.value == "最後も壊れています" for c in at.code)
    at.button(key="knowledge_retry").click()
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert len(client.requests) == 4
    assert client.requests[3].messages[-1]["content"] == "ユーザー指示:\n秘密保持期間を3年に限定されました"
    assert "契約の種類を教えてください。" in texts(at)


def test_chat_input_attachment_goes_into_the_payload(tmp_path):
    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    widget = at.chat_input(key="knowledge_input")
    widget.upload("contract.docx", build_docx()).set_value("この契約を確認してください")
    run(at)
    payload = client.requests[0].messages[-1]["content"]
    assert payload.startswith(
        "ユーザー指示:\nこの契約を確認してください\n\n添付テキスト:\nシステム運用保守業務委託契約書"
    )
    assert "月額保守料 | 金800,000円 | 毎月末締め翌月末払い" in payload
    captions = "\n".join(c.value for c in at.caption)
    assert "contract.docx" in captions and "段落" in captions


def test_knowledge_base_exports_and_interview_resume(tmp_path):
    engine = open_store(tmp_path)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    kbase.save_entry(engine, entry, by="山田")
    kbase.save_entry(engine, {**entry, "contract_type": "売買契約"}, by="佐藤")
    interview = store.create_interview(engine, title="過去の相談")
    store.record_turn(
        engine,
        interview,
        turn_no=1,
        user_text="過去の相談",
        result={
            "ok": True,
            **kf.parse_and_validate_turn(valid_turn("前回の質問です。"), kf.turn_schema(), kf.entry_schema()),
        },
    )
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    buttons = {b.key: b for b in at.get("download_button")}
    assert set(buttons) == {
        "knowledge_export_json",
        "knowledge_export_csv",
        "knowledge_export_md",
        "knowledge_export_docx",
    }
    assert all(b.proto.url for b in buttons.values())
    assert len(at.dataframe) >= 2
    # resume the stored interview, as after a browser reload (interview id in the URL)
    at.query_params["interview"] = interview
    at.session_state["chat"]["knowledge"] = []
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert [m["role"] for m in chat] == ["user", "assistant"]
    assert chat[1]["assistant_message"] == "前回の質問です。"
    assert "前回の質問です。" in texts(at)


def test_uploader_shows_pages_and_paragraphs_before_sending(tmp_path):
    from core.samples.knowledge.build_samples import build_pdf

    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    uploader = at.file_uploader(key="knowledge_uploader_0")
    uploader.upload("契約.pdf", build_pdf(["第1条（目的）", "本文です。"]), "application/pdf")
    uploader.upload("broken.docx", b"not a zip")
    run(at)
    captions = "\n".join(c.value for c in at.caption)
    assert "契約.pdf（1 ページ・2 段落" in captions and "次の送信で添付されます" in captions
    assert any("broken.docx" in e.value and "壊れている" in e.value for e in at.error)
    assert client.requests == []  # nothing is sent before the user sends
    at.chat_input(key="knowledge_input").set_value("確認お願いします")
    run(at)
    assert client.requests[0].messages[-1]["content"] == (
        "ユーザー指示:\n確認お願いします\n\n添付テキスト:\n第1条（目的）\n本文です。"
    )
    user = at.session_state["chat"]["knowledge"][0]
    assert user["attachments"][0]["pages"] == 1 and "broken.docx" in user["attachment_errors"][0]
    assert at.session_state["knowledge_uploader_nonce"] == 1  # the uploader is cleared after sending


def test_an_unexpected_client_failure_is_an_error_item_not_a_traceback(tmp_path):
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)  # no recorded output: the client raises
    at.chat_input(key="knowledge_input").set_value("相談です")
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert [m["role"] for m in chat] == ["user", "error"] and chat[1]["error_type"] == "unexpected_error"
    assert any("unexpected_error" in e.value for e in at.error)
