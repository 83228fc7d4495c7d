"""Memory page, 記憶ブラウザ tab: one memory in detail — its text, provenance both ways, its retrieval trace,
the version history with revert, soft delete / restore, and the cascading hard delete."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from core.clock import format_local
from core.flows.memory import (
    EditError,
    extraction_of_episode,
    hard_delete,
    latest_trace,
    restore,
    revert_unit,
    soft_delete,
    unit_provenance,
    unit_summary,
    versions_of,
)
from pages.ui.memory import actions
from pages.ui.memory.search import score_table

KIND_JA = {"EPISODE": "エピソード", "FACT": "事実", "LOOP": "約束", "SUMMARY": "サマリー"}
CHANGE_JA = {
    "create": "作成",
    "edit": "編集",
    "revert": "版を戻す",
    "soft_delete": "削除",
    "restore": "削除の取り消し",
}


def select_unit(unit_id: int) -> None:
    """Show `unit_id` in the detail panel (used as a widget callback)."""
    st.session_state["memory_unit_id"] = unit_id


def _act(action: Callable[[], Any], done: Callable[[Any], str], failed: str) -> None:
    """Run a store action from a button callback; the outcome is shown as a notice after the rerun."""
    try:
        result = action()
    except EditError as exc:  # says why in Japanese (another active fact is the same one, ...)
        st.session_state["memory_error"] = f"{failed}{exc}"
    except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
        st.session_state["memory_error"] = failed
    else:
        st.session_state["memory_notice"] = done(result)


def _revert(unit_id: int) -> None:
    target = int(st.session_state["memory_revert_version"])
    _act(
        lambda: revert_unit(actions.repo(), actions.collection(), unit_id, target),
        lambda v: f"#{unit_id} を v{target} の内容に戻しました（新しい版 v{v}）。",
        f"#{unit_id} を戻せませんでした。",
    )


def _soft_delete(unit_id: int) -> None:
    _act(
        lambda: soft_delete(actions.repo(), actions.collection(), unit_id),
        lambda _: f"#{unit_id} を削除しました（会話には使われません。「削除を取り消す」で戻せます）。",
        f"#{unit_id} を削除できませんでした。",
    )


def _restore(unit_id: int) -> None:
    _act(
        lambda: restore(actions.repo(), actions.collection(), unit_id),
        lambda _: f"#{unit_id} の削除を取り消しました。",
        f"#{unit_id} の削除を取り消せませんでした。",
    )


def _hard_delete(unit_id: int) -> None:
    def done(report: Any) -> str:
        also = [f"#{u}" for u in report.unit_ids if u != unit_id]
        parts = [f"#{unit_id} を完全に削除しました（検索索引・ベクトル・関連付けからも削除）。"]
        if also:
            parts.append(f"この記憶だけが根拠だった {'、'.join(also)} も削除しました。")
        if report.traces:
            parts.append(f"この会話を含む検索トレース {report.traces} 件を削除しました。")
        if report.entities:
            parts.append(f"どこからも参照されなくなったエンティティ {report.entities} 件を削除しました。")
        return "".join(parts)

    _act(lambda: hard_delete(actions.repo(), actions.collection(), unit_id), done, "完全削除に失敗しました。")
    st.session_state["memory_unit_id"] = 0
    st.session_state["memory_confirm_hard"] = False


def _provenance(unit_id: int) -> None:
    prov = unit_provenance(actions.repo(), unit_id)
    cols = st.columns(2)
    with cols[0]:
        st.markdown("**出どころ（根拠のエピソード）**")
        for src in prov.sources:
            st.button(f"→ エピソード #{src}", key=f"memory_src_{src}", on_click=select_unit, args=(src,))
        if not prov.sources:
            st.caption("なし")
    with cols[1]:
        st.markdown("**この記憶から生まれたもの**")
        for d in prov.derived:
            derived = unit_summary(actions.repo(), d)
            kind_ja = KIND_JA.get(derived.kind, "") if derived else ""
            st.button(f"→ {kind_ja} #{d}", key=f"memory_der_{d}", on_click=select_unit, args=(d,))
        if not prov.derived:
            st.caption("なし")


def _episode_trace(unit_id: int) -> None:
    trace = latest_trace(actions.repo(), unit_id)
    if trace is None:
        return
    with st.expander(f"この会話の検索トレース（トレース #{trace.id}）", icon=":material/manage_search:"):
        t = trace.trace  # the stored trace JSON (RetrievalResult.trace())
        st.text(f"Q1: {t['q1']}\nQ2: {t['q2']}")
        pack = t["pack"]
        st.caption(
            f"注入: 記憶 {pack['memories'] or 'なし'}・事実 {[f['unit_id'] for f in pack['facts']] or 'なし'}・"
            f"約束 {pack['loops'] or 'なし'}・絆サマリー {pack['bond_summary'] or 'なし'}"
        )
        if t["candidates"]:
            st.dataframe(score_table(t["candidates"]), hide_index=True, width="stretch")
        extraction = extraction_of_episode(actions.repo(), unit_id)
        if extraction:
            st.markdown("**抽出結果**")
            st.json(extraction, expanded=False)


def _versions(unit_id: int, state: str) -> None:
    versions = versions_of(actions.repo(), unit_id)
    st.dataframe(
        [
            {
                "版": v.version,
                "日時": format_local(v.changed_at),
                "操作": CHANGE_JA.get(v.change_kind, v.change_kind),
                "メモ": v.note,
            }
            for v in versions
        ],
        hide_index=True,
        width="stretch",
    )
    c = st.columns(4)
    c[0].selectbox("戻す版", [v.version for v in versions], key="memory_revert_version")
    c[1].button(
        "この版に戻す", key="memory_revert", icon=":material/undo:", on_click=_revert, args=(unit_id,)
    )
    if state == "active":
        c[2].button(
            "削除（元に戻せる）",
            key="memory_soft_delete",
            icon=":material/delete:",
            on_click=_soft_delete,
            args=(unit_id,),
        )
    else:
        c[2].button(
            "削除を取り消す",
            key="memory_restore",
            icon=":material/restore:",
            on_click=_restore,
            args=(unit_id,),
        )
    confirm = c[3].checkbox(
        "完全削除を確認",
        key="memory_confirm_hard",
        help="元に戻せません。この記憶だけから生まれた事実・約束・サマリー、検索トレースも削除されます。",
    )
    c[3].button(
        "完全に削除",
        key="memory_hard_delete",
        disabled=not confirm,
        icon=":material/delete_forever:",
        on_click=_hard_delete,
        args=(unit_id,),
    )


def render_detail() -> None:
    st.markdown("#### 記憶の詳細・版の履歴・出どころ")
    # One source of truth: a data key set by the table's 「詳細を見る記憶」 and the provenance buttons.
    unit_id = int(st.session_state.get("memory_unit_id") or 0)
    if not unit_id:
        st.caption(
            "表の上の「詳細を見る記憶」で記憶を選ぶと、版の履歴・削除・出どころ（根拠のエピソードと、"
            "そこから生まれた記憶）を表示します。"
        )
        return
    info = unit_summary(actions.repo(), int(unit_id))
    if info is None:
        st.warning(f"記憶 #{unit_id} は見つかりません（完全削除された可能性があります）。")
        return
    state_ja = "有効" if info.state == "active" else "削除済み"
    st.markdown(f"**#{info.id} {KIND_JA.get(info.kind, info.kind)}**（{info.occurred_at}・{state_ja}）")
    st.text(info.text)
    _provenance(int(unit_id))
    if info.kind == "EPISODE":
        _episode_trace(int(unit_id))
    _versions(int(unit_id), info.state)
