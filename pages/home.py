"""Home: what each flow is for, which model is active, and one-click demos."""

import streamlit as st

from core.settings import provider_label
from pages.ui.shell import state
from pages.ui.shell.nav import FLOW_PAGES, TOOL_PAGES
from pages.ui.shell.render import plain_label

state.ensure_shell("pages/home.py")
st.title("Katachi（形）")
st.write(
    "LLMの応答を、決められた形（スキーマ）に必ず整えてから使う業務用の分析アプリです。"
    "4つのフローが、同じガード（解析・検証・自動修復・記録）を通してLLMを呼び出します。"
)

s = state.settings()
key = "不要（デモ）" if s.provider == "demo" else ("設定済み" if s.has_key else "未設定")
# one element, not three metrics and a notice: the home page is the first paint of every visit, and each element
# (each kind of element the browser has not drawn yet, above all) is more for the browser to load and draw
status = (
    f"**使用中のプロバイダー** {plain_label(provider_label(s.provider))}　"
    f"**モデル** {plain_label(s.model)}　**APIキー** {key}"
)
if s.provider == "demo":
    status += (
        f"\n\n:material/science: 現在は{provider_label('demo')}（オフライン）で動作しています。"
        "APIキーなしで全機能をお試しいただけます。実際のLLMを使うには、サイドバーの「設定を変更」で"
        "プロバイダーを切り替えてください（キーは環境変数か「.streamlit/secrets.toml」で設定します）。"
    )
with st.container(border=True):
    st.markdown(status)

st.subheader("デモを始める")
available = [p for p in FLOW_PAGES if p.exists]
if not available:
    st.caption("利用できるフローはまだありません。")
for row_start in range(0, len(available), 2):  # a row per two cards: the cards of a row are equally tall
    for col, info in zip(st.columns(2), available[row_start : row_start + 2], strict=False):
        with col, st.container(border=True, height="stretch"):
            st.markdown(f"#### {info.title}\n\n{info.summary}")  # one element: each is a message to draw
            if st.button(
                "ワンクリックデモ",
                key=f"home_demo_{info.flow_name}",
                icon=":material/play_arrow:",
                type="primary",
            ):
                st.session_state[info.demo_request_key] = True
                st.switch_page(info.path)
            st.page_link(info.path, label="開く（サンプルなし）", icon=":material/arrow_forward:")

st.subheader("ツール")
for info in (p for p in TOOL_PAGES if p.exists):
    st.page_link(info.path, label=f"{info.title} — {info.summary}", icon=info.icon)
