"""Background jobs on a page: a status line while a conversation's jobs run, and, when
they land, their model calls added to the shared last-call view and their results handed to the page once.

Everything here runs on the script thread: the status line is a fragment that polls the worker every
second (only while jobs are unfinished; otherwise nothing is drawn and no timer runs) and reruns the page
when they are done. The worker thread never calls st.*; a job's debug events go to a CaptureSink that
forwards them to the session's debug log.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, cast

import streamlit as st

from core.debuglog.events import CaptureSink
from pages.ui.shell import last_call, state
from pages.ui.shell.render import llm_label

POLL_SECONDS = 1.0


def _tracked(flow: str) -> dict[str, dict[str, Any]]:
    return cast("dict[str, dict[str, Any]]", st.session_state.setdefault(f"{flow}_jobs", {}))


def job_sink() -> CaptureSink:
    """The sink a job's calls go to: kept for the last-call view, forwarded to the debug log (when on)."""
    return CaptureSink(state.sink(), secrets=state.settings().secrets)


def track(flow: str, key: Hashable, job_id: str | None, sink: CaptureSink, *, turn: bool = True) -> None:
    """Remember a job this session queued, so `landed` reports it once; the calls of a turn's job (not of a
    retry) join the last-call view of that turn."""
    if job_id is not None:
        calls = st.session_state.get(last_call.key(flow)) if turn else None
        _tracked(flow)[job_id] = {"key": key, "sink": sink, "calls": calls}


def landed(flow: str) -> list[dict[str, Any]]:
    """Jobs of this session that finished since the last run (their worker views, oldest first). The calls
    they made join the last-call view when it still shows the turn that queued them."""
    tracked = _tracked(flow)
    out = []
    for job_id, entry in list(tracked.items()):
        view = next((j for j in state.jobs().jobs(entry["key"]) if j["id"] == job_id), None)
        if view is not None and view["status"] not in ("done", "failed"):
            continue
        del tracked[job_id]
        calls = st.session_state.get(last_call.key(flow))
        if entry["calls"] is not None and calls is entry["calls"]:
            st.session_state[last_call.key(flow)] = [*calls, *entry["sink"].calls()]
        if view is not None:
            out.append(view)
    return out


def busy(key: Hashable) -> bool:
    return state.jobs().busy(key)


def status(key: Hashable, text: str) -> None:
    """「記憶を整理しています…」 while `key` has unfinished jobs; nothing (and no timer) otherwise."""
    if busy(key):
        _poll(key, text)


@st.fragment(run_every=POLL_SECONDS)
def _poll(key: Hashable, text: str) -> None:
    if busy(key):
        st.caption(f":material/hourglass_top: {llm_label(text, 500)}")
    else:
        st.rerun()  # the jobs landed: redraw the whole page from the store
