"""Debug log: every LLM call of this session — what was sent, what came back, how the guard repaired it."""

import streamlit as st

from core.debug_report import attempts_per_flow, call_detail, calls_frame, filter_calls, latency_per_flow
from core.debuglog import events_from_jsonl, events_to_csv, events_to_jsonl
from pages.ui import debug_replay, debug_rerun, state
from pages.ui.render import llm_label, raw_excerpt

DEBUG_CHARS = 200_000  # of one message or raw output on screen; the JSONL export has everything

state.ensure_shell("pages/debug_log.py")
st.title("デバッグログ")
st.caption(
    "このセッションでのLLM呼び出しを記録しています。記録はブラウザのセッション内だけに保持され、"
    "ダウンロードボタンを押したときだけ書き出されます。APIキーなどの秘密情報は伏せ字になります。"
)

secrets = state.settings().secrets
with st.expander("エクスポートしたログを読み込む（JSONL）"):
    upload = st.file_uploader("katachi-debug.jsonl", type=["jsonl"], key="debug_import_file")
    if upload is not None:
        try:
            st.session_state["debug_imported"] = (
                upload.name,
                events_from_jsonl(upload.getvalue().decode("utf-8")),
            )
        except (UnicodeDecodeError, ValueError, TypeError) as exc:
            st.error(f"ログを読み込めませんでした（JSONLの形式ではありません）: {type(exc).__name__}")
imported = st.session_state.get("debug_imported")
if imported:
    st.info(
        f"読み込んだログ「{imported[0]}」（{len(imported[1])} 件）を表示しています。",
        icon=":material/upload_file:",
    )
    if st.button("このセッションのログに戻る", key="debug_back_to_session"):
        del st.session_state["debug_imported"]
        st.rerun()
events = imported[1] if imported else st.session_state["debug_logs"]
if not st.session_state.get("app_debug"):
    st.info(
        "DEBUGがオフのため、新しい呼び出しは記録されません。サイドバーの「DEBUG（LLM呼び出しを記録）」を"
        "オンにしてから各ページを操作すると、ここに表示されます。",
        icon=":material/info:",
    )
if not events:
    st.write("まだ記録がありません。ホームからデモを実行するか、各ページでLLMを呼び出してください。")
    st.stop()

frame = calls_frame(events)
with st.container(border=True):
    c1, c2, c3 = st.columns(3)
    flows = c1.multiselect(
        "フロー", sorted(frame["フロー"].unique()), key="debug_filter_flow", placeholder="すべて"
    )
    results = c2.multiselect(
        "結果", sorted(frame["結果"].unique()), key="debug_filter_result", placeholder="すべて"
    )
    providers = c3.multiselect(
        "プロバイダー",
        sorted(frame["プロバイダー"].unique()),
        key="debug_filter_provider",
        placeholder="すべて",
    )
shown = filter_calls(frame, flows, results, providers)

m1, m2, m3, m4 = st.columns(4)
m1.metric("呼び出し", len(shown))
m2.metric("エラー", int((shown["結果"] != "ok").sum()))
m3.metric("ローカル修復", int((shown["修復"] != "").sum()))
m4.metric("中央値レイテンシ", f"{shown['レイテンシ(ms)'].median():.0f} ms" if len(shown) else "-")

st.subheader("呼び出し一覧")
st.caption("表の行を選ぶか、下の一覧から選ぶと、その呼び出しの詳細を表示します。")
table = st.dataframe(
    shown.drop(columns=["call_id", "index"]),
    hide_index=True,
    width="stretch",
    key="debug_calls_table",
    on_select="rerun",
    selection_mode="single-row",
)
if shown.empty:
    st.stop()
labels = {
    int(
        r["index"]
    ): f"#{int(r['index'])} {r['時刻']} {r['フロー']} / {r['ステップ']} 試行{r['試行']} → {r['結果']}"
    for _, r in shown.iterrows()
}
rows = table.selection.rows if table is not None else []
table_pick = int(shown.iloc[rows[0]]["index"]) if rows else None
if table_pick != st.session_state.get("debug_table_seen"):  # a new row selection moves the selectbox
    st.session_state["debug_table_seen"] = table_pick
    if table_pick is not None:
        st.session_state["debug_selected"] = table_pick
if st.session_state.get("debug_selected") not in labels:
    st.session_state.pop("debug_selected", None)
chosen = st.selectbox(
    "詳細を見る呼び出し", list(labels)[::-1], format_func=labels.__getitem__, key="debug_selected"
)
if chosen is not None:
    detail = call_detail(events, chosen)
    event = detail["event"]
    st.subheader(
        f"詳細: {llm_label(event.flow or '-')} / {llm_label(event.step or '-')}（試行 {event.attempt}）"
    )
    info = st.columns(4)
    info[0].write(f"**スキーマ**: {llm_label(event.schema_name or '（テキスト）')}")
    info[1].write(f"**結果**: {'ok' if event.ok else llm_label(event.error_type)}")
    info[2].write(f"**レイテンシ**: {event.latency_ms or 0:.0f} ms")
    info[3].write(
        f"**トークン**: {event.usage.get('input_tokens', 0)} / {event.usage.get('output_tokens', 0)}"
    )
    if event.fixes:
        st.write("**ローカル修復**: " + llm_label("、".join(event.fixes), 2000))
    if event.errors:
        st.write("**エラー**")
        st.code("\n".join(event.errors), language=None)
    if event.notes:
        st.write("**メモ**: " + llm_label(" / ".join(event.notes), 4000))
    with st.expander(f"送信したメッセージ（{len(event.messages)} 件）", expanded=False):
        for i, message in enumerate(event.messages, 1):
            st.markdown(f"**{i}. {llm_label(message['role'])}**")
            st.code(raw_excerpt(message["content"], DEBUG_CHARS), language=None, wrap_lines=True)
    st.markdown("**返ってきた生の出力**")
    st.code(
        raw_excerpt(event.raw or "（なし）", DEBUG_CHARS),
        language="json" if event.schema_name else None,
        wrap_lines=True,
    )
    for repair in detail["repairs"]:
        with st.expander(f"修復プロンプト（試行 {repair.attempt} の後）"):
            st.code(repair.messages[-1]["content"] if repair.messages else "", language=None, wrap_lines=True)
    result = detail["result"]
    if result is not None and result.parsed is not None:
        with st.expander("検証を通ったデータ"):
            st.json(result.parsed)

st.subheader("フローごとの傾向")
g1, g2 = st.columns(2)
with g1:
    st.caption("レイテンシ（中央値, ms）")
    latency = latency_per_flow(shown)
    if not latency.empty:
        st.bar_chart(latency, x="フロー", y="中央値(ms)")
with g2:
    st.caption("ガード付き呼び出し1回あたりの平均試行回数")
    attempts = attempts_per_flow(events)
    if not attempts.empty:
        st.bar_chart(attempts, x="フロー", y="平均試行回数")
        st.dataframe(attempts, hide_index=True)

st.subheader("エクスポートと消去")
e1, e2, e3 = st.columns(3)
e1.download_button(
    "JSONLで保存",
    events_to_jsonl(events, secrets),
    file_name="katachi-debug.jsonl",
    mime="application/jsonl",
    icon=":material/download:",
    key="debug_export_jsonl",
)
e2.download_button(
    "CSVで保存",
    events_to_csv(events, secrets),
    file_name="katachi-debug.csv",
    mime="text/csv",
    icon=":material/download:",
    key="debug_export_csv",
)
if not imported and e3.button("ログを消去", icon=":material/delete:", key="debug_clear"):
    events.clear()
    st.rerun()

# --- issue #9 items 7 and 8 (helper D): re-run / compare and replay. The coordinator moves these two calls
# --- into the new debug-page layout when merging; tests find the widgets by their keys (debug_rerun_*,
# --- debug_replay_*), not by position.
if chosen is not None:
    st.subheader("再実行と比較（プレイグラウンド）")
    debug_rerun.render(call_detail(events, chosen)["event"], events)
st.subheader("会話のリプレイ")
debug_replay.render(events)
