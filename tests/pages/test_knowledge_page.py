"""AppTest: the knowledge interview page (demo interview to a saved entry, failures, attachments, exports, resume)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import docx
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.testing.v1 import AppTest

from core.clock import utc_now
from core.flows.chat_item import meta, user_item
from core.flows.knowledge import interview as kf
from core.flows.knowledge.stores import knowledge_stores
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON, Person
from core.samples.knowledge.build_samples import build_docx, build_pdf
from core.store import open_store
from tests.pages.conftest import make_app

YAMADA, SATO = Person("yamada", "山田"), Person("sato", "佐藤")
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


def repos(tmp_path, clock=utc_now, person=LOCAL_PERSON):
    """The two knowledge repositories on the app's data dir: (the person's interviews, knowledge base)."""
    stores = knowledge_stores(open_store(tmp_path), person, clock)
    return stores.interviews, stores.base


def roles(chat) -> list[str]:
    """Roles, with a failed reply shown as "error" (an assistant item with status error)."""
    return ["error" if m["status"] == "error" and m["role"] == "assistant" else m["role"] for m in chat]


def test_demo_interview_reaches_draft_and_saves_an_entry(tmp_path):
    at = make_app(tmp_path, page=PAGE)
    at.session_state["knowledge_demo_request"] = True
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert roles(chat) == ["user", "assistant"]
    assert meta(chat[0])["attachments"][0]["name"] == "service_agreement.docx"
    assert "第8条（秘密保持）" in meta(chat[1])["assistant_message"]
    assert "service_agreement.docx" in "\n".join(c.value for c in at.caption)
    for _ in range(2):
        at.button(key="knowledge_demo_next").click()
        run(at)
    turn = meta(at.session_state["chat"]["knowledge"][-1])["turn_json"]
    assert turn["state"]["phase"] == "draft_knowledge" and turn["control"]["mode"] == "finalize"
    outputs = at.session_state["knowledge_outputs"]
    assert len(outputs) == 1 and all(outputs[0][k] for k in kf.KNOWLEDGE_FIELDS)
    assert "ナレッジ草案作成" in texts(at) and '"control"' not in texts(at)  # only assistant_message is shown
    # nobody is signed in: the card says what the sidebar says, not 「サインイン中の利用者」
    assert (
        "保存者: ローカル利用者（サインインなしで動作中のため、このサーバーの利用者全員の共有の記録になります）"
        in [c.value for c in at.caption]
    )
    # edit the card, then save
    title_key = next(
        w.key for w in at.text_input if w.key and w.key.startswith("knowledge_card_knowledge_title")
    )
    at.text_input(key=title_key).set_value("秘密保持の存続期間（3年→5年）")
    at.button[[b.label for b in at.button].index("ナレッジベースに保存")].click()
    run(at)
    assert any("ナレッジベースに保存しました" in s.value for s in at.success)
    store, kbase = repos(tmp_path)
    entries = kbase.list_entries()
    assert [e["knowledge_title"] for e in entries] == ["秘密保持の存続期間（3年→5年）"]
    assert entries[0]["source_interview_id"] == at.session_state["knowledge_interview_id"]
    turns = store.interview_turns(entries[0]["source_interview_id"])
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
    assert roles(chat) == ["user", "error"]
    assert meta(chat[0])["text"] == "秘密保持期間を3年に限定されました"
    assert (chat[0]["status"], chat[1]["error_type"], chat[1]["raw"]) == (
        "error",
        "parse_error",
        "最後も壊れています",
    )
    # issue 12: one sentence on the card; the error type and the (translated) parser message under 詳細
    assert [e.value for e in at.error] == ["LLMの出力をJSONとして読み取れませんでした。"]
    assert any("parse_error" in m.value for m in at.markdown)
    assert any("JSONの値がありません（1行1列目）" in c.value for c in at.code)
    assert not any("Expecting value" in c.value for c in at.code)
    assert any(c.value == "最後も壊れています" for c in at.code)
    # the shared last-call expander holds the turn's three calls (initial and two repairs)
    calls = at.session_state["knowledge_last_call"]
    assert [(c["step"], c["attempt"], c["raw"]) for c in calls] == [
        ("interview_turn", 1, "壊れた出力です"),
        ("interview_turn", 2, "まだ壊れています"),
        ("interview_turn", 3, "最後も壊れています"),
    ]
    assert any(e.label == "直近のターンでLLMに渡した内容と返答（3回の呼び出し）" for e in at.expander)
    at.button(key="knowledge_retry").click()
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert roles(chat) == ["user", "assistant"]
    assert len(client.requests) == 4
    assert client.requests[3].messages[-1]["content"] == "ユーザー指示:\n秘密保持期間を3年に限定されました"
    assert "契約の種類を教えてください。" in texts(at)


def test_the_uploader_is_the_one_way_to_attach_and_its_file_goes_into_the_payload(tmp_path):
    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    widget = at.chat_input(key="knowledge_input")
    assert not widget.proto.accept_file  # no second way (the chat input's ＋) to attach
    at.file_uploader(key="knowledge_uploader_0").upload("contract.docx", build_docx())
    run(at)
    at.chat_input(key="knowledge_input").set_value("この契約を確認してください")
    run(at)
    payload = client.requests[0].messages[-1]["content"]
    assert payload.startswith(
        "ユーザー指示:\nこの契約を確認してください\n\n添付テキスト:\nシステム運用保守業務委託契約書"
    )
    assert "月額保守料 | 金800,000円 | 毎月末締め翌月末払い" in payload
    captions = "\n".join(c.value for c in at.caption)
    assert "contract.docx" in captions and "段落" in captions


def test_knowledge_base_exports_and_interview_resume(tmp_path):
    store, kbase = repos(tmp_path)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    kbase.save_entry(entry, by=YAMADA)
    kbase.save_entry({**entry, "contract_type": "売買契約"}, by=SATO)
    interview = store.create_interview(title="過去の相談")
    store.record_turn(
        interview, turn_no=1, user_text="過去の相談", turn=json.loads(valid_turn("前回の質問です。"))
    )
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    buttons = {b.key: b for b in at.get("download_button")}
    assert set(buttons) == {
        "knowledge_export_json",
        "knowledge_export_csv",
        "knowledge_export_md",
        "knowledge_export_docx",
    }
    assert all(b.proto.deferred_file_id for b in buttons.values())  # built only when pressed
    assert len(at.dataframe) >= 2
    # resume the stored interview, as after a browser reload (interview id in the URL)
    at.query_params["interview"] = interview
    at.session_state["chat"]["knowledge"] = []
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert roles(chat) == ["user", "assistant"]
    assert meta(chat[1])["assistant_message"] == "前回の質問です。"
    assert "前回の質問です。" in texts(at)


def test_uploader_shows_pages_and_paragraphs_before_sending(tmp_path):
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
    user = meta(at.session_state["chat"]["knowledge"][0])
    assert user["attachments"][0]["pages"] == 1 and "broken.docx" in user["attachment_errors"][0]
    assert at.session_state["knowledge_uploader_nonce"] == 1  # the uploader is cleared after sending


def test_an_unexpected_client_failure_is_an_error_item_not_a_traceback(tmp_path):
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)  # no recorded output: the client raises
    at.chat_input(key="knowledge_input").set_value("相談です")
    run(at)
    chat = at.session_state["chat"]["knowledge"]
    assert roles(chat) == ["user", "error"] and chat[1]["error_type"] == "unexpected_error"
    assert len(at.error) == 1 and any("unexpected_error" in m.value for m in at.markdown)


def _stored_draft_interview(store, title="第8条の相談"):
    """An interview with one stored draft turn (knowledge_json filled), as a past session left it."""
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    interview = store.create_interview(title=title)
    draft = valid_turn("草案を作りました。", entry, "draft_knowledge", "finalize")
    assert kf.parse_and_validate_turn(draft, kf.turn_schema(), kf.entry_schema())["ok"]
    store.record_turn(
        interview,
        turn_no=1,
        user_text=title,
        attachments=[
            {"name": "contract.docx", "kind": "docx", "pages": None, "paragraphs": 30, "chars": 900}
        ],
        turn=json.loads(draft),
        raw=draft,
    )
    return interview, entry


def test_resumed_interview_updates_its_saved_entry_instead_of_saving_a_duplicate(tmp_path):
    store, kbase = repos(tmp_path)
    interview, entry = _stored_draft_interview(store)
    entry_id = kbase.save_entry(entry, by=YAMADA, source_interview_id=interview)
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.query_params["interview"] = interview  # a browser reload: a fresh session, the id in the URL
    run(at)
    assert at.session_state["knowledge_saved_entry_id"] == entry_id
    assert any("本文は保存していないため" in c.value for c in at.caption)
    labels = [b.label for b in at.button]
    assert "ナレッジベースを更新（新しい版）" in labels and "ナレッジベースに保存" not in labels
    title_key = next(
        w.key for w in at.text_input if w.key and w.key.startswith("knowledge_card_knowledge_title")
    )
    at.text_input(key=title_key).set_value("直したナレッジ名")
    at.button[labels.index("ナレッジベースを更新（新しい版）")].click()
    run(at)
    entries = kbase.list_entries()
    assert [(e["id"], e["version"], e["knowledge_title"]) for e in entries] == [
        (entry_id, 2, "直したナレッジ名")
    ]


def test_retry_after_resume_sends_what_the_history_shows(tmp_path):
    store, _ = repos(tmp_path)
    interview = store.create_interview(title="相談")
    store.record_turn(
        interview,
        turn_no=1,
        user_text="この契約を見てください",
        attachments=[{"name": "contract.docx", "kind": "docx", "pages": None, "paragraphs": 3, "chars": 90}],
        raw="壊れた",
        error="Expecting value",
        error_type="parse_error",
    )
    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    at.query_params["interview"] = interview
    run(at)
    shown = at.session_state["chat"]["knowledge"][0]["content"]
    assert shown == (
        "ユーザー指示:\nこの契約を見てください\n\n"
        "添付テキスト:\n（添付ファイル: contract.docx — 本文は保存していないため省略）"
    )
    at.button(key="knowledge_retry").click()
    run(at)
    assert client.requests[0].messages[-1]["content"] == shown
    assert roles(at.session_state["chat"]["knowledge"]) == ["user", "assistant"]


def test_a_user_message_left_without_reply_can_be_retried(tmp_path):
    client = ReplayClient([valid_turn()])
    at = make_app(tmp_path, client=client, page=PAGE)
    # a run interrupted between "append the input" and "call the model" leaves the input unanswered
    at.session_state["chat"]["knowledge"] = [
        user_item(
            "ユーザー指示:\n途中で止まった相談",
            turn=1,
            text="途中で止まった相談",
            attachments=[],
            attachment_errors=[],
            file_texts=[],
            turn_no=1,
        )
    ]
    run(at)
    assert any("応答がまだありません" in w.value for w in at.warning)
    at.button(key="knowledge_retry").click()
    run(at)
    assert client.requests[0].messages[-1]["content"] == "ユーザー指示:\n途中で止まった相談"
    assert roles(at.session_state["chat"]["knowledge"]) == ["user", "assistant"]
    assert not at.warning


def test_knowledge_base_entry_is_picked_and_edited_to_a_new_version(tmp_path):
    _, kbase = repos(tmp_path)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    first = kbase.save_entry(entry, by=YAMADA)
    kbase.save_entry({**entry, "knowledge_title": "別のナレッジ"}, by=SATO)
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.selectbox(key="knowledge_base_pick").select(first)
    run(at)
    key = f"knowledge_base_action_plan_{first}_1"
    assert at.text_area(key=key).value == "action_planの値"
    at.text_area(key=key).set_value("上限を2倍にする")
    assert not [
        w for w in at.text_input if w.label in ("編集者", "保存者")
    ]  # who edits is the signed-in person
    at.text_input(key=f"knowledge_base_note_{first}").set_value("交渉結果を反映")
    at.button[[b.label for b in at.button].index("変更を保存（新しい版）")].click()
    run(at)
    saved = kbase.get_entry(first)
    assert (saved["version"], saved["action_plan"], saved["updated_by"], saved["updated_by_id"]) == (
        2,
        "上限を2倍にする",
        LOCAL_PERSON.name,
        LOCAL_PERSON.id,
    )
    assert [v["note"] for v in kbase.entry_versions(first)] == ["作成", "交渉結果を反映"]
    assert at.selectbox(key="knowledge_base_pick").value == first  # still open, now at version 2
    assert at.text_area(key=f"knowledge_base_action_plan_{first}_2").value == "上限を2倍にする"


def capture_deferred(monkeypatch) -> dict[str, Any]:
    """The callables of deferred download buttons by file extension (AppTest has no runtime to run them)."""
    found: dict[str, Any] = {}
    original = MediaFileManager.add_deferred

    def capture(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):  # type: ignore[no-untyped-def]
        if file_name:
            found[file_name.rsplit(".", 1)[-1]] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture)
    return found


def _built(callables: dict[str, Any]) -> dict[str, bytes]:
    return {
        ext: (lambda d: d.encode() if isinstance(d, str) else d)(build()) for ext, build in callables.items()
    }


def test_exports_download_files_that_open(tmp_path, monkeypatch):
    deferred = capture_deferred(monkeypatch)
    _, kbase = repos(tmp_path)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    kbase.save_entry(entry, by=YAMADA)
    make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    files = _built(deferred)
    assert set(files) == {"json", "csv", "md", "docx"}
    document = docx.Document(io.BytesIO(files["docx"]))
    assert document.paragraphs[0].text == "契約審査ナレッジ"
    assert document.tables[0].cell(0, 1).text == "contract_typeの値"
    assert json.loads(files["json"])[0]["clause_sample"] == "clause_sampleの値"
    assert (
        next(csv.DictReader(io.StringIO(files["csv"].decode("utf-8-sig"))))["対応方針"] == "action_planの値"
    )
    assert "### 対応方針" in files["md"].decode()


def test_stored_times_are_shown_in_japan_time(tmp_path):
    store, kbase = repos(tmp_path, clock=lambda: 1_700_000_000)  # 2023-11-14 22:13:20 UTC
    store.create_interview(title="過去の相談")
    entry_id = kbase.save_entry({k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}, by=YAMADA)
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    assert any("2023-11-15 07:13" in o for o in at.selectbox(key="knowledge_interview_pick").options)
    assert any("2023-11-15 07:13" in str(v) for v in at.dataframe[0].value["更新日時"])
    at.selectbox(key="knowledge_base_pick").select(entry_id)
    run(at)
    assert any("作成: 山田 2023-11-15 07:13" in m.value for m in at.markdown)


def test_a_save_after_someone_else_saved_shows_both_versions_and_overwrites_on_request(tmp_path):
    _, kbase = repos(tmp_path)
    entry = {k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}
    first = kbase.save_entry(entry, by=YAMADA)
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.selectbox(key="knowledge_base_pick").select(first)
    run(at)
    key = f"knowledge_base_action_plan_{first}_1"
    at.text_area(key=key).set_value("私の修正")
    kbase.update_entry(first, {**entry, "action_plan": "佐藤の修正"}, by=SATO)  # meanwhile, another person
    at.button[[b.label for b in at.button].index("変更を保存（新しい版）")].click()
    run(at)
    assert kbase.get_entry(first)["action_plan"] == "佐藤の修正"  # nothing overwritten
    (warning,) = [w.value for w in at.warning]
    assert "佐藤 さんが第2版" in warning and "上書きはしていません" in warning
    (table,) = [d.value for d in at.dataframe if "あなたの編集" in d.value.columns]
    row = table[table["項目"] == kf.KNOWLEDGE_FIELD_LABELS["action_plan"]].iloc[0]
    assert (row["あなたの編集"], row["保存済みの第2版"], row["違い"]) == ("私の修正", "佐藤の修正", "●")
    assert at.text_area(key=key).value == "私の修正"  # what was typed is still there
    at.button(key=f"knowledge_base_{first}_overwrite").click()
    run(at)
    saved = kbase.get_entry(first)
    assert (saved["version"], saved["action_plan"]) == (3, "私の修正")
    versions = kbase.entry_versions(first)
    assert [v["edited_by"] for v in versions] == ["山田", "佐藤", LOCAL_PERSON.name]  # the signed-in person
    assert [v["edited_by_id"] for v in versions] == [YAMADA.id, SATO.id, LOCAL_PERSON.id]
    assert not at.warning and "第3版として保存しました。" in [s.value for s in at.success]


def test_an_empty_search_says_no_hits_and_the_analytics_speak_japanese(tmp_path):
    store, kbase = repos(tmp_path)
    kbase.save_entry({k: f"{k}の値" for k in kf.KNOWLEDGE_FIELDS}, by=YAMADA)
    interview = store.create_interview(title="途中の相談")
    store.record_turn(interview, turn_no=1, user_text="途中の相談", turn=json.loads(valid_turn("質問です。")))
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.text_input(key="knowledge_base_search").input("該当しない語")
    run(at)
    infos = [i.value for i in at.info]
    assert (
        "「該当しない語」に一致するナレッジはありません。検索語を変えるか、絞り込みを解除してください。"
        in infos
    )
    assert not any("まだありません" in i for i in infos)  # an entry exists: it just does not match
    analytics = next(d.value for d in at.dataframe if "聞き取り" in d.value.columns)
    assert list(analytics.columns) == [
        "聞き取り",
        "ターン数",
        "草案までのターン",
        "確定までのターン",
        "最後のフェーズ",
    ]
    assert analytics.iloc[0].tolist()[1:] == [1, "まだ", "まだ", "事例ヒアリング"]
    assert "確定までの平均ターン" in [m.label for m in at.metric]
    (chart,) = [e for e in walk(at._tree) if getattr(e, "type", "") == "vega_lite_chart"]
    encoding = json.loads(chart.proto.spec)["encoding"]
    assert encoding["y"]["field"] == "フェーズ" and encoding["y"]["title"] == ""  # no sideways axis title
    assert encoding["x"]["title"] == "聞き取り数"


def walk(node):  # type: ignore[no-untyped-def]
    """Every element of an AppTest tree (charts have no accessor of their own)."""
    children = getattr(node, "children", None)
    for child in children.values() if isinstance(children, dict) else []:
        yield child
        yield from walk(child)
