"""Knowledge interview page: session state and actions (send a turn, retry, resume, new interview, demo).

Spec 00 セッション状態とUI更新: the user's message goes into `chat["knowledge"]` before the call; on
success the assistant turn is appended and `knowledge_outputs` replaced; on failure the raw output and
the error type are appended. Every turn is also written to the store (spec 01 §7.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from core.attachments import AttachmentError, ExtractedDocument, extract_text_from_document
from core.debuglog import redact_text
from core.flows import knowledge as kf
from core.flows import knowledge_demo as kd
from core.prompts import load_prompt
from core.store import knowledge as store
from core.store import knowledge_base as kbase
from pages.ui import state

INTERVIEW_KEY = "knowledge_interview_id"
LAST_CALL_KEY = "knowledge_last_call"
DRAFT_VERSION_KEY = "knowledge_draft_version"
SAVED_ENTRY_KEY = "knowledge_saved_entry_id"
DEMO_STEP_KEY = "knowledge_demo_step"
UPLOADER_NONCE_KEY = "knowledge_uploader_nonce"
QUERY_PARAM = "interview"


def init() -> None:
    ss = st.session_state
    for key, value in (
        (INTERVIEW_KEY, None),
        (LAST_CALL_KEY, None),
        (DRAFT_VERSION_KEY, 0),
        (SAVED_ENTRY_KEY, None),
        (DEMO_STEP_KEY, None),
        (UPLOADER_NONCE_KEY, 0),
    ):
        ss.setdefault(key, value)


def chat() -> list[dict[str, Any]]:
    return st.session_state.chat["knowledge"]


def last_turn() -> dict[str, Any] | None:
    """The turn JSON of the last successful assistant item."""
    return next((m["turn"] for m in reversed(chat()) if m["role"] == "assistant"), None)


def read_attachments(files: list[Any]) -> tuple[list[ExtractedDocument], list[str]]:
    """Extract every uploaded file in memory; returns (documents, Japanese error messages)."""
    docs, errors = [], []
    for f in files:
        try:
            docs.append(extract_text_from_document(f.name, f.getvalue()))
        except AttachmentError as exc:
            errors.append(exc.message)
    return docs, errors


def _user_turn_no() -> int:
    return sum(1 for m in chat() if m["role"] == "user")


def _ensure_interview(title: str) -> str | None:
    ss = st.session_state
    if ss[INTERVIEW_KEY] is None:
        try:
            client = state.client()
            ss[INTERVIEW_KEY] = store.create_interview(
                state.engine(), title=title[:40], provider=client.provider, model=client.model
            )
        except Exception:  # noqa: BLE001 - the interview still works without the store
            st.error(
                "聞き取りの記録を開始できませんでした（データベースに書き込めません）。会話は続けられます。"
            )
            return None
        st.query_params[QUERY_PARAM] = ss[INTERVIEW_KEY]
    return ss[INTERVIEW_KEY]


def _call(user_item: dict[str, Any], history: list[dict[str, Any]]) -> None:
    """Call the model for `user_item` (already in the chat), append the outcome, record the turn."""
    ss = st.session_state
    client = state.client()
    try:
        result = kf.call_llm(
            user_item["text"],
            user_item.get("file_texts") or [],
            load_prompt(kf.SYSTEM_PROMPT_NAME),
            history,
            client,
            kf.turn_schema(),
            kf.entry_schema(),
            sink=state.sink(),
        )
    except Exception as exc:  # noqa: BLE001 - the guard returns results; this is a bug, shown without a traceback
        result = {
            "ok": False,
            "raw": "",
            "error": redact_text(f"{type(exc).__name__}: {exc}"[:500], state.settings().secrets),
            "error_type": "unexpected_error",
            "messages": [],
            "attempts": [],
            "message": "予期しないエラーが発生しました。",
        }
    ss[LAST_CALL_KEY] = {"messages": result["messages"], "attempts": result["attempts"], "ok": result["ok"]}
    if result["ok"]:
        chat().append(
            {
                "role": "assistant",
                "content": kf.turn_json_text(result),
                "assistant_message": result["assistant_message"],
                "turn": kf.turn_json(result),
            }
        )
        ss.knowledge_outputs = result["knowledge"]
        ss[DRAFT_VERSION_KEY] += 1
    else:
        chat().append(
            {
                "role": "error",
                "content": result["raw"],
                "error_type": result["error_type"],
                "error": result["error"],
                "message": result.get("message", ""),
            }
        )
    interview_id = ss[INTERVIEW_KEY]
    if interview_id:
        try:
            store.record_turn(
                state.engine(),
                interview_id,
                turn_no=user_item["turn_no"],
                user_text=user_item["text"],
                attachments=user_item.get("attachments", []),
                result=result,
                provider=client.provider,
                model=client.model,
            )
        except Exception:  # noqa: BLE001
            st.error("このターンをデータベースに記録できませんでした。会話は続けられます。")


def submit(
    text: str,
    docs: list[ExtractedDocument],
    attachment_errors: Sequence[str] = (),
    *,
    on_added: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Append the user's message (spec 00: before the call), then call the model.

    `on_added` is called with the new user item before the call (the page shows it at once).
    """
    text = (text or "").strip()
    if not text and not docs:
        return
    file_texts = [d.text for d in docs]
    history = list(chat())
    user_item = {
        "role": "user",
        "content": kf.build_user_payload(text, file_texts),
        "text": text,
        "attachments": [d.summary() for d in docs],
        "attachment_errors": list(attachment_errors),
        "file_texts": file_texts,  # session only, never stored
        "turn_no": _user_turn_no() + 1,
    }
    chat().append(user_item)
    if on_added is not None:
        on_added(user_item)
    _ensure_interview(text or (docs[0].filename if docs else ""))
    _call(user_item, history)


def needs_retry() -> bool:
    """The chat ends in a failed turn, or in a user message whose call never finished (an interrupted run)."""
    items = chat()
    return bool(items) and items[-1]["role"] in ("error", "user")


def retry() -> None:
    """再試行: drop the trailing error item (if any) and call again for the same user message."""
    items = chat()
    if not needs_retry():
        return
    if items[-1]["role"] == "error":
        items.pop()
    index = max(i for i, m in enumerate(items) if m["role"] == "user")
    _call(items[index], items[:index])


def reset() -> None:
    """Start a new interview (the old one stays in the store)."""
    ss = st.session_state
    ss.chat["knowledge"] = []
    ss.knowledge_outputs = []
    ss[INTERVIEW_KEY] = None
    ss[LAST_CALL_KEY] = None
    ss[SAVED_ENTRY_KEY] = None
    ss[DEMO_STEP_KEY] = None
    ss[DRAFT_VERSION_KEY] += 1
    st.query_params.pop(QUERY_PARAM, None)


def start_demo() -> None:
    """One-click demo: a new interview with the sample contract attached and a first scripted message."""
    reset()
    data = (kd.SAMPLE_DIR / kd.DEMO_SAMPLE).read_bytes()
    doc = extract_text_from_document(kd.DEMO_SAMPLE, data)
    submit(kd.DEMO_OPENING, [doc])
    st.session_state[DEMO_STEP_KEY] = 0


def next_demo_answer() -> str | None:
    step = st.session_state[DEMO_STEP_KEY]
    if step is None or step >= len(kd.DEMO_SCRIPT) or not chat() or chat()[-1]["role"] != "assistant":
        return None
    return kd.DEMO_SCRIPT[step]


def send_demo_answer() -> None:
    answer = next_demo_answer()
    if answer is not None:
        st.session_state[DEMO_STEP_KEY] += 1
        submit(answer, [])


def save_draft(entry: dict[str, str], editor: str) -> tuple[int, int]:
    """Save the edited draft to the knowledge base; a second save of the same interview adds a version."""
    ss = st.session_state
    engine = state.engine()
    if ss[SAVED_ENTRY_KEY] is not None and kbase.get_entry(engine, ss[SAVED_ENTRY_KEY]) is not None:
        version = kbase.update_entry(engine, ss[SAVED_ENTRY_KEY], entry, by=editor, note="聞き取りから更新")
        return ss[SAVED_ENTRY_KEY], version
    entry_id = kbase.save_entry(engine, entry, by=editor, source_interview_id=ss[INTERVIEW_KEY])
    ss[SAVED_ENTRY_KEY] = entry_id
    return entry_id, 1
