"""Constants spec 02 fixes, in one place (window, persistence, summary period, block headers)."""

from __future__ import annotations

from core.guard.reply_limits import ReplyLimits, register_reply_limits

FLOW = "review"  # flow tag: chat key, demo persona, debug-log grouping
REPLY_LIMITS = register_reply_limits(FLOW, ReplyLimits(max_tokens=2048, max_chars=20_000))
STEP_REPLY = "reply"
STEP_CONTINUE = "continue"  # a reply cut short, continued (core.flows.review_chat.continuation)
STEP_SUMMARIZE = "summarize"

# spec 02 Specified: §(N-5)～§(N+5)
SPECIFIED_WINDOW = 5
# spec 02 §N の持続: the turn T that names paragraphs, then T+1 and T+2
PARAGRAPH_PERSIST_TURNS = 2
# spec 02 要約: a summary every 5 completed turns (5, 10, 15, ...)
SUMMARY_EVERY_TURNS = 5

# Numbers longer than this are not paragraph numbers (and int() of huge digit strings is refused).
MAX_PARAGRAPH_DIGITS = 6

HEADER_QUESTION = "【問題文】"
HEADER_OVERALL = "【講評（全体）】"
HEADER_PURPOSE = "【出題趣旨／参考文章】"
HEADER_GRADING = "【採点実感】"
HEADER_SPECIFIED = "【指定段落付き答案（Specified）】"
HEADER_RELATED = "【指定段落に関連する講評（Related）】"
HEADER_SUMMARY = "【これまでの会話の要約】"

KEYWORD_PURPOSE = "出題趣旨"
KEYWORD_GRADING = "採点実感"

# The line between non-contiguous Specified ranges.
GAP_LINE = "……"

# spec 02 Related: the review JSON lists searched, in review order.
REVIEW_ITEM_CATEGORIES = ("strengths", "weaknesses", "important_points", "future_considerations")
CATEGORY_LABELS = {
    "strengths": "良い点",
    "weaknesses": "改善点",
    "important_points": "重要ポイント",
    "future_considerations": "今後の課題",
}

# spec 02 システムプロンプト: the exact closing sentence when the place asked about is not given.
NOT_FOUND_SENTENCE = (
    "すみませんが、該当箇所を確認できません。"
    "該当箇所をコピペするか、答案左の§記号または講評の該当箇所をクリックすることで、入力に含めてください。"
)

PROMPT_SYSTEM = "review_chat_system"
PROMPT_USER = "review_chat_user"
PROMPT_SUMMARIZE = "review_chat_summarize"

# Bounds of one answer (pasted, registered or imported): what a real exam answer needs many times over, and small
# enough that the preview, the § controls and every chat-page run stay fast at the bound (README 上限).
MAX_ANSWER_PARAGRAPHS = 1_000
MAX_ANSWER_CHARS = 200_000


def answer_bound_errors(paragraph_count: int, chars: int) -> list[str]:
    """Japanese messages for an answer over MAX_ANSWER_PARAGRAPHS paragraphs or MAX_ANSWER_CHARS characters."""
    errors = []
    if chars > MAX_ANSWER_CHARS:
        errors.append(
            f"答案が長すぎます（{chars:,} 文字。上限は {MAX_ANSWER_CHARS:,} 文字です）。分けて登録してください。"
        )
    if paragraph_count > MAX_ANSWER_PARAGRAPHS:
        errors.append(
            f"答案の段落が多すぎます（{paragraph_count:,} 段落。上限は {MAX_ANSWER_PARAGRAPHS:,} 段落です）。"
            "段落の区切りを確認するか、分けて登録してください。"
        )
    return errors
