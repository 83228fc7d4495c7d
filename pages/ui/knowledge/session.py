"""Knowledge interview page: session-state glue around the core turn owner (core.flows.knowledge.turn).

The conversation is `st.session_state.chat["knowledge"]` (ChatItems); core appends to it, calls the
model, records the turn and says what to show. Here: hand input in, keep the interview id in the URL,
replace `knowledge_outputs`, keep store notices for the next run, and the one-click demo's script step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, cast

import streamlit as st

from core.documents.attachments import ExtractedDocument
from core.flows import knowledge as kb
from core.flows import knowledge as ki
from core.flows.chat_item import ChatItem
from core.flows.knowledge import (
    IndexReport,
    InterviewArchived,
    KnowledgeStores,
    TurnInput,
    TurnOutcome,
    knowledge_stores,
    retry_turn,
    run_turn,
)
from core.flows.knowledge import last_turn as last_turn_of
from pages.ui.knowledge import attachments
from pages.ui.shell import last_call, state

FLOW = "knowledge"
INTERVIEW_KEY = "knowledge_interview_id"
DRAFT_VERSION_KEY = "knowledge_draft_version"
SAVED_ENTRY_KEY = "knowledge_saved_entry_id"
SAVED_VERSION_KEY = "knowledge_saved_entry_version"  # the version this interview saved or resumed last
DEMO_STEP_KEY = "knowledge_demo_step"
UPLOADER_NONCE_KEY = "knowledge_uploader_nonce"
NOTICES_KEY = "knowledge_notices"  # store notices of the last turn, shown after the rerun
SIMILAR_KEY = "knowledge_similar"  # data key: the saved entries the last turn sent as reference
DUPLICATE_KEY = "knowledge_duplicate"  # data key: a save waiting for the near-duplicate question
ARCHIVED_KEY = "knowledge_interview_archived"  # the open interview is archived: shown read-only
QUERY_PARAM = "interview"


def init() -> None:
    ss = st.session_state
    for key, value in (
        (INTERVIEW_KEY, None),
        (DRAFT_VERSION_KEY, 0),
        (SAVED_ENTRY_KEY, None),
        (SAVED_VERSION_KEY, None),
        (DEMO_STEP_KEY, None),
        (UPLOADER_NONCE_KEY, 0),
        (NOTICES_KEY, []),
        (SIMILAR_KEY, []),
        (DUPLICATE_KEY, None),
        (ARCHIVED_KEY, False),
    ):
        ss.setdefault(key, value)


def chat() -> list[ChatItem]:
    return cast("list[ChatItem]", st.session_state.chat[FLOW])


def stores() -> KnowledgeStores:
    """This person's interviews and the team's knowledge base with its vector index."""
    return knowledge_stores(state.engine(), state.person(), chroma=state.chroma(), embedder=state.embedder())


def reconcile_on_start() -> None:
    """Once per process, data dir and embedder: entries missing from the similar-entry index get indexed (all of
    them, with a progress bar, after another embedder was chosen)."""
    index = stores().index
    if index is None:
        return
    key = ("knowledge", str(state.settings().data_dir), state.embedder().key)
    try:
        state.once_per_process(key, "類似検索の索引を作っています…", index.reconcile)
    except Exception:  # noqa: BLE001 - the page works without it; the button says what failed
        return


def reconcile_now() -> IndexReport:
    """「類似検索の索引を照合」: reconcile the index now (raises what the store or Chroma raised)."""
    index = stores().index
    if index is None:
        raise RuntimeError("no vector index")
    return index.reconcile()


def last_turn() -> dict[str, Any] | None:
    """The turn JSON of the last successful reply."""
    return last_turn_of(chat())


def read_attachments(files: list[Any]) -> tuple[list[ExtractedDocument], list[str]]:
    """Extract every uploaded file (once, in the worker: pages.ui.knowledge.attachments); (documents, Japanese errors)."""
    docs, errors = attachments.read_files(files, FLOW)
    return docs, [e.message for e in errors]


def card_key(field: str, version: int) -> str:
    """The widget key of one draft-card field (a new draft version gets fresh widgets)."""
    return f"knowledge_card_{field}_{version}"


def current_draft() -> dict[str, str] | None:
    """The draft card as the person edited it, or None when there is no draft or nothing was edited
    (the edits go back to the model as the current draft)."""
    ss = st.session_state
    if not ss.knowledge_outputs:
        return None
    draft = dict(ss.knowledge_outputs[0])
    edited = {
        k: str(ss[card_key(k, ss[DRAFT_VERSION_KEY])])
        for k in draft
        if card_key(k, ss[DRAFT_VERSION_KEY]) in ss
    }
    if not edited or all(edited[k] == draft[k] for k in edited):
        return None
    return draft | edited


def _apply(outcome: TurnOutcome | None) -> None:
    """Take what a turn left into session state (the conversation itself was changed by core); a turn
    without a draft keeps the card and its edits."""
    if outcome is None:
        return
    ss = st.session_state
    if outcome.new_draft is not None:
        ss.knowledge_outputs = outcome.new_draft
        ss[DRAFT_VERSION_KEY] += 1
    if outcome.interview_id is not None and ss[INTERVIEW_KEY] != outcome.interview_id:
        ss[INTERVIEW_KEY] = outcome.interview_id
        st.query_params[QUERY_PARAM] = outcome.interview_id
    ss[NOTICES_KEY] = list(outcome.notices)
    ss[SIMILAR_KEY] = list(outcome.references)


def read_only() -> bool:
    """The open interview is archived: nothing is sent, retried or saved from it until it is restored."""
    return bool(st.session_state[ARCHIVED_KEY])


def submit(turn_input: TurnInput, *, on_added: Callable[[ChatItem], None] | None = None) -> None:
    """Send one input: core appends it first (spec 00), calls the model, records the turn."""
    if turn_input.is_empty or read_only():
        return
    if turn_input.draft is None and (draft := current_draft()) is not None:
        turn_input = replace(turn_input, draft=draft)
    try:
        with last_call.capture(FLOW) as sink:
            outcome = run_turn(
                chat(),
                turn_input,
                interview_id=st.session_state[INTERVIEW_KEY],
                client=state.client(),
                repo=stores().interviews,
                sink=sink,
                secrets=state.settings().secrets,
                on_added=on_added,
                index=stores().index,
            )
    except InterviewArchived:  # archived meanwhile (another tab): say so, keep what was typed, go read-only
        _archived_meanwhile(turn_input.text)
        return
    _apply(outcome)


def _archived_meanwhile(text: str) -> None:
    st.session_state[ARCHIVED_KEY] = True
    kept = f"送らなかった入力:「{text}」" if text.strip() else ""
    st.session_state[NOTICES_KEY] = [
        "このヒアリングは別の画面でアーカイブされたため、送信しませんでした。復元すると続けられます。" + kept
    ]


def retry() -> None:
    """再試行: send the last input again."""
    if read_only():
        return
    try:
        with last_call.capture(FLOW) as sink:
            outcome = retry_turn(
                chat(),
                interview_id=st.session_state[INTERVIEW_KEY],
                client=state.client(),
                repo=stores().interviews,
                sink=sink,
                secrets=state.settings().secrets,
                index=stores().index,
            )
    except InterviewArchived:
        _archived_meanwhile("")
        return
    _apply(outcome)


def show_notices() -> None:
    """Store notices of the last turn (the conversation went on without the database)."""
    for notice in st.session_state[NOTICES_KEY]:
        st.error(notice)


def reset() -> None:
    """Start a new interview (the old one stays in the store)."""
    ss = st.session_state
    ss.chat[FLOW] = []
    ss.knowledge_outputs = []
    ss[INTERVIEW_KEY] = None
    ss[SAVED_ENTRY_KEY] = None
    ss[SAVED_VERSION_KEY] = None
    ss[DEMO_STEP_KEY] = None
    ss[NOTICES_KEY] = []
    ss[SIMILAR_KEY] = []
    ss[DUPLICATE_KEY] = None
    ss[ARCHIVED_KEY] = False
    ss[DRAFT_VERSION_KEY] += 1
    last_call.clear(FLOW)
    st.query_params.pop(QUERY_PARAM, None)


def start_demo() -> None:
    """One-click demo: a new interview with the sample contract attached and a first scripted message."""
    reset()
    submit(ki.demo_opening())
    st.session_state[DEMO_STEP_KEY] = 0


def next_demo_answer() -> str | None:
    return ki.next_demo_answer(chat(), st.session_state[DEMO_STEP_KEY])


def send_demo_answer() -> None:
    answer = next_demo_answer()
    if answer is not None:
        st.session_state[DEMO_STEP_KEY] += 1
        submit(TurnInput(answer))


def save_draft(entry: dict[str, str], over_version: int | None = None) -> tuple[int, int]:
    """Save the edited draft to the knowledge base as the signed-in person; remembers the entry and its
    version.

    Raises KnowledgeStoreError, or StaleEntryError when someone saved the entry since this interview last
    saved or resumed it (`over_version`: the newer version the person chose to save over).
    """
    ss = st.session_state
    opened = stores()
    entry_id, version = kb.save_draft(
        opened.base,
        entry,
        by=state.person(),
        interview_id=ss[INTERVIEW_KEY],
        saved_entry_id=ss[SAVED_ENTRY_KEY],
        saved_version=over_version if over_version is not None else ss[SAVED_VERSION_KEY],
        index=opened.index,
    )
    ss[SAVED_ENTRY_KEY] = entry_id
    ss[SAVED_VERSION_KEY] = version
    return entry_id, version


def draft_duplicates(entry: dict[str, str]) -> list[dict[str, Any]]:
    """Saved entries the draft nearly duplicates, closest first; none once this interview saved an
    entry (saving then updates it)."""
    found = kb.draft_duplicates(stores().index, entry, saved_entry_id=st.session_state[SAVED_ENTRY_KEY])
    return [s.entry for s in found]


def update_duplicate(duplicate: dict[str, Any], entry: dict[str, str]) -> tuple[int, int]:
    """「既存を更新する」: the draft as a new version of `duplicate` (the row shown); this interview then keeps
    updating that entry. Raises StaleEntryError (the entry is remembered, so 上書き goes to it) or
    KnowledgeStoreError."""
    ss = st.session_state
    ss[SAVED_ENTRY_KEY] = int(duplicate["id"])
    opened = stores()
    version = kb.update_duplicate(opened.base, duplicate, entry, by=state.person(), index=opened.index)
    ss[SAVED_VERSION_KEY] = version
    return int(duplicate["id"]), version
