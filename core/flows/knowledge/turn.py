"""One owner of a knowledge interview turn: prepare -> call -> finish, and `run_turn` doing all three (spec 00, 01).

spec 00 セッション状態とUI更新: the user's item is appended to the conversation before the call; on success
the assistant turn is appended and the knowledge outputs replaced; on failure the raw output and error
type are appended (the input stays, 再試行 sends it again). spec 01 §7.2: every turn is recorded in the
store. The conversation is the page's list (`st.session_state.chat["knowledge"]`), changed in place;
collaborators (client, repository, sink) are arguments. A store failure never loses the conversation:
the outcome carries a Japanese notice instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.exc import SQLAlchemyError

from core.contracts.prompts import load_prompt
from core.debuglog import trace
from core.debuglog.events import DebugSink, redact_text
from core.documents.attachments import ExtractedDocument
from core.flows.chat_item import ChatItem, history, meta, pop_failed_turn
from core.flows.knowledge import interview as kf
from core.flows.knowledge.constants import FLOW
from core.flows.knowledge.index import KnowledgeIndex, find_references
from core.flows.knowledge.items import (
    UNEXPECTED_ERROR,
    UNEXPECTED_MESSAGE,
    interview_user_item,
    item_text,
    item_turn_no,
    next_turn_no,
    reply_item,
)
from core.llm.base import LLMClient
from core.store.knowledge.interviews import KnowledgeRepository

NOTICE_NOT_STARTED = (
    "聞き取りの記録を開始できませんでした（データベースに書き込めません）。会話は続けられます。"
)
NOTICE_NOT_RECORDED = "このターンをデータベースに記録できませんでした。会話は続けられます。"
ERROR_DETAIL_CHARS = 500  # an unexpected exception's text kept on the error item


@dataclass(frozen=True)
class TurnInput:
    """What the person sent: typed text, extracted attachment text (never stored), attachment summaries, and
    the draft card when they edited it (sent back as the current draft)."""

    text: str
    file_texts: list[str] = field(default_factory=list)
    attachments: list[dict[str, Any]] = field(default_factory=list)
    attachment_errors: list[str] = field(default_factory=list)
    draft: dict[str, str] | None = None

    @classmethod
    def from_documents(
        cls, text: str, docs: Sequence[ExtractedDocument], attachment_errors: Sequence[str] = ()
    ) -> TurnInput:
        """An input from the typed text and the documents extracted from its attachments (core.documents.attachments)."""
        return cls(
            (text or "").strip(),
            [d.text for d in docs],
            [d.summary() for d in docs],
            list(attachment_errors),
        )

    @property
    def is_empty(self) -> bool:
        """Nothing to send: no text and no attachment."""
        return not self.text and not self.file_texts

    @property
    def title(self) -> str:
        """What names a new interview: the text typed, else the first attachment's name."""
        return self.text or next((a.get("name") or "" for a in self.attachments), "")


@dataclass
class PreparedTurn:
    """The user's item (already in the conversation), the history before it, the interview it belongs to, and the
    saved entries similar to the case (sent as the reference block)."""

    user: ChatItem
    history: list[ChatItem]
    interview_id: str | None
    notices: list[str] = field(default_factory=list)
    references: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TurnOutcome:
    """What a turn left: the reply item (assistant or error), the turn's knowledge outputs (None when the
    turn failed), the interview id, notices for the page, and call_llm's result. `new_draft` is what the
    draft card takes: None also when the turn returned no draft (the last draft and its edits stay)."""

    ok: bool
    user: ChatItem
    reply: ChatItem
    knowledge: list[dict[str, str]] | None
    interview_id: str | None
    notices: list[str]
    result: dict[str, Any]
    references: list[dict[str, Any]] = field(default_factory=list)

    @property
    def new_draft(self) -> list[dict[str, str]] | None:
        """The knowledge outputs to show in place of the current ones, or None to keep the current ones."""
        return self.knowledge or None


def _ensure_interview(
    repo: KnowledgeRepository, interview_id: str | None, title: str, client: LLMClient, notices: list[str]
) -> str | None:
    """The interview the turn goes to: `interview_id` when it is this person's, else a new one (an
    id of another person's interview never receives a turn)."""
    try:
        if interview_id is not None and repo.owns(interview_id):
            return interview_id
        return repo.create_interview(title=title, provider=client.provider, model=client.model)
    except SQLAlchemyError:
        if interview_id is not None:
            return interview_id  # recording checks the owner again and reports when it cannot
        notices.append(NOTICE_NOT_STARTED)  # the interview still works without the store
        return None


def _prepare(
    items: list[ChatItem],
    user: ChatItem,
    title: str,
    *,
    interview_id: str | None,
    repo: KnowledgeRepository,
    client: LLMClient,
    index: KnowledgeIndex | None,
) -> PreparedTurn:
    past = history(items)
    user["status"] = "pending"
    items.append(user)
    notices: list[str] = []
    interview_id = _ensure_interview(repo, interview_id, title, client, notices)
    references = find_references(items, interview_id, index, notices)
    return PreparedTurn(user, past, interview_id, notices, references)


def prepare_turn(
    items: list[ChatItem],
    turn_input: TurnInput,
    *,
    interview_id: str | None,
    repo: KnowledgeRepository,
    client: LLMClient,
    index: KnowledgeIndex | None = None,
) -> PreparedTurn:
    """spec 00: append the user's item first (status "pending"), then create the interview row when missing;
    with the knowledge base's `index`, find the saved entries similar to the case."""
    user = interview_user_item(
        turn_input.text,
        turn_input.file_texts,
        turn_no=next_turn_no(items),
        attachments=turn_input.attachments,
        attachment_errors=turn_input.attachment_errors,
        draft=turn_input.draft,
    )
    return _prepare(
        items, user, turn_input.title, interview_id=interview_id, repo=repo, client=client, index=index
    )


def call_turn(
    prepared: PreparedTurn,
    client: LLMClient,
    *,
    sink: DebugSink | None = None,
    secrets: Iterable[str] = (),
    system_prompt: str | None = None,
) -> dict[str, Any]:
    """spec 00 LLM呼び出しフロー: `call_llm` for the prepared input on the history before it. Never raises:
    an unexpected exception becomes a failed result (secrets redacted), shown like any failure."""
    extras = meta(prepared.user)
    turn = item_turn_no(
        prepared.user
    )  # the calls log under the interview and this turn (core.debuglog.trace)
    where = trace.bind(
        flow=FLOW,
        conversation_id=prepared.interview_id or "",
        turn=turn,
        user_input=extras.get("text", ""),
    )
    try:
        with where:
            return kf.call_llm(
                extras.get("text", ""),
                extras.get("file_texts") or [],
                system_prompt if system_prompt is not None else load_prompt(kf.SYSTEM_PROMPT_NAME),
                prepared.history,
                client,
                kf.turn_schema(),
                kf.entry_schema(),
                sink=sink,
                current_draft=extras.get("draft"),
                references=prepared.references,
            )
    except Exception as exc:  # noqa: BLE001 - the guard returns results: a raise is a bug, shown as an error item
        return {
            "ok": False,
            "raw": "",
            "error": redact_text(f"{type(exc).__name__}: {exc}"[:ERROR_DETAIL_CHARS], list(secrets)),
            "error_type": UNEXPECTED_ERROR,
            "message": UNEXPECTED_MESSAGE,
            "messages": [],
            "attempts": [],
        }


def record_fields(result: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a `call_llm` result (spec 01 §7.2): the full turn JSON, or raw output and error."""
    return {
        "turn": kf.turn_json(result) if result["ok"] else None,
        "raw": str(result.get("raw") or ""),
        "error_type": None if result["ok"] else result.get("error_type"),
        "error": None if result["ok"] else result.get("error"),
        "attempts": len(result.get("attempts") or []) or 1,
    }


def finish_turn(
    items: list[ChatItem],
    prepared: PreparedTurn,
    result: dict[str, Any],
    *,
    repo: KnowledgeRepository,
    client: LLMClient,
) -> TurnOutcome:
    """spec 00: append the assistant turn (or the failure with raw output and error type), mark the user's
    item done or error, take the new knowledge outputs; spec 01 §7.2: record the turn in the store."""
    turn_no = item_turn_no(prepared.user)
    reply = reply_item(result, turn_no=turn_no)
    prepared.user["status"] = "done" if result["ok"] else "error"
    items.append(reply)
    notices = list(prepared.notices)
    if prepared.interview_id is not None:
        try:
            repo.record_turn(
                prepared.interview_id,
                turn_no=turn_no,
                user_text=item_text(prepared.user),
                attachments=meta(prepared.user).get("attachments") or [],
                provider=client.provider,
                model=client.model,
                **record_fields(result),
            )
        except (SQLAlchemyError, KeyError):  # KeyError: the interview is not this person's
            notices.append(NOTICE_NOT_RECORDED)
    return TurnOutcome(
        ok=bool(result["ok"]),
        user=prepared.user,
        reply=reply,
        knowledge=result["knowledge"] if result["ok"] else None,
        interview_id=prepared.interview_id,
        notices=notices,
        result=result,
        references=list(prepared.references),
    )


def _complete(
    items: list[ChatItem],
    prepared: PreparedTurn,
    *,
    repo: KnowledgeRepository,
    client: LLMClient,
    sink: DebugSink | None,
    secrets: Iterable[str],
    system_prompt: str | None,
) -> TurnOutcome:
    result = call_turn(prepared, client, sink=sink, secrets=secrets, system_prompt=system_prompt)
    return finish_turn(items, prepared, result, repo=repo, client=client)


class InterviewArchived(Exception):
    """A turn on an archived interview is refused (an archived interview is kept as it was, for
    audit, until it is restored); nothing is appended, called or recorded."""

    def __init__(self, interview_id: str):
        super().__init__(interview_id)
        self.interview_id = interview_id


def refuse_archived(repo: KnowledgeRepository, interview_id: str | None) -> None:
    """Raise InterviewArchived when `interview_id` is one of the person's archived interviews."""
    if interview_id is None:
        return
    row = repo.get_interview(interview_id)
    if row is not None and row.get("archived_at") is not None:
        raise InterviewArchived(interview_id)


def run_turn(
    items: list[ChatItem],
    turn_input: TurnInput,
    *,
    interview_id: str | None,
    client: LLMClient,
    repo: KnowledgeRepository,
    sink: DebugSink | None = None,
    secrets: Iterable[str] = (),
    system_prompt: str | None = None,
    on_added: Callable[[ChatItem], None] | None = None,
    index: KnowledgeIndex | None = None,
) -> TurnOutcome:
    """One interview turn (spec 00): prepare_turn -> call_turn -> finish_turn.

    `on_added` is called with the user's item once it is in the conversation, before the call (the page
    shows it at once). `index`: the knowledge base's vector index (similar entries as reference).
    Raises InterviewArchived (before anything is appended) when the interview is archived.
    """
    if turn_input.is_empty:
        raise ValueError("a turn needs text or an attachment")
    refuse_archived(repo, interview_id)
    prepared = prepare_turn(
        items, turn_input, interview_id=interview_id, repo=repo, client=client, index=index
    )
    if on_added is not None:
        on_added(prepared.user)
    return _complete(
        items, prepared, repo=repo, client=client, sink=sink, secrets=secrets, system_prompt=system_prompt
    )


def retry_turn(
    items: list[ChatItem],
    *,
    interview_id: str | None,
    client: LLMClient,
    repo: KnowledgeRepository,
    sink: DebugSink | None = None,
    secrets: Iterable[str] = (),
    system_prompt: str | None = None,
    index: KnowledgeIndex | None = None,
) -> TurnOutcome | None:
    """再試行: drop a trailing failed reply and send its user input again (same turn number, same payload).

    Also answers an input left without a reply (an interrupted run). None when there is nothing to retry.
    Raises InterviewArchived (the conversation untouched) when the interview is archived.
    """
    refuse_archived(repo, interview_id)
    user = pop_failed_turn(items)
    if user is None:
        return None
    title = item_text(user) or next((a.get("name") or "" for a in meta(user).get("attachments") or []), "")
    prepared = _prepare(items, user, title, interview_id=interview_id, repo=repo, client=client, index=index)
    return _complete(
        items, prepared, repo=repo, client=client, sink=sink, secrets=secrets, system_prompt=system_prompt
    )
