"""Knowledge interview page: session-state glue around the core turn owner (core.flows.knowledge_turn).

The conversation is `st.session_state.chat["knowledge"]` (ChatItems); core appends to it, calls the
model, records the turn and says what to show. Here: hand input in, keep the interview id in the URL,
replace `knowledge_outputs`, keep store notices for the next run, and the one-click demo's script step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import streamlit as st

from core.attachments import ExtractedDocument
from core.chat import ChatItem
from core.flows import knowledge_base as kb
from core.flows import knowledge_interviews as ki
from core.flows.knowledge_items import last_turn as last_turn_of
from core.flows.knowledge_stores import KnowledgeStores, knowledge_stores
from core.flows.knowledge_turn import TurnInput, TurnOutcome, retry_turn, run_turn
from pages.ui import attachments, last_call, state

FLOW = "knowledge"
INTERVIEW_KEY = "knowledge_interview_id"
DRAFT_VERSION_KEY = "knowledge_draft_version"
SAVED_ENTRY_KEY = "knowledge_saved_entry_id"
SAVED_VERSION_KEY = "knowledge_saved_entry_version"  # the version this interview saved or resumed last
DEMO_STEP_KEY = "knowledge_demo_step"
UPLOADER_NONCE_KEY = "knowledge_uploader_nonce"
NOTICES_KEY = "knowledge_notices"  # store notices of the last turn, shown after the rerun
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
    ):
        ss.setdefault(key, value)


def chat() -> list[ChatItem]:
    return st.session_state.chat[FLOW]


def stores() -> KnowledgeStores:
    """This person's interviews and the team's knowledge base (issue #14)."""
    return knowledge_stores(state.engine(), state.person())


def last_turn() -> dict[str, Any] | None:
    """The turn JSON of the last successful reply."""
    return last_turn_of(chat())


def read_attachments(files: list[Any]) -> tuple[list[ExtractedDocument], list[str]]:
    """Extract every uploaded file (once, in the worker: pages.ui.attachments); (documents, Japanese errors)."""
    docs, errors = attachments.read_files(files, FLOW)
    return docs, [e.message for e in errors]


def card_key(field: str, version: int) -> str:
    """The widget key of one draft-card field (a new draft version gets fresh widgets)."""
    return f"knowledge_card_{field}_{version}"


def current_draft() -> dict[str, str] | None:
    """The draft card as the person edited it, or None when there is no draft or nothing was edited
    (issue 12: the edits go back to the model as the current draft)."""
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
    without a draft keeps the card and its edits (issue 12)."""
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


def submit(turn_input: TurnInput, *, on_added: Callable[[ChatItem], None] | None = None) -> None:
    """Send one input: core appends it first (spec 00), calls the model, records the turn."""
    if turn_input.is_empty:
        return
    if turn_input.draft is None and (draft := current_draft()) is not None:
        turn_input = replace(turn_input, draft=draft)
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
        )
    _apply(outcome)


def retry() -> None:
    """再試行: send the last input again."""
    with last_call.capture(FLOW) as sink:
        outcome = retry_turn(
            chat(),
            interview_id=st.session_state[INTERVIEW_KEY],
            client=state.client(),
            repo=stores().interviews,
            sink=sink,
            secrets=state.settings().secrets,
        )
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
    entry_id, version = kb.save_draft(
        stores().base,
        entry,
        by=state.person(),
        interview_id=ss[INTERVIEW_KEY],
        saved_entry_id=ss[SAVED_ENTRY_KEY],
        saved_version=over_version if over_version is not None else ss[SAVED_VERSION_KEY],
    )
    ss[SAVED_ENTRY_KEY] = entry_id
    ss[SAVED_VERSION_KEY] = version
    return entry_id, version
