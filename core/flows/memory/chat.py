"""One persona chat turn (spec 03: chat SSE): retrieve -> stream with the trailer withheld
-> save the episode; then ONE background job (reflection when the trailer is missing, extraction, summaries).

The page drives it in three calls so it can stream: `prepare_turn`, iterate `stream_reply(...)`,
`finish_turn`. `run_turn` does all three for scripts and tests. The turn owns the store writes and schedules
what follows the reply (core/flows/memory/background.py): on a worker, so the person can type again as soon
as the reply is shown, or inline when no worker is given. The page draws the outcome
(core/flows/memory/items.py turns it into a ChatItem) and reads the job's results back from the store.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.contracts.prompts import fill, load_prompt
from core.debuglog import trace
from core.debuglog.events import DebugSink
from core.flows.memory.background import memory_job_key, run_memory_job
from core.flows.memory.constants import CHAT_HISTORY_MESSAGES, DEFAULT_EXTRACTION, FLOW, TRAILER_MARKER
from core.flows.memory.deletion import hard_delete
from core.flows.memory.extraction import (
    DEFAULT_REFLECTION,
    REFLECTION_PENDING,
    ExtractionOutcome,
    format_time,
)
from core.flows.memory.indexing import index_units
from core.flows.memory.mood import Mood, load_mood
from core.flows.memory.retrieval import RetrievalResult, format_pack, retrieve, save_trace
from core.flows.memory.summaries import SummaryOutcome
from core.flows.memory.tasks import MEMORY_TURN_TASK, episode_dedupe
from core.flows.memory.trailer import TrailerSplitter, parse_trailer
from core.guard.continuation import cut_text
from core.guard.json_guard import GuardedStream, GuardResult, guarded_stream
from core.jobs.queue import JobQueue
from core.jobs.tasks import JobContext
from core.llm.base import LLMClient, Message
from core.store.memory.repository import MemoryRepository

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    from chromadb.api.models.Collection import Collection

# TurnOutcome.background: where the work after the reply went.
INLINE, QUEUED, DEFERRED = "inline", "queued", "deferred"  # deferred: the queue was full (retried later)


def build_chat_messages(
    history: Sequence[Mapping[str, Any]], user_input: str, pack_text: str, mood_text: str, now: int
) -> list[Message]:
    """[system = persona anchor + memory pack + mood policy + trailer rules, last 12 messages, user input]."""
    system = fill(
        load_prompt("memory_chat_system"),
        PERSONA_ANCHOR=load_prompt("persona_anchor").strip(),
        MEMORY_PACK=pack_text,
        MOOD_POLICY=mood_text,
        NOW=format_time(now),
        TRAILER_MARKER=TRAILER_MARKER,
    )
    recent = [
        {"role": m["role"], "content": m["content"]}
        for m in history[-CHAT_HISTORY_MESSAGES:]
        if m.get("role") in ("user", "assistant") and m.get("content")
    ]
    return [{"role": "system", "content": system}, *recent, {"role": "user", "content": user_input}]


@dataclass
class PreparedTurn:
    user_input: str
    messages: list[Message]
    retrieval: RetrievalResult
    mood: Mood
    now: int
    purged_loops: list[int] = field(default_factory=list)
    conversation_id: str = ""  # the trace's conversation: the page's chat id (ratings use it too)
    turn: int = 0  # 1-based rally of the chat on the page (done rallies + 1)

    def trace(self) -> AbstractContextManager[trace.Trace]:
        """Bind the memory flow, the person's conversation, the turn and its input (core.debuglog.trace)."""
        return trace.bind(
            flow=FLOW, conversation_id=self.conversation_id, turn=self.turn, user_input=self.user_input
        )


def turn_number(history: Sequence[Mapping[str, Any]]) -> int:
    """The 1-based number of the next rally: the person's messages in `history`, plus one."""
    return sum(1 for m in history if m.get("role") == "user") + 1


def purge_expired_loops(repo: MemoryRepository, collection: Collection | None, now: int) -> list[int]:
    """Hard-delete loops whose expiry has passed (spec 03: サーバ側が自動削除)."""
    ids = repo.expired_loop_ids(now)
    doomed = [uid for unit_id in ids for uid in hard_delete(repo, None, unit_id).unit_ids]
    if collection is not None and doomed:  # one Chroma call for all (~0.1 s each on a busy machine)
        collection.delete(ids=[str(uid) for uid in doomed])
    return ids


def prepare_turn(
    repo: MemoryRepository,
    collection: Collection | None,
    history: Sequence[Mapping[str, Any]],
    user_input: str,
    now: int | None = None,
    conversation_id: str = "",
) -> PreparedTurn:
    """Purge expired loops, retrieve memories (no LLM), read the mood, and build the message stack
    (spec 03: chat SSE). `history` is the conversation so far (done rallies); `now` defaults to the clock.
    `conversation_id` names the chat in the trace and in ratings (the page's per-session id; default: the
    person's id)."""
    now = repo.now() if now is None else now
    purged = purge_expired_loops(repo, collection, now)
    result = retrieve(repo, collection, history, user_input, now)
    with repo.connect() as conn:
        mood = load_mood(conn, repo.owner_id, now)
    messages = build_chat_messages(history, user_input, format_pack(result), mood.describe(), now)
    conversation = conversation_id or repo.owner_id
    return PreparedTurn(user_input, messages, result, mood, now, purged, conversation, turn_number(history))


class ReplyStream:
    """Iterate for the text to show (the trailer is withheld); then read visible_text, trailer_text, result."""

    def __init__(self, stream: GuardedStream):
        self._stream = stream
        self.call_id = stream.call_id  # the reply call: the turn's background calls hang under it
        self.splitter = TrailerSplitter()
        self.trailer_text: str | None = None
        self.result: GuardResult[str] | None = None

    def __iter__(self) -> Iterator[str]:
        for delta in self._stream:
            shown = self.splitter.feed(delta)
            if shown:
                yield shown
        rest, self.trailer_text = self.splitter.finish()
        if rest:
            yield rest
        self.result = self._stream.result

    @property
    def visible_text(self) -> str:
        return self.splitter.visible_text


def stream_reply(client: LLMClient, prepared: PreparedTurn, sink: DebugSink | None = None) -> ReplyStream:
    """The streamed chat reply through guarded_text (tags flow=memory, step=chat), logged under the
    person's conversation and the turn (core.debuglog.trace)."""
    with prepared.trace():
        stream = guarded_stream(
            client, prepared.messages, sink=sink, tags={"flow": FLOW, "step": "chat"}, max_tokens=1200
        )
    return ReplyStream(stream)


@dataclass
class TurnOutcome:
    ok: bool
    reply_text: str = ""
    episode_id: int | None = None
    trace_id: int | None = None
    trailer: dict[str, Any] | None = None
    trailer_errors: list[str] = field(default_factory=list)
    reflection: dict[str, Any] = field(default_factory=dict)
    reflection_source: str = ""  # trailer | reflection | default | pending (the job fills it in)
    extraction: ExtractionOutcome | None = None  # set when the job ran inline
    retried: list[ExtractionOutcome] = field(default_factory=list)
    summaries: list[SummaryOutcome] = field(default_factory=list)
    background: str = ""  # inline | queued | deferred
    job_id: str | None = None
    error: str = ""
    error_type: str | None = None
    raw: str = ""
    truncated: bool = False  # the reply was cut short: token limit or a broken stream (shown, kept, marked)


def finish_turn(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    prepared: PreparedTurn,
    reply: ReplyStream,
    sink: DebugSink | None = None,
    *,
    worker: JobQueue | None = None,
    job_sink: DebugSink | None = None,
    extraction: str = DEFAULT_EXTRACTION,
) -> TurnOutcome:
    """Validate the trailer locally and save the episode (spec 03: chat SSE) with the trailer's reflection, or
    a default one marked pending when the trailer is missing or invalid; then hand what follows to ONE job
    (core/flows/memory/background.py) on `worker` under the person's key (the repository's owner) and
    return at once: one model call (the
    reply) on the send path. Without a worker the job runs inline and its results are on the outcome. A
    full queue leaves the episode pending: the retry of pending extractions catches up later. The job's
    calls go to `job_sink` (default `sink`)."""
    now = prepared.now
    result = reply.result
    cut = cut_text(result) is not None and bool(reply.visible_text.strip())
    if result is None or (not result.ok and not cut):
        if result is None:
            return TurnOutcome(False, reply.visible_text, error="応答が完了しませんでした。")
        return TurnOutcome(
            False, reply.visible_text, error=result.message, error_type=result.error_type, raw=result.raw
        )
    text = reply.visible_text
    trailer, errors = parse_trailer(reply.trailer_text)
    reflection, source = (trailer, "trailer") if trailer else (dict(DEFAULT_REFLECTION), REFLECTION_PENDING)
    with repo.begin() as conn:
        episode_id = repo.save_episode(
            prepared.user_input, text, reflection, source=source, occurred_at=now, now=now, conn=conn
        )
        index_units(conn, collection, [episode_id])
        trace_id = save_trace(conn, repo.owner_id, prepared.retrieval, now, "chat", episode_id)
    outcome = TurnOutcome(True, text, episode_id, trace_id, trailer, errors, reflection, source)
    outcome.raw, outcome.truncated = result.raw, cut
    job_sink = sink if job_sink is None else job_sink
    # reflection, extraction and summaries hang under the reply (the worker keeps this context)
    with prepared.trace(), trace.child_of(reply.call_id):
        return _follow_up(repo, collection, client, outcome, worker, job_sink, extraction, now)


def _follow_up(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    outcome: TurnOutcome,
    worker: JobQueue | None,
    job_sink: DebugSink | None,
    extraction: str,
    now: int,
) -> TurnOutcome:
    """The job after a saved reply: queued on `worker` (QUEUED / DEFERRED), else run inline."""
    episode_id = outcome.episode_id
    assert episode_id is not None
    if worker is not None:
        # the live repository and collection ride along for the in-process worker; an engine's worker
        # rebuilds them from the ids
        context = JobContext(repo.engine, client, job_sink, live={"repo": repo, "collection": collection})
        args = {"owner": repo.owner_id, "episode_id": episode_id, "now": now, "mode": extraction}
        job = worker.defer(
            MEMORY_TURN_TASK, memory_job_key(repo.owner_id), args, context, dedupe=episode_dedupe(episode_id)
        )
        outcome.background, outcome.job_id = (QUEUED, job.id) if job else (DEFERRED, None)
        return outcome
    done = run_memory_job(repo, collection, client, episode_id, now, job_sink, extraction)
    outcome.background, outcome.extraction = INLINE, done.extraction
    outcome.retried, outcome.summaries = done.retried, done.summaries
    if done.reflection is not None:
        outcome.reflection, outcome.reflection_source = done.reflection
    return outcome


def run_turn(
    repo: MemoryRepository,
    collection: Collection | None,
    client: LLMClient,
    history: list[dict[str, Any]],
    user_input: str,
    now: int | None = None,
    sink: DebugSink | None = None,
    *,
    worker: JobQueue | None = None,
    extraction: str = DEFAULT_EXTRACTION,
    conversation_id: str = "",
) -> tuple[PreparedTurn, TurnOutcome]:
    """prepare_turn + consume the stream + finish_turn (scripts, tests, sample data)."""
    prepared = prepare_turn(repo, collection, history, user_input, now, conversation_id)
    reply = stream_reply(client, prepared, sink)
    for _ in reply:
        pass
    outcome = finish_turn(
        repo, collection, client, prepared, reply, sink, worker=worker, extraction=extraction
    )
    return prepared, outcome
