"""Memory page, top: episodes whose background work failed (or never ran: a full queue), read from the store,
with 再試行 (a background job) until a later retry succeeds."""

from __future__ import annotations

import streamlit as st

from core.flows.memory import defer_memory_retry, unfinished_episodes
from pages.ui.memory import actions
from pages.ui.shell import background as bg
from pages.ui.shell import state
from pages.ui.shell.error_card import background_failure

SHOWN = 5  # lines listed; the rest are counted


def render_failures() -> None:
    """The warning and its 再試行 button; nothing when every episode is done (or its job is running)."""
    running = bg.busy(actions.job_key())
    unfinished = [e for e in unfinished_episodes(actions.repo()) if e.state == "failed" or not running]
    if not unfinished:
        return
    lines = [f"- {e.describe()}" for e in unfinished[:SHOWN]]
    if len(unfinished) > SHOWN:
        lines.append(f"- ほか {len(unfinished) - SHOWN} 件")
    if background_failure(
        f"記憶の整理（内省・抽出）が済んでいない会話が {len(unfinished)} 件あります。"
        "会話そのものは保存済みです。\n\n" + "\n".join(lines),
        key="memory_retry_background",
        disabled=running or not any(e.retryable for e in unfinished),
        help="失敗したエピソードの内省・抽出を、バックグラウンドでやり直します。",
    ):
        job = defer_memory_retry(
            state.jobs(), actions.repo(), actions.collection(), state.client(), bg.job_sink()
        )
        if job is None:
            st.session_state["memory_error"] = (
                "処理待ちが多いため、再試行を受け付けられませんでした。しばらくしてからもう一度お試しください。"
            )
        st.rerun()
