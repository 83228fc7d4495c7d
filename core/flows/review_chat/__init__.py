"""Review chat about an exam answer and its review (spec 02): per-turn context, §N persistence, summaries.

A turn with its stored thread: `prepare_turn` -> `stream_reply` / `request_reply` -> `finish_turn`
(or `run_turn`); a reply cut short continued or asked again: `continuation`; the summary as a background
job: `summary_job`; reviews and threads for the page: `threads`.
"""

from core.flows.review_chat.chat_turn import (
    TurnResult,
    failed_turn,
    finish_turn,
    prepare_turn,
    request_reply,
    run_turn,
    stream_reply,
    unexpected_failure,
)
from core.flows.review_chat.constants import FLOW, NOT_FOUND_SENTENCE, SPECIFIED_WINDOW, SUMMARY_EVERY_TURNS
from core.flows.review_chat.context import (
    ContextBlock,
    ReviewContext,
    assemble_review_context,
    build_review_chat_context_text,
)
from core.flows.review_chat.continuation import (
    Continuation,
    continue_reply,
    discard_cut_turn,
    finish_continuation,
    last_cut_reply,
    prepare_continuation,
    request_continuation,
    stream_continuation,
)
from core.flows.review_chat.messages import build_review_chat_messages
from core.flows.review_chat.models import ChatMessage, ReviewRecord, ThreadState
from core.flows.review_chat.notices import Notice, summarizing
from core.flows.review_chat.paragraphs import (
    extract_paragraph_numbers_from_user_input,
    extract_specified_text_from_answer,
    get_related_review_json_items,
    parse_marked_answer_paragraphs,
)
from core.flows.review_chat.persistence import ParagraphDecision, current_turn, resolve_paragraph_numbers
from core.flows.review_chat.records import (
    ImportCheck,
    check_review_record,
    load_sample_review,
    read_review_file,
)
from core.flows.review_chat.summary import (
    SummaryOutcome,
    maybe_summarize,
    summarize_conversation_segment,
    summarize_if_due,
)
from core.flows.review_chat.summary_job import (
    SUMMARY_WAIT_SECONDS,
    submit_summary_job,
    summary_backlog,
    summary_job_key,
    wait_for_summary,
)
from core.flows.review_chat.threads import (
    ImportResult,
    OpenedThread,
    get_review,
    import_review,
    list_reviews,
    list_threads,
    open_thread,
    repository,
    sample_review_id,
    thread_items,
)
from core.flows.review_chat.turn import (
    TurnOutcome,
    TurnPlan,
    finish_review_turn,
    prepare_review_turn,
    request_review_reply,
    run_review_turn,
    stream_review_reply,
)

__all__ = [
    "FLOW",
    "NOT_FOUND_SENTENCE",
    "SPECIFIED_WINDOW",
    "SUMMARY_EVERY_TURNS",
    "SUMMARY_WAIT_SECONDS",
    "ChatMessage",
    "ContextBlock",
    "Continuation",
    "ImportCheck",
    "ImportResult",
    "Notice",
    "OpenedThread",
    "ParagraphDecision",
    "ReviewContext",
    "ReviewRecord",
    "SummaryOutcome",
    "ThreadState",
    "TurnOutcome",
    "TurnPlan",
    "TurnResult",
    "assemble_review_context",
    "build_review_chat_context_text",
    "build_review_chat_messages",
    "check_review_record",
    "continue_reply",
    "current_turn",
    "discard_cut_turn",
    "extract_paragraph_numbers_from_user_input",
    "extract_specified_text_from_answer",
    "failed_turn",
    "finish_continuation",
    "finish_review_turn",
    "finish_turn",
    "get_related_review_json_items",
    "get_review",
    "import_review",
    "last_cut_reply",
    "list_reviews",
    "list_threads",
    "load_sample_review",
    "maybe_summarize",
    "open_thread",
    "parse_marked_answer_paragraphs",
    "prepare_continuation",
    "prepare_review_turn",
    "prepare_turn",
    "read_review_file",
    "repository",
    "request_continuation",
    "request_reply",
    "request_review_reply",
    "resolve_paragraph_numbers",
    "run_review_turn",
    "run_turn",
    "sample_review_id",
    "stream_continuation",
    "stream_reply",
    "stream_review_reply",
    "submit_summary_job",
    "summarize_conversation_segment",
    "summarize_if_due",
    "summarizing",
    "summary_backlog",
    "summary_job_key",
    "thread_items",
    "unexpected_failure",
    "wait_for_summary",
]
