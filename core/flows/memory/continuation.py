"""「続きを生成」 and 「再試行」 of a companion reply cut short (spec 03: chat SSE).

The continuation rebuilds the turn's messages (retrieval and mood as of now), adds the partial reply as the
assistant's and the instruction to go on (core.guard.continuation), streams with the trailer withheld, appends
what arrives, and stores the longer reply as a versioned edit of the episode (re-indexed). A retry deletes
the cut episode for good (with what was derived from it) and hands back the input to send again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.debuglog import trace
from core.debuglog.events import DebugSink
from core.flows.chat_item import ChatItem, history, meta
from core.flows.memory.chat import ReplyStream, prepare_turn
from core.flows.memory.constants import FLOW
from core.flows.memory.deletion import hard_delete
from core.flows.memory.versions import edit_unit
from core.guard.continuation import CONTINUE_LABEL, continuation_messages, cut_text, join_continuation
from core.guard.json_guard import GuardResult, guarded_stream
from core.llm.base import LLMClient, Message
from core.store.memory.repository import MemoryRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection


@dataclass
class MemoryContinuation:
    index: int  # of the cut reply in the chat list
    episode_id: int
    partial: str
    messages: list[Message]
    now: int
    conversation_id: str = ""  # the trace of the cut turn (core.debuglog.trace)
    turn: int = 0
    user_input: str = ""


def _cut_reply(items: Sequence[Mapping[str, Any]]) -> int | None:
    if len(items) >= 2 and items[-1]["role"] == "assistant" and items[-1]["status"] == "truncated":
        return len(items) - 1
    return None


def _episode_id(item: Mapping[str, Any]) -> int | None:
    details = meta(item).get("details") or {}
    value = details.get("episode_id")
    return int(value) if value is not None else None


def prepare_continuation(
    repo: MemoryRepository, collection: Collection | None, items: list[ChatItem], now: int | None = None
) -> MemoryContinuation | None:
    """The continuation of the chat's last reply, or None when it is not a stored reply cut short."""
    index = _cut_reply(items)
    episode_id = _episode_id(items[index]) if index is not None else None
    if index is None or episode_id is None:
        return None
    prepared = prepare_turn(repo, collection, history(items[: index - 1]), items[index - 1]["content"], now)
    partial = items[index]["content"]
    messages = continuation_messages(prepared.messages, partial)
    return MemoryContinuation(
        index,
        episode_id,
        partial,
        messages,
        prepared.now,
        prepared.conversation_id,
        prepared.turn,
        prepared.user_input,
    )


def stream_continuation(
    client: LLMClient, cont: MemoryContinuation, sink: DebugSink | None = None
) -> ReplyStream:
    """The continuation, streamed with the trailer withheld (tags step=continue), logged under the cut turn."""
    with trace.bind(
        flow=FLOW, conversation_id=cont.conversation_id, turn=cont.turn, user_input=cont.user_input
    ):
        stream = guarded_stream(
            client, cont.messages, sink=sink, tags={"flow": FLOW, "step": "continue"}, max_tokens=1200
        )
    return ReplyStream(stream)


def finish_continuation(
    repo: MemoryRepository,
    collection: Collection | None,
    items: list[ChatItem],
    cont: MemoryContinuation,
    reply: ReplyStream,
) -> GuardResult[str] | None:
    """Append what arrived to the reply and store it as an edit of the episode; a failure with nothing to
    add leaves the reply as it was and returns the failed result."""
    result = reply.result
    more = reply.visible_text
    if result is None or not more.strip() or (not result.ok and cut_text(result) is None):
        return result
    item = items[cont.index]
    item["content"] = join_continuation(cont.partial, more)
    item["status"] = "truncated" if cut_text(result) is not None else "done"
    edit_unit(repo, collection, cont.episode_id, {"reply_text": item["content"]}, cont.now, CONTINUE_LABEL)
    return None


def continue_memory_reply(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    items: list[ChatItem],
    *,
    now: int | None = None,
    sink: DebugSink | None = None,
) -> GuardResult[str] | None:
    """prepare -> stream (consumed) -> finish; None when continued (or nothing to continue), else the failure."""
    cont = prepare_continuation(repo, collection, items, now)
    if cont is None:
        return None
    reply = stream_continuation(client, cont, sink)
    for _ in reply:
        pass
    return finish_continuation(repo, collection, items, cont, reply)


def discard_cut_memory_turn(
    repo: MemoryRepository, collection: Collection | None, items: list[ChatItem]
) -> str | None:
    """「再試行」 of a cut reply: delete its episode for good, remove the rally from the chat, and return the
    input to send again (None when the chat does not end in a cut reply)."""
    index = _cut_reply(items)
    if index is None:
        return None
    episode_id = _episode_id(items[index])
    question = items[index - 1]["content"]
    del items[index - 1 :]
    if episode_id is not None:
        hard_delete(repo, collection, episode_id)
    return question
