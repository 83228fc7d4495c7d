"""A consultation exported as Markdown and DOCX: title, question, the answer paragraphs the
conversation cited (§N named in a question or a reply, with their text), each turn (user / assistant) and the
stored summaries. In the DOCX the replies and the summary are Word formatting (core.documents.docx_markdown).

Nothing here writes to disk: the page offers the text and bytes as downloads. The per-turn context is not
exported (it is never stored, spec 02 注意点).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import docx

from core.documents.docx_markdown import add_markdown, add_plain
from core.flows.review_chat.paragraphs import (
    extract_paragraph_numbers_from_user_input,
    parse_marked_answer_paragraphs,
)
from core.store.review.repository import ReviewRepository
from core.text.export import markdown_text, xml_text

USER_LABEL = "質問"
ASSISTANT_LABEL = "回答"


@dataclass
class ExportTurn:
    """One rally: the question and the reply as stored (a reply still missing is empty)."""

    turn: int
    user: str = ""
    assistant: str = ""


@dataclass
class ThreadExport:
    """What an export holds, in the order it is written."""

    title: str
    review_title: str
    question_text: str
    cited: list[tuple[int, str]] = field(default_factory=list)
    turns: list[ExportTurn] = field(default_factory=list)
    summary: str = ""
    summary_up_to_turn: int = 0


def thread_export(repo: ReviewRepository, thread_id: int) -> ThreadExport | None:
    """The person's thread gathered for export, or None (not found or another person's)."""
    thread = repo.get_thread(thread_id)
    review = repo.get_review(thread["review_id"]) if thread is not None else None
    if thread is None or review is None:
        return None
    turns: dict[int, ExportTurn] = {}
    for message in repo.load_messages(thread_id):
        rally = turns.setdefault(message.turn, ExportTurn(message.turn))
        if message.role == "user":
            rally.user = message.content
        else:
            rally.assistant = message.content
    mentioned: set[int] = set()
    for rally in turns.values():  # what the person asked about and what the replies quoted
        mentioned.update(extract_paragraph_numbers_from_user_input(rally.user))
        mentioned.update(extract_paragraph_numbers_from_user_input(rally.assistant))
    paragraphs = dict(parse_marked_answer_paragraphs(review.answer_text))
    state = thread["state"]
    return ThreadExport(
        title=thread["title"] or "（無題）",
        review_title=review.title,
        question_text=review.question_text,
        cited=[(n, paragraphs[n]) for n in sorted(mentioned) if n in paragraphs],
        turns=[turns[t] for t in sorted(turns)],
        summary=state.conversation_summary,
        summary_up_to_turn=state.summary_up_to_turn,
    )


def _quote(text: str) -> str:
    return "\n".join(f"> {line}".rstrip() for line in markdown_text(text).splitlines()) or ">"


def _line(text: str) -> str:
    return markdown_text(" ".join(text.split()))


def export_markdown(export: ThreadExport) -> str:
    """The consultation as Markdown. Every text goes through the on-screen safe renderer (core.text.export):
    an image, raw HTML or a `javascript:` link a reply or the material carries is written as inert text."""
    md = markdown_text
    parts = [
        f"# {_line(export.title)}",
        "",
        f"レビュー: {_line(export.review_title)}",
        "",
        "## 問題文",
        "",
        md(export.question_text),
    ]
    parts += ["", "## 会話で参照した答案の段落", ""]
    if export.cited:
        for number, text in export.cited:
            parts += [f"**§{number}**", "", _quote(text), ""]
    else:
        parts += ["（§番号で参照した段落はありません）", ""]
    parts += ["## 会話", ""]
    for rally in export.turns:
        parts += [f"### ターン{rally.turn}", "", f"**{USER_LABEL}:**", "", md(rally.user), ""]
        parts += [f"**{ASSISTANT_LABEL}:**", "", md(rally.assistant) or "（回答はありません）", ""]
    if export.summary:
        parts += [f"## 会話の要約（ターン1～{export.summary_up_to_turn}）", "", md(export.summary), ""]
    return "\n".join(parts).rstrip() + "\n"


def _text(text: str) -> str:
    return xml_text(text)


def export_docx(export: ThreadExport) -> bytes:
    """The consultation as a Word document: the same sections as the Markdown. What people typed (the question,
    the material) is kept as typed, line breaks included; the replies and the summary, which are Markdown, become
    Word formatting (bold, quotes, lists, headings). Any text: core.text.export.xml_text."""
    document = docx.Document()
    document.add_heading(_text(export.title), level=0)
    document.add_paragraph(_text(f"レビュー: {export.review_title}"))
    document.add_heading("問題文", level=1)
    add_plain(document, export.question_text)
    document.add_heading("会話で参照した答案の段落", level=1)
    for number, text in export.cited:
        paragraph = document.add_paragraph()
        paragraph.add_run(f"§{number}　").bold = True
        paragraph.add_run(_text(text))
    if not export.cited:
        document.add_paragraph("（§番号で参照した段落はありません）")
    document.add_heading("会話", level=1)
    for rally in export.turns:
        document.add_heading(f"ターン{rally.turn}", level=2)
        document.add_paragraph().add_run(f"{USER_LABEL}:").bold = True
        add_plain(document, rally.user)
        document.add_paragraph().add_run(f"{ASSISTANT_LABEL}:").bold = True
        if rally.assistant:
            add_markdown(document, rally.assistant, heading_level=3)
        else:
            document.add_paragraph("（回答はありません）")
    if export.summary:
        document.add_heading(f"会話の要約（ターン1～{export.summary_up_to_turn}）", level=1)
        add_markdown(document, export.summary, heading_level=2)
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def export_file_name(export: ThreadExport, suffix: str) -> str:
    """A download name from the thread title (characters file systems refuse replaced)."""
    stem = re.sub(r'[\\/:*?"<>|\s]+', "_", export.title).strip("_")[:40] or "thread"
    return f"{stem}.{suffix}"
