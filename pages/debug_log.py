"""Debug log: every LLM call of this session as a trace (conversation → turn → call → attempts), a call
table with filters, tokens and cost, and exports. `?flow=&conversation=&turn=&call=` opens a conversation."""

import streamlit as st

from pages.ui.debug import calls as debug_calls
from pages.ui.debug import costs as debug_costs
from pages.ui.debug import export as debug_export
from pages.ui.debug import queue as debug_queue
from pages.ui.debug import replay as debug_replay
from pages.ui.debug import source as debug_source
from pages.ui.debug import trace_tree as debug_trace
from pages.ui.shell import state

TABS = ["トレース", "呼び出し一覧", "コストと傾向", "エクスポート", "リプレイ"]
TAB_KEY = "debug_tab"

state.ensure_shell("pages/debug_log.py")
st.title("デバッグログ")
st.caption(
    "このセッションでのLLM呼び出しを記録しています。記録はブラウザのセッション内だけに保持され、"
    "ダウンロードボタンを押したときだけ書き出されます。APIキーなどの秘密情報は伏せ字になります。"
)

search_label, knowledge_label = state.embedder_label(), state.knowledge_embedder_label()
st.caption(
    f":material/manage_search: 検索（記憶・取扱説明書・ナレッジ）の埋め込み: {search_label}"
    if search_label == knowledge_label
    else f":material/manage_search: 検索の埋め込み: 記憶・取扱説明書は{search_label}、ナレッジは{knowledge_label}"
)

debug_source.import_box()
events, imported = debug_source.events()
if not st.session_state.get("app_debug"):
    st.info(
        "記録がオフのため、新しい呼び出しは記録されません。サイドバーの「LLM呼び出しを記録する（デバッグ）」を"
        "オンにしてから各ページを操作すると、ここに表示されます。",
        icon=":material/info:",
    )
if not events:
    st.write("まだ記録がありません。ホームからデモを実行するか、各ページでLLMを呼び出してください。")
    debug_queue.render()
    st.stop()

tree = debug_source.tree(events)
prices = debug_source.prices()
ratings = debug_source.ratings(imported)
link = debug_trace.link_from_query(st.query_params.to_dict())
if link.wanted and st.session_state.get(debug_trace.LINK_SEEN) != link:
    st.session_state[TAB_KEY] = TABS[0]
if not debug_trace.apply_link(tree, link):
    st.warning(
        "リンク先の会話はこのログにありません（記録がオフだったか、ログを消去したか、古い記録が"
        "上限で削除された可能性があります）。",
        icon=":material/link_off:",
    )

trace_tab, calls_tab, cost_tab, export_tab, replay_tab = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
if trace_tab.open is not False:
    with trace_tab:
        debug_trace.render(tree, events, prices, ratings)
if calls_tab.open is not False:
    with calls_tab:
        debug_calls.render(tree, events, prices, ratings)
if cost_tab.open is not False:
    with cost_tab:
        debug_costs.render(tree, events, prices)
if export_tab.open is not False:
    with export_tab:
        debug_export.render(events, prices, state.settings().secrets, None if imported else events, ratings)
if replay_tab.open is not False:
    with replay_tab:
        debug_replay.render(events)
debug_queue.render()  # below the log: the process's background jobs, not this session's calls
