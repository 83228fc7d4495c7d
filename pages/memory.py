"""Companion memory (spec 03): persona chat, memory browser, retrieval test."""

import streamlit as st

from pages.ui.memory import actions
from pages.ui.memory.browser import render_browser
from pages.ui.memory.chat import render_chat
from pages.ui.memory.search import render_search
from pages.ui.memory.status import render_failures
from pages.ui.shell import chat_scroll, state

state.ensure_shell("pages/memory.py")
st.title("コンパニオン記憶")
st.caption(
    "ペルソナ「灯（あかり）」と会話すると、やり取りがエピソードとして記憶され、人物・事実・約束が抽出されます。"
    "次の返答では、LLMを使わない検索で見つけた記憶が添えられます。"
)
state.demo_badge()

if st.session_state.pop("memory_demo_request", False):
    actions.load_demo()

actions.reconcile_on_start()
render_failures()
actions.render_toolbar()
chat_tab, browser_tab, search_tab = st.tabs(["会話", "記憶ブラウザ", "検索テスト"], key="memory_tabs")
with chat_tab:
    render_chat()
with browser_tab:
    render_browser()
with search_tab:
    render_search()
chat_scroll.follow("memory")
