"""AppTest, issue #13 items 3 and 4: 類似ナレッジ in a second interview (with the exact message stack the model
got), the near-duplicate question and its three answers, archiving entries and interviews, filters and sort."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from core.contracts.prompts import load_prompt
from core.flows.knowledge import base as kb
from core.flows.knowledge import interview as kf
from core.flows.knowledge import turn as kt
from core.flows.knowledge.interviews import demo_opening
from core.flows.knowledge.stores import knowledge_stores
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON, Person
from core.search.vectors import open_chroma
from core.store import open_store
from tests.pages.conftest import make_app

SATO = Person("sato", "佐藤")
PAGE = "pages/knowledge.py"
NDA = {
    "contract_type": "業務委託契約",
    "knowledge_title": "秘密保持の存続期間（3年→5年）",
    "target_clause": "第8条（秘密保持）",
    "review_points": "相手方から秘密保持義務の存続期間を「契約終了後3年」に限定する案が出た。",
    "action_plan": "存続期間を5年とするよう修正を求めた。",
    "clause_sample": "前項の義務は、本契約終了後5年間存続する。",
}
SALES = {
    "contract_type": "売買契約",
    "knowledge_title": "損害賠償の上限",
    "target_clause": "第12条（損害賠償）",
    "review_points": "賠償上限を代金額に限定する案。",
    "action_plan": "故意・重過失を除外した。",
    "clause_sample": "ただし、故意又は重大な過失による場合はこの限りでない。",
}
LEASE = {
    "contract_type": "賃貸借契約",
    "knowledge_title": "原状回復の範囲",
    "target_clause": "第15条（原状回復）",
    "review_points": "通常損耗まで借主負担。",
    "action_plan": "通常損耗は貸主負担に修正。",
    "clause_sample": "借主は、通常の使用による損耗を除き、原状に回復する。",
}


def run(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def stores(tmp_path, person=SATO, clock=None):
    """The knowledge stores on the app's data dir, with the shared knowledge base's vector index."""
    extra = {"clock": clock} if clock else {}
    return knowledge_stores(open_store(tmp_path), person, chroma=open_chroma(tmp_path), **extra)


def saved(tmp_path, entry, person=SATO) -> int:
    opened = stores(tmp_path, person)
    entry_id, _ = kb.save_draft(
        opened.base, entry, by=person, interview_id=None, saved_entry_id=None, index=opened.index
    )
    return entry_id


def reply(message="ほかに教えてください。") -> str:
    return json.dumps(
        {
            "control": {"schema_version": "1.0", "mode": "interview"},
            "state": {"phase": "collect_case", "missing_info": ["リスク"]},
            "assistant_message": message,
            "knowledge_json": None,
        },
        ensure_ascii=False,
    )


def expander_labels(at: AppTest) -> list[str]:
    return [e.label for e in at.expander]


def test_a_second_interview_about_a_saved_clause_shows_and_sends_similar_knowledge(tmp_path):
    nda = saved(tmp_path, NDA)
    saved(tmp_path, LEASE)
    client = ReplayClient([reply()])
    at = make_app(tmp_path, client=client, page=PAGE)
    at.session_state["knowledge_demo_request"] = True
    run(at)
    row = stores(tmp_path).base.get_entry(nda)
    opening = demo_opening()
    assert client.requests[0].messages == [
        {"role": "system", "content": load_prompt(kf.SYSTEM_PROMPT_NAME)},
        {"role": "assistant", "content": kf.FEW_SHOT_TURN},
        {"role": "user", "content": kf.build_reference_block([row])},
        {"role": "user", "content": kf.build_user_payload(opening.text, opening.file_texts)},
    ]
    assert (
        client.requests[0]
        .messages[2]["content"]
        .startswith("参考: 類似ナレッジ（既存の登録内容）\n\n以下は、チームのナレッジベースに登録済みの")
    )
    assert f"[1] ID {nda}（第1版）\n契約類型: 業務委託契約\n" in client.requests[0].messages[2]["content"]
    assert "類似ナレッジ（1 件）" in expander_labels(at)
    shown = "\n".join(m.value for m in at.markdown)
    assert f"秘密保持の存続期間（3年→5年）（ID {nda}・第1版）" in shown
    assert "賃貸借" not in shown  # the unrelated entry is not a reference
    # a similar entry can be copied as text, or opened in the knowledge base tab
    copy = next(c for c in at.get("code") if "【ナレッジ名】" in c.value)
    assert copy.value.startswith(
        "【契約類型】\n業務委託契約\n\n【ナレッジ名】\n秘密保持の存続期間（3年→5年）"
    )
    at.button(key=f"knowledge_ref_open_{nda}").click()
    run(at)
    assert at.session_state["knowledge_tabs"] == "ナレッジベース"
    assert at.selectbox(key="knowledge_base_pick").value == nda


def test_an_interview_with_nothing_similar_sends_spec_00s_stack_and_shows_no_section(tmp_path):
    saved(tmp_path, LEASE)
    client = ReplayClient([reply()])
    at = make_app(tmp_path, client=client, page=PAGE)
    at.chat_input(key="knowledge_input").set_value("業務委託契約の秘密保持について相談です。")
    run(at)
    assert client.requests[0].messages == kf.build_messages(
        "業務委託契約の秘密保持について相談です。", [], load_prompt(kf.SYSTEM_PROMPT_NAME), []
    )
    assert not any(label.startswith("類似ナレッジ") for label in expander_labels(at))


def draft_app(tmp_path) -> AppTest:
    """The page with a draft on the card that nearly duplicates the saved NDA entry (same clause, reworded)."""
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.session_state["knowledge_outputs"] = [{**NDA, "action_plan": "5年に延長し、個人情報は無期限とした。"}]
    run(at)
    at.button[[b.label for b in at.button].index("ナレッジベースに保存")].click()
    run(at)
    return at


def warnings(at: AppTest) -> str:
    return "\n".join(w.value for w in at.warning)


def test_saving_a_near_duplicate_asks_first_and_updates_the_existing_entry(tmp_path):
    nda = saved(tmp_path, NDA)
    at = draft_app(tmp_path)
    base = stores(tmp_path).base
    assert "よく似たナレッジがあります" in warnings(at)
    assert [e["id"] for e in base.list_entries()] == [nda]  # nothing saved yet
    assert base.get_entry(nda)["version"] == 1
    assert f"既存: 秘密保持の存続期間（3年→5年）（ID {nda}・第1版）" in "\n".join(
        m.value for m in at.markdown
    )
    at.button(key="knowledge_dup_update").click()
    run(at)
    entry = base.get_entry(nda)
    assert (entry["version"], entry["action_plan"], entry["updated_by_id"]) == (
        2,
        "5年に延長し、個人情報は無期限とした。",
        LOCAL_PERSON.id,
    )
    assert [v["note"] for v in base.entry_versions(nda)] == ["作成", "類似の聞き取りから更新"]
    assert [e["id"] for e in base.list_entries()] == [nda]
    assert any(f"既存のナレッジ（ID {nda}）を更新しました（第2版）" in s.value for s in at.success)
    assert "よく似たナレッジがあります" not in warnings(at)
    assert at.session_state["knowledge_saved_entry_id"] == nda  # saving again adds a version, no question
    at.button[[b.label for b in at.button].index("ナレッジベースを更新（新しい版）")].click()
    run(at)
    assert "よく似たナレッジがあります" not in warnings(at)


def test_saving_a_near_duplicate_as_new(tmp_path):
    nda = saved(tmp_path, NDA)
    at = draft_app(tmp_path)
    at.button(key="knowledge_dup_new").click()
    run(at)
    entries = stores(tmp_path).base.list_entries()
    assert len(entries) == 2 and entries[1]["id"] == nda and entries[0]["version"] == 1
    assert any("ナレッジベースに保存しました（ID" in s.value for s in at.success)
    assert stores(tmp_path).base.get_entry(nda)["version"] == 1


def test_cancelling_the_near_duplicate_question_saves_nothing_and_keeps_the_card(tmp_path):
    nda = saved(tmp_path, NDA)
    at = draft_app(tmp_path)
    at.button(key="knowledge_dup_cancel").click()
    run(at)
    assert [e["id"] for e in stores(tmp_path).base.list_entries()] == [nda]
    assert "よく似たナレッジがあります" not in warnings(at)
    assert at.text_area(key="knowledge_card_action_plan_0").value == "5年に延長し、個人情報は無期限とした。"


def table_ids(at: AppTest) -> list[int]:
    return list(at.dataframe[0].value["ID"])


def test_archive_hides_an_entry_and_the_toggle_shows_it_read_only_with_restore(tmp_path):
    nda, sales = saved(tmp_path, NDA), saved(tmp_path, SALES)
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    assert table_ids(at) == [sales, nda]
    at.selectbox(key="knowledge_base_pick").select(nda)
    run(at)
    at.button(key=f"knowledge_base_archive_{nda}").click()
    run(at)
    assert table_ids(at) == [sales]
    assert any(f"ID {nda} をアーカイブしました" in s.value for s in at.success)
    at.toggle(key="knowledge_base_show_archived").set_value(True)
    run(at)
    assert table_ids(at) == [nda]
    at.selectbox(key="knowledge_base_pick").select(nda)
    run(at)
    assert not [
        w for w in at.text_input if w.key and w.key.startswith(f"knowledge_base_knowledge_title_{nda}")
    ]
    assert "アーカイブ済み・読み取り専用" in "\n".join(m.value for m in at.markdown)
    assert [b.key for b in at.button if b.key == f"knowledge_base_archive_{nda}"] == []
    at.button(key=f"knowledge_base_restore_{nda}").click()
    run(at)
    assert any(f"ID {nda} を復元しました" in s.value for s in at.success)
    at.toggle(key="knowledge_base_show_archived").set_value(False)
    run(at)
    assert table_ids(at) == [sales, nda]
    assert [v["version"] for v in stores(tmp_path).base.entry_versions(nda)] == [1]


def test_filter_by_contract_type_clause_and_words_and_sort_by_update_time(tmp_path):
    times = iter([100, 200, 300])
    opened = stores(tmp_path, clock=lambda: next(times))
    ids = [
        kb.save_draft(opened.base, e, by=SATO, interview_id=None, saved_entry_id=None, index=opened.index)[0]
        for e in (NDA, SALES, LEASE)
    ]
    nda, sales, lease = ids
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    assert table_ids(at) == [lease, sales, nda]
    at.selectbox(key="knowledge_base_order").select("oldest")
    run(at)
    assert table_ids(at) == [nda, sales, lease]
    assert at.selectbox(key="knowledge_base_clause").options == [
        "第12条（損害賠償）",
        "第15条（原状回復）",
        "第8条（秘密保持）",
    ]
    at.multiselect(key="knowledge_base_types").select("売買契約")
    run(at)
    assert table_ids(at) == [sales]
    assert at.selectbox(key="knowledge_base_clause").options == ["第12条（損害賠償）"]
    at.multiselect(key="knowledge_base_types").unselect("売買契約")
    run(at)
    at.selectbox(key="knowledge_base_clause").select("第8条（秘密保持）")
    run(at)
    assert table_ids(at) == [nda]
    at.selectbox(key="knowledge_base_clause").set_value(None)
    at.text_input(key="knowledge_base_search").set_value("ＮＤＡ 損耗")  # folded; ANDed
    run(at)
    assert len(at.dataframe) == 0
    infos = [i.value for i in at.info]
    assert (
        "「ＮＤＡ 損耗」に一致するナレッジはありません。検索語を変えるか、絞り込みを解除してください。"
        in infos
    )
    assert not any("まだありません（" in i or "保存されたナレッジはまだありません" in i for i in infos)
    at.text_input(key="knowledge_base_search").set_value("損耗")
    run(at)
    assert table_ids(at) == [lease]


def test_archiving_an_interview_hides_it_from_the_owners_list_and_restore_brings_it_back(tmp_path):
    mine = stores(tmp_path, LOCAL_PERSON).interviews
    kept = mine.create_interview(title="残す聞き取り")
    gone = mine.create_interview(title="片付ける聞き取り")
    for interview in (kept, gone):
        mine.record_turn(interview, turn_no=1, user_text="相談です。", turn=json.loads(reply()))
    theirs = stores(tmp_path, SATO).interviews.create_interview(title="佐藤さんの聞き取り")
    at = make_app(tmp_path, client=ReplayClient([]), page=PAGE)
    at.selectbox(key="knowledge_interview_pick").select(gone)
    run(at)
    at.button(key="knowledge_interview_archive").click()
    run(at)
    options = at.selectbox(key="knowledge_interview_pick").options
    assert len(options) == 1 and "残す聞き取り" in options[0]
    assert [i["id"] for i in mine.list_interviews()] == [kept]
    assert len(mine.interview_turns(gone)) == 1
    at.toggle(key="knowledge_interviews_show_archived").set_value(True)
    run(at)
    assert "片付ける聞き取り" in "\n".join(m.value for m in at.markdown)
    assert f"knowledge_interview_restore_{theirs}" not in [b.key for b in at.button]
    at.button(key=f"knowledge_interview_restore_{gone}").click()
    run(at)
    assert {i["id"] for i in mine.list_interviews()} == {kept, gone}
    assert any("聞き取りを復元しました" in s.value for s in at.success)


CASE = "業務委託契約の第8条（秘密保持）で、相手方が存続期間を契約終了後3年に限定する案を出してきました。"


def stored_interview(tmp_path, person=LOCAL_PERSON, text=CASE) -> str:
    """An interview of `person` with one answered turn, recorded before any similar entry was saved."""
    opened = stores(tmp_path, person)
    outcome = kt.run_turn(
        [], kt.TurnInput(text), interview_id=None, client=ReplayClient([reply()]), repo=opened.interviews
    )
    assert outcome.ok and outcome.interview_id is not None and outcome.references == []
    return outcome.interview_id


def resumed_by_url(tmp_path, interview: str, client: ReplayClient) -> AppTest:
    """A browser reload: a fresh session with the interview id in the URL."""
    at = make_app(tmp_path, client=client, page=PAGE)
    at.query_params["interview"] = interview
    return run(at)


def test_a_resumed_interview_shows_its_similar_knowledge_before_any_new_turn(tmp_path):
    interview = stored_interview(tmp_path)
    other = stored_interview(tmp_path, text="別の聞き取りです。")
    opened = stores(tmp_path, LOCAL_PERSON)
    nda, _ = kb.save_draft(
        opened.base, NDA, by=LOCAL_PERSON, interview_id=other, saved_entry_id=None, index=opened.index
    )
    saved(tmp_path, LEASE)
    client = ReplayClient([reply("リスクを教えてください。")])
    at = resumed_by_url(tmp_path, interview, client)
    assert client.requests == []  # no model call to find them
    assert at.session_state["knowledge_interview_id"] == interview
    assert "類似ナレッジ（1 件）" in expander_labels(at)
    shown = "\n".join(m.value for m in at.markdown)
    assert f"秘密保持の存続期間（3年→5年）（ID {nda}・第1版）" in shown
    assert "原状回復" not in shown
    history = list(at.session_state["chat"]["knowledge"])
    at.chat_input(key="knowledge_input").set_value("続けます。")
    run(at)
    row = stores(tmp_path).base.get_entry(nda)
    assert client.requests[0].messages == [  # the next turn's stack, as without the panel
        {"role": "system", "content": load_prompt(kf.SYSTEM_PROMPT_NAME)},
        {"role": "assistant", "content": kf.FEW_SHOT_TURN},
        {"role": "user", "content": kf.build_user_payload(CASE, [])},
        {"role": "assistant", "content": history[1]["content"]},
        {"role": "user", "content": kf.build_reference_block([row])},
        {"role": "user", "content": kf.build_user_payload("続けます。", [])},
    ]
    assert "類似ナレッジ（1 件）" in expander_labels(at)


def test_an_archived_interview_opened_by_its_url_is_read_only_until_restored(tmp_path):
    interview = stored_interview(tmp_path)
    mine = stores(tmp_path, LOCAL_PERSON).interviews
    mine.record_turn(
        interview,
        turn_no=2,
        user_text="草案をお願いします。",
        turn={**json.loads(reply("草案です。")), "knowledge_json": NDA},
    )
    kb.archive_interview(mine, interview)
    client = ReplayClient([reply("続きをどうぞ。")])
    at = resumed_by_url(tmp_path, interview, client)
    notice = [i.value for i in at.info if "アーカイブ" in i.value]
    assert notice == ["このヒアリングはアーカイブされています（閲覧のみ）。"]
    assert len(at.chat_input) == 0 and len(at.file_uploader) == 0
    shown = "\n".join(m.value for m in at.markdown)
    assert "ほかに教えてください。" in shown and "草案です。" in shown  # its turns are visible
    card = [w for w in at.text_input if w.key and w.key.startswith("knowledge_card_knowledge_title")]
    assert [(w.value, w.disabled) for w in card] == [(NDA["knowledge_title"], True)]
    labels = [b.label for b in at.button]
    assert "ナレッジベースに保存" not in labels and "ナレッジベースを更新（新しい版）" not in labels
    assert not any(label.startswith("類似ナレッジ") for label in expander_labels(at))
    assert len(mine.interview_turns(interview)) == 2
    at.button(key="knowledge_resume_restore").click()
    run(at)
    row = mine.get_interview(interview)
    assert row is not None and row["archived_at"] is None
    assert [i["id"] for i in mine.list_interviews()] == [interview]
    assert not [i for i in at.info if "アーカイブされています" in i.value]
    assert any("聞き取りを復元しました" in s.value for s in at.success)
    assert "ナレッジベースに保存" in [b.label for b in at.button]
    at.chat_input(key="knowledge_input").set_value("続けます。")
    run(at)
    assert len(client.requests) == 1
    assert [t["turn_no"] for t in mine.interview_turns(interview)] == [1, 2, 3]


def test_another_persons_interview_by_url_reads_not_found_also_when_archived(tmp_path):
    theirs = stored_interview(tmp_path, person=SATO)
    kb.archive_interview(stores(tmp_path, SATO).interviews, theirs)
    at = resumed_by_url(tmp_path, theirs, ReplayClient([]))
    assert any("見つかりません" in w.value for w in at.warning)
    assert not [i for i in at.info if "アーカイブされています" in i.value]
    assert at.session_state["chat"]["knowledge"] == [] and at.session_state["knowledge_interview_id"] is None
    assert "interview" not in at.query_params
    assert len(at.chat_input) == 1


def test_an_interview_archived_in_another_tab_refuses_the_next_input_and_keeps_it(tmp_path):
    interview = stored_interview(tmp_path)
    client = ReplayClient([reply("続きをどうぞ。")])
    at = resumed_by_url(tmp_path, interview, client)
    mine = stores(tmp_path, LOCAL_PERSON).interviews
    kb.archive_interview(mine, interview)  # meanwhile, in another tab
    at.chat_input(key="knowledge_input").set_value("追加の事情です。")
    run(at)
    assert client.requests == [] and [t["turn_no"] for t in mine.interview_turns(interview)] == [1]
    assert [e.value for e in at.error] == [
        "このヒアリングは別の画面でアーカイブされたため、送信しませんでした。復元すると続けられます。"
        "送らなかった入力:「追加の事情です。」"
    ]
    assert len(at.chat_input) == 0  # read-only now
    assert [i.value for i in at.info if "アーカイブ" in i.value] == [
        "このヒアリングはアーカイブされています（閲覧のみ）。"
    ]
