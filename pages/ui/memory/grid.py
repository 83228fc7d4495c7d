"""Memory browser: the editable unit table's state. While the editor holds unsaved edits it keeps
the rows as they were read (a new frame would reset the editor and drop the edits); a save checks each row's
version, and rows whose units changed since are shown with both states and a choice instead of being saved.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd
import streamlit as st

from core.flows import memory as browse
from core.flows.memory import (
    EditError,
    InvalidEdit,
    StaleEdit,
    StaleUnit,
    apply_edits,
    overwrite_stale,
    stale_comparison,
)
from pages.ui.memory import actions

GRID_KEY = "memory_grid_seen"  # data key: kind -> (filters, frame as read, total) while edits are pending
GRID_NONCE_KEY = "memory_grid_nonce"  # data key: part of the editor's key; a new value starts it afresh
STALE_KEY = "memory_stale_edits"  # data key: edits refused because their units changed since read


def editor_key(kind: str) -> str:
    return f"memory_editor_{kind}_{st.session_state.get(GRID_NONCE_KEY, 0)}"


def grid_frame(kind: str, filters: browse.Filters) -> tuple[pd.DataFrame, int]:
    """The rows to edit: as read before while the editor holds unsaved edits, else read afresh."""
    ss = st.session_state
    seen = ss.setdefault(GRID_KEY, {}).get(kind)
    pending = (ss.get(editor_key(kind)) or {}).get("edited_rows")
    if pending and seen is not None and seen[0] == filters:
        return seen[1], seen[2]
    frame, total = browse.units_frame(actions.repo(), kind, filters)
    ss[GRID_KEY][kind] = (filters, frame, total)
    return frame, total


def _reset_grid(kind: str) -> None:
    st.session_state.setdefault(GRID_KEY, {}).pop(kind, None)
    st.session_state[GRID_NONCE_KEY] = st.session_state.get(GRID_NONCE_KEY, 0) + 1


def _saved_text(saved: dict[int, int]) -> str:
    return (
        f"{len(saved)} 件の記憶を更新しました（版: "
        + "、".join(f"#{u}→v{v}" for u, v in saved.items())
        + "）。"
    )


def save(kind: str, frame: pd.DataFrame, edited: pd.DataFrame) -> None:
    try:
        saved = apply_edits(actions.repo(), actions.collection(), kind, frame, edited)
    except StaleEdit as exc:
        st.session_state[STALE_KEY] = exc.stale  # shown by render_stale, with both states
        if exc.saved:
            st.session_state["memory_notice"] = _saved_text(exc.saved)
    except (InvalidEdit, EditError) as exc:
        st.error(f"保存できませんでした: {exc}")
        return
    except (ValueError, TypeError):
        st.error("保存できませんでした: 数値の列に数値以外が入っています。")
        return
    except Exception:  # noqa: BLE001 - the user sees a message, never a traceback
        st.error("保存中に予期しないエラーが発生しました。表を読み込み直して、もう一度お試しください。")
        return
    else:
        st.session_state["memory_notice"] = _saved_text(saved) if saved else "変更はありませんでした。"
    _reset_grid(kind)
    st.rerun()


def _stale_choice(stale: StaleUnit, overwrite: bool) -> None:
    remaining = [s for s in st.session_state.get(STALE_KEY, []) if s.unit_id != stale.unit_id]
    if overwrite:
        try:
            version = overwrite_stale(actions.repo(), actions.collection(), stale)
        except StaleEdit as exc:  # changed once more while they looked: show the newest state again
            remaining += exc.stale
        except EditError as exc:
            st.session_state["memory_notice"] = f"保存できませんでした: {exc}"
        else:
            st.session_state["memory_notice"] = (
                f"記憶 #{stale.unit_id} をあなたの編集で保存しました（v{version}）。"
            )
    st.session_state[STALE_KEY] = remaining
    st.rerun()


def render_stale(labels: Mapping[str, str]) -> None:
    """Edits refused because their units changed after the table was read: both states, and a choice."""
    for stale in st.session_state.get(STALE_KEY, []):
        with st.container(border=True):
            st.warning(
                f"記憶 #{stale.unit_id} は、表を開いた後に別の操作で変更されました（v{stale.expected_version} → "
                f"v{stale.current_version}）。あなたの編集は保存していません。",
                icon=":material/sync_problem:",
            )
            st.dataframe(stale_comparison(stale, labels), hide_index=True, width="stretch")
            c = st.columns(2)
            if c[0].button(
                "自分の編集で上書き保存", key=f"memory_stale_keep_{stale.unit_id}", icon=":material/save:"
            ):
                _stale_choice(stale, overwrite=True)
            if c[1].button(
                "自分の編集を破棄", key=f"memory_stale_drop_{stale.unit_id}", icon=":material/delete:"
            ):
                _stale_choice(stale, overwrite=False)
