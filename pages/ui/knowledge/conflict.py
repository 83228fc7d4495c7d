"""Knowledge page: an entry someone else saved after it was opened. Nothing was written;
both versions are shown side by side and the person chooses: save theirs over it, or reopen the newest."""

from __future__ import annotations

from typing import Any, Literal, cast

import pandas as pd
import streamlit as st

from core.clock import format_local
from core.flows import knowledge as kb
from core.flows import knowledge as kf
from pages.ui.shell.render import plain_label

CONFLICTS_KEY = "knowledge_conflicts"  # data key: scope (which editor) -> the refused save
Choice = Literal["overwrite", "reopen"]


def remember(scope: str, error: kb.StaleEntryError) -> None:
    """Keep a refused save for `scope` until the person chooses."""
    st.session_state.setdefault(CONFLICTS_KEY, {})[scope] = {
        "entry_id": error.entry_id,
        "current": error.current,
        "mine": error.mine,
    }


def pending(scope: str) -> dict[str, Any] | None:
    return cast("dict[str, Any] | None", st.session_state.get(CONFLICTS_KEY, {}).get(scope))


def clear(scope: str) -> None:
    st.session_state.get(CONFLICTS_KEY, {}).pop(scope, None)


def comparison(current: dict[str, Any], mine: dict[str, str]) -> pd.DataFrame:
    """Six rows: the field, what the person wrote, what is stored now, and whether they differ."""
    rows = [
        {
            "項目": kf.KNOWLEDGE_FIELD_LABELS[key],
            "あなたの編集": mine.get(key, ""),
            f"保存済みの第{current['version']}版": current.get(key, ""),
            "違い": "●" if mine.get(key, "") != current.get(key, "") else "",
        }
        for key in kf.KNOWLEDGE_FIELDS
    ]
    return pd.DataFrame(rows)


def render(scope: str) -> Choice | None:
    """The refused save of `scope`, if any, with its two buttons; returns the button pressed."""
    conflict = pending(scope)
    if conflict is None:
        return None
    current = conflict["current"]
    when = format_local(current["updated_at"]) if current.get("updated_at") else ""
    st.warning(
        f"保存できませんでした。このナレッジは、開いた後に {plain_label(current['updated_by'])} さんが第{current['version']}版を"
        f"保存しています（{when}）。上書きはしていません。両方の内容を見比べて選んでください。",
        icon=":material/sync_problem:",
    )
    st.dataframe(comparison(current, conflict["mine"]), hide_index=True, width="stretch")
    cols = st.columns(2)
    if cols[0].button(
        f"自分の編集で上書き保存（第{current['version'] + 1}版）",
        key=f"{scope}_overwrite",
        icon=":material/save:",
    ):
        return "overwrite"
    if cols[1].button(
        "最新の版を開き直す（自分の編集は破棄）", key=f"{scope}_reopen", icon=":material/refresh:"
    ):
        return "reopen"
    return None
