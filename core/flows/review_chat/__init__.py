"""Review chat about an exam answer and its review (spec 02): per-turn context, §N persistence, summaries."""

from core.flows.review_chat.constants import FLOW, NOT_FOUND_SENTENCE, SPECIFIED_WINDOW, SUMMARY_EVERY_TURNS
from core.flows.review_chat.context import (
    ContextBlock,
    ReviewContext,
    assemble_review_context,
    build_review_chat_context_text,
)
from core.flows.review_chat.messages import build_review_chat_messages
from core.flows.review_chat.models import ChatMessage, ReviewRecord, ThreadState
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
from core.flows.review_chat.summary import SummaryOutcome, maybe_summarize, summarize_conversation_segment
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
    "ChatMessage",
    "ContextBlock",
    "ImportCheck",
    "ParagraphDecision",
    "ReviewContext",
    "ReviewRecord",
    "SummaryOutcome",
    "ThreadState",
    "TurnOutcome",
    "TurnPlan",
    "assemble_review_context",
    "build_review_chat_context_text",
    "build_review_chat_messages",
    "check_review_record",
    "current_turn",
    "extract_paragraph_numbers_from_user_input",
    "extract_specified_text_from_answer",
    "finish_review_turn",
    "get_related_review_json_items",
    "load_sample_review",
    "maybe_summarize",
    "parse_marked_answer_paragraphs",
    "prepare_review_turn",
    "read_review_file",
    "request_review_reply",
    "stream_review_reply",
    "resolve_paragraph_numbers",
    "run_review_turn",
    "summarize_conversation_segment",
]
