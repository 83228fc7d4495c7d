"""Which log the debug page shows (the session's, or an imported JSONL export), the prices, and the
conversation tree of that log, built once per log state (cached in session_state)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from core.debuglog.events import DebugEvent, ListSink
from core.documents.uploads import MAX_UPLOAD_BYTES, MAX_UPLOAD_MB, UPLOAD_TOO_LARGE, upload_limit_caption
from core.flows.feedback import FeedbackStoreError, feedback_rows
from core.services import StoreUnavailable
from core.workbench.log_import import DebugImport, read_debug_jsonl
from core.workbench.prices import Price, PriceFileError, load_price_table, prices_path, total
from core.workbench.ratings import Ratings, ratings_from_jsonl, ratings_from_rows
from core.workbench.report import calls_frame
from core.workbench.tree import ConversationNode, build_tree
from pages.ui.shell import state
from pages.ui.shell.render import literal_md, plain_label

IMPORTED = "debug_imported"
TREE_CACHE = "debug_tree_cache"
UPLOAD_SEEN = "debug_import_seen"
IMPORT_ERROR = "debug_import_error"
IMPORTED_RATINGS = "debug_imported_ratings"
JOB_CALLS_SEEN = "debug_job_calls_seen"  # the newest stored job call already added to the session's log


def read_upload(upload: Any) -> DebugImport:
    """An uploaded JSONL checked against the event schema (core.workbench.log_import) and then read as the page reads
    it (trace tree, costs); every problem is a Japanese message, never an exception."""
    if upload.size > MAX_UPLOAD_BYTES:
        return DebugImport(errors=[UPLOAD_TOO_LARGE])
    checked = read_debug_jsonl(upload.getvalue())
    if checked.errors:
        return checked
    try:
        calls_frame(checked.events, {})
        for conversation in build_tree(checked.events):
            total(conversation.all_calls(), {})
    except Exception as exc:  # noqa: BLE001 - a file the checks let through must still not break the page
        return DebugImport(errors=[f"ログを表示用に読み取れませんでした（{type(exc).__name__}）。"])
    return checked


def show_import_errors(errors: list[str]) -> None:
    st.error(
        "ログを読み込めませんでした。次の点を確認してください。\n\n"
        + "\n".join(f"- {literal_md(e)}" for e in errors),
        icon=":material/error:",
    )


def upload_caption() -> None:
    st.caption(upload_limit_caption(MAX_UPLOAD_MB, "このページからエクスポートしたJSONL"))


def _take(upload: Any) -> None:
    """Read a newly uploaded file into IMPORTED (or IMPORT_ERROR); a removed file clears both marks."""
    if upload is None:
        st.session_state.pop(UPLOAD_SEEN, None)
        st.session_state.pop(IMPORT_ERROR, None)
        return
    if st.session_state.get(UPLOAD_SEEN) == upload.file_id:
        return
    st.session_state[UPLOAD_SEEN] = upload.file_id
    checked = read_upload(upload)
    if checked.errors:
        st.session_state[IMPORT_ERROR] = checked.errors
        return
    st.session_state[IMPORTED] = (upload.name, checked.events)
    st.session_state[IMPORTED_RATINGS] = ratings_from_jsonl(upload.getvalue().decode("utf-8-sig"))
    st.session_state.pop(IMPORT_ERROR, None)


def import_box() -> None:
    """The 「エクスポートしたログを読み込む」 expander: an uploaded JSONL replaces the shown log (read once
    per uploaded file, not on every rerun)."""
    with st.expander("エクスポートしたログを読み込む（JSONL）"):
        _take(st.file_uploader("katachi-debug.jsonl", type=["jsonl"], key="debug_import_file"))
        upload_caption()
        if st.session_state.get(IMPORT_ERROR):
            show_import_errors(list(st.session_state[IMPORT_ERROR]))


def add_job_calls() -> None:
    """Add to the session's log the model calls background jobs made for this person since the last look (a
    worker process or another replica ran them; core.store.job_calls keeps them under the person)."""
    try:
        found = state.services().job_calls(state.person().id, st.session_state.get(JOB_CALLS_SEEN, 0))
    except StoreUnavailable:
        st.warning(
            "バックグラウンド処理のLLM呼び出しを読み込めませんでした（データベースに接続できません）。",
            icon=":material/error:",
        )
        return
    if found:
        log = ListSink(st.session_state["debug_logs"], secrets=state.settings().secrets)
        for _row_id, event in found:
            log.emit(event)
        st.session_state[JOB_CALLS_SEEN] = found[-1][0]


def events() -> tuple[list[DebugEvent], bool]:
    """The events to show and whether they come from an imported file (with its notice and a way back)."""
    imported = st.session_state.get(IMPORTED)
    if not imported:
        add_job_calls()
        return st.session_state["debug_logs"], False
    st.info(
        f"読み込んだログ「{plain_label(imported[0])}」（{len(imported[1])} 件）を表示しています。",
        icon=":material/upload_file:",
    )
    if st.button("このセッションのログに戻る", key="debug_back_to_session"):
        del st.session_state[IMPORTED]
        st.rerun()
    return imported[1], True


def prices() -> Mapping[str, Price]:
    """The price file's prices; a broken file is a warning and every cost reads 「価格未設定」."""
    try:
        found, problems = load_price_table()
    except PriceFileError as exc:
        st.warning(f"{exc} 費用はすべて「価格未設定」と表示します。", icon=":material/warning:")
        return {}
    for problem in problems:
        st.warning(problem, icon=":material/warning:")
    return found


def price_file_caption() -> None:
    st.caption(
        f"価格は {plain_label(prices_path().name)}（100万トークンあたり）から計算しています。"
        "環境変数 KATACHI_PRICES で別のファイルを指定できます。価格のないモデルは「価格未設定」と表示します。"
    )


def _fingerprint(log: Sequence[DebugEvent]) -> tuple[Any, ...]:
    if not log:
        return (id(log), 0)
    return (id(log), len(log), id(log[0]), id(log[-1]), log[-1].ts)


def tree(log: Sequence[DebugEvent]) -> list[ConversationNode]:
    """build_tree(log), rebuilt only when the log changed since the last run of this session."""
    fingerprint = _fingerprint(log)
    cached = st.session_state.get(TREE_CACHE)
    if cached is not None and cached[0] == fingerprint:
        return list(cached[1])
    built = build_tree(log)
    st.session_state[TREE_CACHE] = (fingerprint, built)
    return built


def ratings(imported: bool) -> Ratings:
    """Ratings of replies: those the imported file carries, or the signed-in person's
    stored ratings for the session's own log (a database failure shows a notice and no ratings)."""
    if imported:
        found: Ratings = st.session_state.get(IMPORTED_RATINGS) or {}
        return found
    try:
        return ratings_from_rows(feedback_rows(state.feedback_repo()))
    except FeedbackStoreError:
        st.warning(
            "返答の評価を読み込めませんでした（データベースに接続できません）。", icon=":material/error:"
        )
        return {}
