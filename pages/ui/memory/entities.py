"""Memory page, エンティティ table: rename an entity or merge several into one."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from core.flows import memory as browse
from core.flows.memory import EntityEditError, merge_entities, rename_entity
from pages.ui.memory import actions


def render_entity_tools() -> None:
    """A rename form and a merge form under the entity table; outcomes go through the toolbar's notices."""
    options = browse.entity_options(actions.repo())
    if not options:
        return
    ids: list[int] = list(options)

    def label(entity_id: int) -> str:
        return options.get(entity_id, str(entity_id))

    with st.expander("名前の変更・統合", icon=":material/merge:"):
        st.caption(
            "同じ人や物が別々のエンティティになっているときは統合します。元の名前は別名として残ります。"
        )
        rename_col, merge_col = st.columns(2)
        with rename_col.form("memory_entity_rename", border=False):
            target = st.selectbox("名前を変えるエンティティ", ids, format_func=label)
            new_name = st.text_input("新しい名前", placeholder="例: 田中")
            if st.form_submit_button("名前を変更", icon=":material/edit:") and target is not None:
                _run(
                    lambda: (
                        f"名前を「{rename_entity(actions.repo(), int(target), new_name)}」に変更しました。"
                    )
                )
        with merge_col.form("memory_entity_merge", border=False):
            keep = st.selectbox("残すエンティティ", ids, format_func=label)
            others = st.multiselect("統合するエンティティ", ids, format_func=label)
            if st.form_submit_button("統合", icon=":material/merge:") and keep is not None:
                _run(lambda: _merge_notice(int(keep), [int(o) for o in others]))


def _merge_notice(keep: int, others: list[int]) -> str:
    report = merge_entities(actions.repo(), keep, others)
    added = f"別名に追加: {'、'.join(report.aliases_added)}。" if report.aliases_added else ""
    facts = (
        f"統合で同じ内容になった事実 {report.facts_merged} 件は、既にある事実にまとめました。"
        if report.facts_merged
        else ""
    )
    return f"{len(report.merged)} 件のエンティティを統合しました（記憶のつながり {report.links_moved} 件を移動）。{added}{facts}"


def _run(action: Callable[[], str]) -> None:
    try:
        st.session_state["memory_notice"] = action()
    except EntityEditError as exc:
        st.session_state["memory_error"] = str(exc)
    st.rerun()
