"""The 「エクスポート」 tab: JSONL, CSV and OpenTelemetry (OTLP/JSON) downloads, redacted; and clearing the
session's log. Nothing is written or sent until a person presses a button."""

from __future__ import annotations

from collections.abc import Mapping, MutableSequence, Sequence

import streamlit as st

from core.debuglog.events import DebugEvent, events_to_csv, events_to_jsonl
from core.workbench.otel import events_to_otlp, events_to_otlp_protobuf
from core.workbench.otel_send import otlp_endpoint, send_trace
from core.workbench.prices import Price, event_cost
from core.workbench.ratings import Ratings, rating_of


def render(
    events: Sequence[DebugEvent],
    prices: Mapping[str, Price],
    secrets: Sequence[str],
    clearable: MutableSequence[DebugEvent] | None,
    ratings: Ratings | None = None,
) -> None:
    """Download buttons (each file is built only when its button is pressed, from the log as it is now)
    and, for the session's own log, the clear button."""
    log, secret_list, found = list(events), list(secrets), dict(ratings or {})

    def rating(event: DebugEvent) -> Mapping[str, object] | None:
        return rating_of(event, found)

    st.caption(
        "書き出しはボタンを押したときだけ行われ、どこにも送信されません。APIキーなどの秘密情報は伏せ字になります。"
    )
    e1, e2, e3 = st.columns(3)
    e1.download_button(
        "JSONLで保存",
        lambda: events_to_jsonl(log, secret_list, rating=rating),
        file_name="katachi-debug.jsonl",
        mime="application/jsonl",
        icon=":material/download:",
        key="debug_export_jsonl",
        help="すべての項目（送ったメッセージ、生の出力、設定、返答の評価）を含みます。このページで読み込み直せます。",
    )
    e2.download_button(
        "CSVで保存",
        lambda: events_to_csv(log, secret_list, cost=lambda e: event_cost(e, prices).text(), rating=rating),
        file_name="katachi-debug.csv",
        mime="text/csv",
        icon=":material/download:",
        key="debug_export_csv",
        help="1行に1件。メッセージ本文は含みません（JSONLにあります）。費用と評価の列つき。",
    )
    e3.download_button(
        "OpenTelemetry（OTLP/JSON）で保存",
        lambda: events_to_otlp(log, secret_list),
        file_name="katachi-debug.otlp.json",
        mime="application/json",
        icon=":material/download:",
        key="debug_export_otlp",
        help="会話ごとのトレース、呼び出しごとのスパン（GenAI・OpenInferenceの属性つき）。IDは16進数（OTLP/JSONの規定）。",
    )
    e3.download_button(
        "OpenTelemetry（OTLP protobuf）で保存",
        lambda: events_to_otlp_protobuf(log, secret_list),
        file_name="katachi-debug.otlp.pb",
        mime="application/x-protobuf",
        icon=":material/download:",
        key="debug_export_otlp_pb",
        help="Phoenix・Langfuse・OpenTelemetry Collector の /v1/traces にそのまま送れる形式です。",
    )
    endpoint = otlp_endpoint()  # None unless an administrator opted in: then nothing leaves the app
    if endpoint is not None and st.button(
        f"トレースを {endpoint} に送信", icon=":material/send:", key="debug_export_send"
    ):
        try:
            st.success(f"{send_trace(log, secret_list)} 件のスパンを送信しました。")
        except (RuntimeError, ImportError) as exc:
            st.error(f"送信できませんでした: {exc}")
    if clearable is not None:
        st.divider()
        if st.button("このセッションのログを消去", icon=":material/delete:", key="debug_clear"):
            clearable.clear()
            st.session_state.pop("debug_tree_cache", None)
            st.rerun()
