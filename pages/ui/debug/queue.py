"""Debug page: the background-job queue for an admin (or the one local person): which engine runs jobs,
counts per status, how long the oldest job has waited, and the latest failures with their messages. Read
from the database on PostgreSQL (every replica shows the same), from the process on the embedded default."""

from __future__ import annotations

import streamlit as st

from core.clock import format_local
from pages.ui.shell import state
from pages.ui.shell.render import llm_label

STATUS_LABELS = {"queued": "待機中", "running": "実行中", "done": "完了", "failed": "失敗"}
ENGINE_LABELS = {
    "in-process": "このプロセス内のワーカー",
    "procrastinate (PostgreSQL)": "PostgreSQL のジョブキュー（procrastinate）",
}


def render() -> None:
    """A collapsed expander; nothing for people who are not admins when sign-in is on."""
    person = state.person()
    if not (person.is_admin or person.is_local):
        return
    with st.expander("バックグラウンド処理のキュー", icon=":material/queue:"):
        try:
            summary = state.services().queue_summary()
        except Exception:  # noqa: BLE001 - the debug page works without it; say why it is missing
            st.caption("キューを読み込めませんでした（データベースに接続できません）。")
            return
        st.caption(f"ジョブエンジン: {ENGINE_LABELS.get(summary['engine'], summary['engine'])}")
        columns = st.columns(len(STATUS_LABELS) + 1)
        for column, (status, label) in zip(columns, STATUS_LABELS.items(), strict=False):
            column.metric(label, summary["counts"].get(status, 0))
        oldest = summary["oldest_waiting_s"]
        columns[-1].metric("最古の待機", "—" if oldest is None else f"{oldest:.0f} 秒")
        failures = summary["failures"]
        if not failures:
            st.caption("最近の失敗はありません。")
        for failure in failures:
            when = format_local(failure["finished_at"]) if failure.get("finished_at") else ""
            st.markdown(
                f"- `{failure['id']}` {llm_label(failure['label'], 80)} {when}: {llm_label(failure['message'], 300)}"
            )
