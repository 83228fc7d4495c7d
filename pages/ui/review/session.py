"""Session glue of the review chat page: pick review/thread, submit, run a streamed turn through core, retry.

Data keys (never bound to widgets): chat["review"] (core.flows.chat_item ChatItems; the per-turn context info of a reply
in meta["info"]), review_review_id, review_thread_id, review_pending, review_continuing (「続きを生成」 asked),
review_notices, review_last_call (the
shared last-call expander), review_jobs (summary jobs queued by this session), review_summaries_made (their
notices until the next question). Storage is reached only through core.flows.review_chat. The 5-turn
summary is a background job: the input is usable as soon as the reply is shown, and the summary notice
appears when it lands.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any, cast

import streamlit as st

from core.flows import chat_item as chat_items
from core.flows import review_chat
from core.flows.chat_item import ChatItem
from core.flows.review_chat import (
    Notice,
    ReviewListing,
    ReviewRecord,
    ThreadListing,
    TurnResult,
    summary_job_key,
)
from pages.ui.shell import background as bg
from pages.ui.shell import feedback, last_call, state
from pages.ui.shell.error_card import background_failure
from pages.ui.shell.render import stream_llm_markdown

FLOW = "review"
DEMO_QUESTION = "§11 の論述について、講評ではどう評価されていますか？"
QUERY_KEY = "review_thread"
WORKING = "会話を要約しています…"


THREAD_NOT_FOUND = "指定されたスレッドは見つかりません（削除されたか、ほかの人のスレッドです）。サンプルのレビューで新しいスレッドを開きました。"


def repo() -> Any:
    """The signed-in person's review repository on the app's engine (through core; pages never import the
    store): their threads and imports, and the shared sample."""
    return review_chat.repository(state.engine(), state.person())


def job_key(thread_id: int) -> tuple[str, str]:
    """The worker key of the thread's summary jobs: this person's."""
    return summary_job_key(thread_id, state.person().id)


def sample_id() -> int:
    return review_chat.sample_review_id(repo())


def chat() -> list[ChatItem]:
    return cast("list[ChatItem]", st.session_state.chat[FLOW])


def notify(*notices: Notice) -> None:
    st.session_state.setdefault("review_notices", []).extend(notices)


def reviews() -> list[ReviewListing]:
    return review_chat.list_reviews(repo())


def threads(review_id: int) -> list[ThreadListing]:
    return review_chat.list_threads(repo(), review_id)


def new_thread(review_id: int) -> None:
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = review_id, None
    ss.chat[FLOW] = []
    ss["review_pending"] = False
    ss["review_summaries_made"] = []
    last_call.clear(FLOW)
    st.query_params.pop(QUERY_KEY, None)


def open_thread(thread_id: int) -> bool:
    """Load a stored thread (resume after a reload). False when it does not exist."""
    opened = review_chat.open_thread(repo(), thread_id)
    if opened is None:
        return False
    ss = st.session_state
    ss["review_review_id"], ss["review_thread_id"] = opened.review_id, thread_id
    ss.chat[FLOW] = opened.items
    ss["review_pending"] = False
    ss["review_summaries_made"] = []
    last_call.clear(FLOW)
    st.query_params[QUERY_KEY] = str(thread_id)
    return True


def init() -> None:
    """First visit in this session: resume the thread in the URL, else a new thread on the sample."""
    ss = st.session_state
    ss.setdefault("review_notices", [])
    if "review_review_id" in ss:
        return
    wanted = st.query_params.get(QUERY_KEY, "")
    if not (wanted.isdigit() and open_thread(int(wanted))):
        new_thread(sample_id())
        if wanted:  # a link to a thread that is gone or not this person's: say so, show nothing of it
            notify(("warning", THREAD_NOT_FOUND))


def start_demo() -> None:
    """One-click demo: the sample review, a new thread, and a first scripted question."""
    new_thread(sample_id())
    submit_text(DEMO_QUESTION)


def submit_text(text: str) -> None:
    """Append the user's message to state first; the reply runs on this script run."""
    chat().append(chat_items.user_item(text))
    st.session_state["review_pending"] = True
    st.session_state["review_summaries_made"] = []


def on_send() -> None:
    text = (st.session_state.get("review_draft") or "").strip()
    if not text:
        notify(("warning", "質問を入力してください。"))
        return
    if st.session_state.get("review_pending"):
        # A click while a reply was still streaming: that reply is restarted; the new text stays in the box.
        notify(
            (
                "warning",
                "前の質問への回答を作成中です。回答が表示されてから、もう一度送信してください（入力は残してあります）。",
            )
        )
        return
    submit_text(text)
    st.session_state["review_draft"] = ""


def on_retry() -> None:
    """Resend the last failed question, or ask a reply cut short again from the start (its rally is removed,
    in the store too); nothing the user typed is lost."""
    thread_id = st.session_state["review_thread_id"]
    cut_turn = chat()[-1].get("turn") if chat() else None
    cut = review_chat.discard_cut_turn(repo(), thread_id, chat())
    if cut is not None:
        # the reply asked again takes the cut reply's turn: the cut one's rating must not stick to it
        feedback.forget(FLOW, str(thread_id) if thread_id else None, cut_turn)
        submit_text(cut)
        return
    failed = chat_items.pop_failed_turn(chat())
    if failed is not None:
        submit_text(failed["content"])


def on_continue() -> None:
    """「続きを生成」: the continuation of the last reply runs on this script run."""
    if review_chat.last_cut_reply(chat()) is not None:
        st.session_state["review_continuing"] = True


def run_continuation(review: ReviewRecord) -> None:
    """Stream the continuation of the cut reply under it, append it (core stores it), then rerun."""
    ss = st.session_state
    ss["review_continuing"] = False
    thread_id = ss["review_thread_id"]
    failure: str | None = None
    with last_call.capture(FLOW) as sink:
        try:
            cont = review_chat.prepare_continuation(repo(), review, thread_id, chat())
            if cont is not None:
                with st.chat_message("assistant"):
                    stream = review_chat.stream_continuation(state.client(), cont, sink=sink)
                    stream_llm_markdown(stream)
                failed = review_chat.finish_continuation(repo(), chat(), cont, stream.result)
                failure = failed.message if failed is not None else None
        except Exception:  # noqa: BLE001 - a bug or a broken client: a Japanese message, never a traceback
            failure = "予期しないエラーが発生しました。"
    if failure is not None:
        notify(("error", f"続きを生成できませんでした。{failure}もう一度お試しください。"))
    st.rerun()


def on_pick_review() -> None:
    new_thread(st.session_state["review_picker"])


def on_pick_thread() -> None:
    picked = st.session_state["review_thread_picker"]
    if picked == 0 or not open_thread(picked):
        new_thread(st.session_state["review_review_id"])


def current_review() -> ReviewRecord | None:
    return review_chat.get_review(repo(), st.session_state["review_review_id"])


ANSWER_CACHE = "review_answer_paragraphs"  # data key: (review id, answer hash, its parsed paragraphs)


def answer_paragraphs(review: ReviewRecord) -> list[tuple[int, str]]:
    """The review's answer paragraphs, parsed once per review content in this session (not on every run)."""
    key = (review.id, hash(review.answer_text))
    cached = st.session_state.get(ANSWER_CACHE)
    if cached is None or cached[0] != key:
        cached = (key, review_chat.parse_marked_answer_paragraphs(review.answer_text))
        st.session_state[ANSWER_CACHE] = cached
    return list(cached[1])


def import_review(raw: bytes) -> list[str]:
    """Store an uploaded review and switch to it; returns the problems when it cannot be used."""
    result = review_chat.import_review(repo(), raw)
    if result.review_id is None:
        return result.errors
    new_thread(result.review_id)
    if result.notice:
        notify(result.notice)
    return []


def stream_turn(review: ReviewRecord, text: str) -> TurnResult:
    """One core call before the stream, the stream drawn as it arrives, one core call after it (which queues
    a due summary on the worker and returns)."""
    ss = st.session_state
    client, worker, thread_id = state.client(), state.jobs(), ss["review_thread_id"]
    job_sink = bg.job_sink()
    with last_call.capture(FLOW) as sink:
        try:
            store = repo()
            waiting = thread_id is not None and bg.busy(job_key(thread_id))
            with st.spinner("前の会話の要約を待っています…") if waiting else nullcontext():
                plan = review_chat.prepare_turn(
                    store, review, thread_id, chat_items.history(chat()), text, worker=worker
                )
            with st.chat_message("assistant"):
                stream = review_chat.stream_reply(client, plan, sink=sink)
                stream_llm_markdown(stream)
            result = review_chat.finish_turn(
                store, client, plan, stream.result, sink=sink, worker=worker, job_sink=job_sink
            )
        except Exception:  # noqa: BLE001 - a bug or a broken client: a Japanese message and a retry, never a traceback
            result = review_chat.unexpected_failure(text, thread_id=thread_id)
    if result.summary_job is not None and result.thread_id is not None:  # after capture: joins this turn
        bg.track(FLOW, job_key(result.thread_id), result.summary_job, job_sink)
    return result


def land_jobs() -> list[str]:
    """Summaries made since the last question was sent (shown until the next one; a failure is shown by
    `summary_failure`)."""
    made: list[str] = st.session_state.setdefault("review_summaries_made", [])
    made.extend(v["message"] for v in bg.landed(FLOW) if v["status"] == "done" and v["message"])
    return made


def summary_working(thread_id: int | None) -> None:
    """「会話を要約しています…」 while the thread's summary runs (a fragment; no timer otherwise)."""
    if thread_id is not None:
        bg.status(job_key(thread_id), WORKING)


def summary_failure(thread_id: int | None) -> None:
    """A summary that should exist by now but does not (it failed, or the queue was full), with 再試行."""
    if thread_id is None or bg.busy(key := job_key(thread_id)):
        return
    segment = review_chat.summary_backlog(repo(), thread_id)
    if segment is None:
        return
    failed = [j for j in state.jobs().jobs(key) if j["status"] == "failed"]
    reason = failed[-1]["message"] if failed else "要約はまだ作成されていません。"
    if background_failure(
        f"ターン{segment[0]}～{segment[1]}の会話の要約がありません。{reason}",
        key="review_retry_summary",
        label="要約を再試行",
    ):
        job_sink = bg.job_sink()
        job = review_chat.submit_summary_job(state.jobs(), repo(), state.client(), thread_id, sink=job_sink)
        if job is None:
            notify(
                (
                    "warning",
                    "処理待ちが多いため、再試行を受け付けられませんでした。次のターンの後に再試行します。",
                )
            )
        else:
            bg.track(FLOW, key, job.id, job_sink, turn=False)
        st.rerun()


def run_pending(review: ReviewRecord) -> None:
    """Answer the pending question, put the turn's items in place of it, keep the thread id, then rerun."""
    ss = st.session_state
    items = chat()
    index = next(i for i in range(len(items) - 1, -1, -1) if items[i]["status"] == "pending")
    outcome = stream_turn(review, items[index]["content"])
    ss["review_pending"] = False
    items[index:] = outcome.items
    if outcome.thread_id is not None and outcome.thread_id != ss["review_thread_id"]:
        ss["review_thread_id"] = outcome.thread_id
        st.query_params[QUERY_KEY] = str(outcome.thread_id)
    notify(*outcome.notices)
    st.rerun()
