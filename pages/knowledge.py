"""Knowledge interview: turn a contract-review case into a reusable knowledge entry (spec 00, spec 01)."""

import streamlit as st

from core.documents.attachments import MAX_FILE_BYTES, SUPPORTED_EXTENSIONS
from core.documents.uploads import upload_limit_caption
from core.flows.chat_item import ChatItem
from core.flows.knowledge import TurnInput
from pages.ui.knowledge import attachments
from pages.ui.knowledge import base_tab as knowledge_base_tab
from pages.ui.knowledge import resume as kr
from pages.ui.knowledge import session as ks
from pages.ui.knowledge import widgets as knowledge_widgets
from pages.ui.shell import chat_scroll, last_call, state
from pages.ui.shell.render import llm_alert, llm_caption
from pages.ui.shell.uploader_ja import japanese_uploaders

state.ensure_shell("pages/knowledge.py")
st.title("ナレッジ聞き取り")
st.caption(
    "契約審査の事例をAIが段階的に聞き取り（事例ヒアリング → リスク整理 → 草案作成 → レビュー）、"
    "チームで再利用できるナレッジ（6項目）にまとめます。"
)

state.demo_badge()
ks.init()
ks.reconcile_on_start()
if st.session_state.pop("knowledge_demo_request", False):
    with st.spinner("サンプル契約書を読み込み、聞き取りを始めています…"):
        ks.start_demo()
else:
    kr.resume_from_url()

# keyed: the chosen tab stays put when a one-off notice above it (e.g. 見つかりません) goes away on the next run
tab_interview, tab_base, tab_history = st.tabs(
    ["聞き取り", "ナレッジベース", "聞き取り一覧・分析"], key="knowledge_tabs", on_change="rerun"
)

with tab_interview:
    chat_col, side_col = st.columns([3, 2], gap="large")
    with chat_col:
        if ks.chat():
            st.button("新しい聞き取り", key="knowledge_new", icon=":material/add:", on_click=ks.reset)
        kr.show_restored()
        if ks.read_only():  # an archived interview (opened by its URL): its turns only, and 復元する
            kr.render_read_only()
        knowledge_widgets.render_history()
        chat_scroll.follow(ks.FLOW)
        ks.show_notices()
        if not ks.read_only():
            pending = st.container()  # the message being sent shows here at once, above the input
            demo_answer = ks.next_demo_answer()
            if demo_answer and st.button(
                f"デモの回答例を送る：「{demo_answer[:30]}…」",
                key="knowledge_demo_next",
                icon=":material/smart_toy:",
            ):
                with st.spinner("AIが考えています…"):
                    ks.send_demo_answer()
                st.rerun()
            nonce = st.session_state[ks.UPLOADER_NONCE_KEY]
            uploaded = st.file_uploader(
                "ファイルを添付（PDF・DOCX・TXT、複数可）",
                type=list(SUPPORTED_EXTENSIONS),
                accept_multiple_files=True,
                key=f"knowledge_uploader_{nonce}",
                help=(
                    f"1ファイル {MAX_FILE_BYTES // 1024 // 1024} MB まで。添付すると、送信前にページ数と段落数を"
                    "確認できます。次の送信で入力欄の文と一緒に送られます。本文は送信にのみ使い、保存しません。"
                ),
            )
            japanese_uploaders()
            st.caption(upload_limit_caption(MAX_FILE_BYTES // 1024 // 1024, "1ファイル"))
            docs, errors = ks.read_attachments(uploaded or [])
            for doc in docs:
                llm_caption(
                    knowledge_widgets.attachment_caption(doc.summary()) + "　— 次の送信で添付されます"
                )
            for error in errors:
                llm_alert("error", error)
            attachments.password_field(ks.FLOW)
            # one way to attach: the uploader above (it shows pages and paragraphs before sending)
            prompt = st.chat_input(
                "事例や回答を入力（ファイルは上の「ファイルを添付」から）", key="knowledge_input"
            )
            if prompt:
                text = prompt
                if not text.strip() and not docs:
                    st.error(
                        "送信する内容がありません。"
                        + (" 添付ファイルを読み取れませんでした。" if errors else "")
                    )
                else:
                    shown, waiting = pending.container(), pending.container()

                    def show(item: ChatItem) -> None:
                        with shown:
                            knowledge_widgets.render_user(item)

                    with waiting, st.spinner("AIが考えています…"):
                        ks.submit(TurnInput.from_documents(text, docs, errors), on_added=show)
                    st.session_state[ks.UPLOADER_NONCE_KEY] = nonce + 1
                    st.rerun()
        last_call.render(ks.FLOW)
    with side_col:
        knowledge_widgets.render_side_panel()

with tab_base:
    knowledge_base_tab.render_knowledge_base()

with tab_history:
    knowledge_base_tab.render_interviews()
