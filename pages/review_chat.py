"""Review chat: questions about an exam answer and its review; the context is rebuilt every turn (spec 02)."""

import json

import streamlit as st

from core.clock import format_local
from core.documents.uploads import upload_limit_caption
from core.flows.chat_item import last_failed
from core.flows.feedback import reply_turns
from core.flows.review_chat import MAX_IMPORT_BYTES, load_sample_review, turn_info_of
from pages.ui.review import manage as rm
from pages.ui.review import material as rmat
from pages.ui.review import session as rs
from pages.ui.review import widgets as rw
from pages.ui.shell import chat_scroll, feedback, last_call, state
from pages.ui.shell.error_card import item_error_card, truncated_banner
from pages.ui.shell.render import literal_md, llm_alert, llm_markdown
from pages.ui.shell.uploader_ja import japanese_uploaders

state.ensure_shell("pages/review_chat.py")
st.title("答案レビュー・チャット")
st.caption(
    "答案と講評について質問できます。§番号（例: §11）や「第11段落」で段落を指定すると、その前後の段落と"
    "関連する講評を自動で添えて回答します（指定は次の2回の質問まで引き継がれます）。"
)

state.demo_badge()

ss = st.session_state
try:
    rs.init()
    if ss.pop("review_demo_request", False):
        rs.start_demo()
    review = rs.current_review()
except Exception:  # noqa: BLE001 - a broken store must not show a traceback
    st.error("レビューのデータを読み込めませんでした。データフォルダ（APP_DATA_DIR）を確認してください。")
    st.stop()
if review is None:  # e.g. a thread link to a review that no longer exists: fall back to the sample
    rs.notify(("warning", "選択したレビューが見つからないため、サンプルのレビューを開きました。"))
    rs.new_thread(rs.sample_id())
    st.rerun()

# While a reply is pending this run ends in a rerun: keep the notices for the run that follows it.
notices = ss.get("review_notices", []) if ss.get("review_pending") else ss.pop("review_notices", [])
for kind, text in notices:
    llm_alert(kind if kind in ("success", "error") else "warning", text)
for text in rs.land_jobs():  # summaries made in the background since the last question
    llm_alert("success", text)
rs.summary_failure(ss["review_thread_id"])

if rmat.active():  # 「答案・講評を登録」 / 編集: the form instead of the chat until it is saved or cancelled
    rmat.form()
    st.stop()

left, right = st.columns([5, 6], gap="large")

with left:
    reviews = rs.reviews()
    titles = {r.id: r.title + ("（サンプル）" if r.sample_key else "") for r in reviews}
    ss["review_picker"] = ss["review_review_id"]
    st.selectbox(
        "レビュー",
        list(titles),
        format_func=titles.__getitem__,
        key="review_picker",
        on_change=rs.on_pick_review,
    )
    rm.register_button()
    rm.review_actions(review.id or 0, review.title)
    with st.expander("講評JSONを読み込む", icon=":material/upload_file:"):
        st.caption(
            "問題文・出題趣旨・採点実感・答案（各段落の先頭行を $$[N] で始める）・講評JSONを1つのJSONファイルに"
            "まとめて読み込めます。書式はサンプルのJSONを参考にしてください。"
        )
        st.download_button(
            "サンプルのJSONをダウンロード",
            key="review_sample_download",
            mime="application/json",
            data=json.dumps(load_sample_review().to_json_dict(), ensure_ascii=False, indent=2),
            file_name="review_sample.json",
            icon=":material/download:",
        )
        upload = st.file_uploader("講評JSONファイル", type=["json"], key="review_upload")
        japanese_uploaders()
        st.caption(upload_limit_caption(MAX_IMPORT_BYTES // 1_000_000, "講評JSONファイル"))
        if upload is not None and st.button("このファイルを読み込む", key="review_import", type="primary"):
            problems = rs.import_review(upload.getvalue())
            if problems:
                st.error(
                    "このファイルは読み込めませんでした。次の点を直してください。\n\n"
                    + "\n".join(f"- {literal_md(p)}" for p in problems)
                )
            else:
                st.rerun()
    tab_answer, tab_review, tab_question = st.tabs(
        ["答案", "講評", "問題文・出題趣旨・採点実感"], key="review_material_tabs"
    )
    with tab_answer:
        st.caption("段落左の §番号 をクリックすると、質問欄に追加されます。")
        with st.container(height=620):
            rw.answer_panel(rs.answer_paragraphs(review))
    with tab_review:
        st.caption("講評の「該当段落」の §番号 をクリックすると、質問欄に追加されます。")
        with st.container(height=620):
            rw.review_panel(review.review_json)
    with tab_question:
        st.markdown("**問題文**")
        st.markdown(literal_md(review.question_text))
        with st.expander("出題趣旨"):
            st.markdown(literal_md(review.purpose_text or "（登録されていません）"))
        with st.expander("採点実感"):
            st.markdown(literal_md(review.grading_impression_text or "（登録されていません）"))

with right:
    threads = rs.threads(review.id or 0)
    labels = {0: "新しいスレッド"} | {
        t.id: f"{t.title or '（無題）'}（{t.turns}ターン・{format_local(t.updated_at)}）" for t in threads
    }
    top = st.columns([4, 1], vertical_alignment="bottom")
    ss["review_thread_picker"] = ss["review_thread_id"] or 0
    top[0].selectbox(
        "スレッド（再読み込みしても続きから再開できます）",
        list(labels),
        format_func=labels.__getitem__,
        key="review_thread_picker",
        on_change=rs.on_pick_thread,
    )
    top[1].button(
        "新規",
        key="review_new_thread",
        icon=":material/add:",
        on_click=rs.new_thread,
        args=(review.id,),
        help="このレビューで新しいスレッドを始めます",
    )
    rm.thread_actions(ss["review_thread_id"], review.id or 0)
    # Our script (not Streamlit's stick-to-bottom) scrolls the box: the newest question at the top, its reply below.
    chat_scroll.follow(rs.FLOW, ".st-key-review_chat_box")
    with st.container(height=560, key="review_chat_box", autoscroll=False):
        if not rs.chat():
            st.caption(
                "まだ質問はありません。下の欄に質問を入力してください。例: 「§11 の論述はどう評価されていますか？」"
                "「採点実感では何が求められていますか？」"
            )
        items = rs.chat()
        busy = bool(ss.get("review_pending") or ss.get("review_continuing"))
        rated = reply_turns(rs.FLOW, items)  # item index -> turn of each finished reply
        for index, item in enumerate(items):
            is_last = index == len(items) - 1
            with st.chat_message(item["role"]):
                if item["role"] == "assistant" and item["status"] == "error":
                    item_error_card(
                        item, key="review_retry", is_last=is_last and not busy, on_retry=rs.on_retry
                    )
                elif item["role"] == "user":
                    st.markdown(literal_md(item["content"]))  # exactly as typed
                else:
                    llm_markdown(item["content"], key=f"review_full_{item.get('turn')}_{item['role']}")
                if item["status"] == "truncated" and item["role"] == "assistant":
                    truncated_banner(
                        key="review_cut",
                        on_continue=rs.on_continue,
                        on_retry=rs.on_retry,
                        actions=is_last and not busy,
                    )
                if item["role"] == "user" and item["status"] == "error":
                    st.caption("この質問への回答を取得できませんでした。")
                info = turn_info_of(item) if item["role"] == "assistant" else None
                if info is not None:
                    rw.turn_info(info)
                if index in rated and ss["review_thread_id"]:
                    feedback.render(rs.FLOW, str(ss["review_thread_id"]), rated[index])
        if ss.get("review_pending"):
            rs.run_pending(review)
        elif ss.get("review_continuing"):
            rs.run_continuation(review)
    rs.summary_working(ss["review_thread_id"])
    if last_failed(items) and items[-1]["role"] == "user" and not busy:  # interrupted before its reply
        st.button("再試行", key="review_retry", icon=":material/refresh:", on_click=rs.on_retry)
    st.text_area(
        "質問",
        key="review_draft",
        height=90,
        placeholder="例: §11 の論述について、講評ではどう評価されていますか？（Ctrl+Enter で送信）",
    )
    # Enter stays a newline (Japanese IMEs confirm with Enter); Ctrl+Enter (⌘+Enter on a Mac) sends.
    st.html(rw.HIDE_APPLY_HINT_CSS)
    st.button(
        "送信",
        key="review_send",
        type="primary",
        icon=":material/send:",
        on_click=rs.on_send,
        shortcut="Ctrl+Enter",
        help="Ctrl+Enter（Mac は ⌘+Enter）でも送信できます。Enter は改行です。",
    )
    last_call.render("review")
