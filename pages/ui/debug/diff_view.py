"""The attempt diff of a repaired call: failed raw output beside the accepted one, the JSON paths that
changed, and the local fixes each attempt's text needed."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from core.workbench.diff import AttemptDiff, AttemptText
from pages.ui.shell import words
from pages.ui.shell.render import llm_caption, llm_cell, raw_excerpt

DIFF_CHARS = 50_000
KIND_LABELS = {"added": "追加", "removed": "削除", "changed": "変更"}


def _value(value: Any, present: bool) -> str:
    """A JSON value for a cell ("" where the path does not exist on that side)."""
    return llm_cell(json.dumps(value, ensure_ascii=False)) if present else ""


def _side(column: Any, title: str, text: AttemptText) -> None:
    with column:
        st.markdown(f"**{title}（試行 {text.attempt}）**")
        fixes = words.fixes(text.fixes) if text.fixes else "なし"
        llm_caption(f"ローカル修復: {fixes}")
        st.code(raw_excerpt(text.raw or "（空）", DIFF_CHARS), language=None, wrap_lines=True)
        if text.parse_error:
            llm_caption(f"JSONとして読めません: {text.parse_error}", 300)


def render(diff: AttemptDiff, key: str) -> None:
    """Side-by-side raw outputs, the changed-paths table and the fixes per attempt."""
    with st.container(border=True, key=f"{key}_diff"):
        st.markdown("**試行の比較（修復前と採用された出力）**")
        accepted = "採用された出力" if diff.accepted.ok else "最後の出力（不合格）"
        left, right = st.columns(2)
        _side(left, "失敗した出力", diff.failed)
        _side(right, accepted, diff.accepted)
        if not diff.comparable:
            st.caption("どちらかの出力がJSONとして読めないため、項目ごとの比較はできません。")
        elif not diff.changes:
            st.caption("JSONの内容は同じです（違いは書式だけです）。")
        else:
            st.markdown(f"**変わったJSONパス（{len(diff.changes)} 件）**")
            rows = [
                {
                    "パス": c.path,
                    "変化": KIND_LABELS.get(c.kind, c.kind),
                    "修復前": _value(c.before, c.kind != "added"),
                    "採用後": _value(c.after, c.kind != "removed"),
                }
                for c in diff.changes
            ]
            st.dataframe(rows, hide_index=True, width="stretch", key=f"{key}_diff_paths")
        fixes = [
            {
                "試行": t.attempt,
                "ローカル修復": words.fixes(t.fixes) or "なし",
                "適用した出力の先頭": llm_cell(t.raw, 80),
            }
            for t in diff.attempts
        ]
        st.markdown("**各試行のローカル修復**")
        st.dataframe(fixes, hide_index=True, width="stretch", key=f"{key}_diff_fixes")
