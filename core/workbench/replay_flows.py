"""How each flow is replayed, read from the flow registry (core.flows.registry.FlowInfo): its runner on a
fresh temporary store, the steps compared, and its key fields of a turn (knowledge: phase; memory: the
persona's affect; diagnosis: the interview's action and the urgency level; review chat: none, text only).

The store is SQLite in a temporary directory, deleted after; diagnosis searches the manuals it is given.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from core.flows.diagnosis import ManualSearch
from core.flows.registry import FLOWS
from core.flows.replaying import Call, Runner
from core.flows.review_chat import ReviewRecord
from core.llm.base import LLMClient
from core.store import open_store

__all__ = [
    "CALL_FREE_TURNS",
    "KEY_LABELS",
    "PRIMARY_STEPS",
    "REPLAYABLE",
    "REQUEST_TURNS",
    "SECOND_KEY_LABELS",
    "Call",
    "Runner",
    "open_runner",
    "turn_keys",
]

# The calls of a turn that are compared (background summaries and extraction are left out).
PRIMARY_STEPS = {name: info.primary_steps for name, info in FLOWS.items()}
KEY_LABELS = {name: info.key_label for name, info in FLOWS.items() if info.key_label}
SECOND_KEY_LABELS = {name: info.second_key_label for name, info in FLOWS.items() if info.second_key_label}
CALL_FREE_TURNS = frozenset(name for name, info in FLOWS.items() if info.call_free_turns)
REQUEST_TURNS = frozenset(name for name, info in FLOWS.items() if info.request_turns)
REPLAYABLE = tuple(FLOWS)


def turn_keys(flow: str, calls: Sequence[Call]) -> tuple[str, str]:
    """The flow's key field of a turn and its second key field, if any."""
    return FLOWS[flow].turn_keys(calls)


@contextmanager
def open_runner(
    flow: str, client: LLMClient, *, rag: ManualSearch | None = None, review: ReviewRecord | None = None
) -> Iterator[Runner]:
    """A runner for `flow` on a fresh SQLite store in a temporary directory (removed afterwards); `rag`
    is the manual search diagnosis uses, `review` the review a review-chat thread was about (the sample
    review when None); other flows ignore them.

    Raises KeyError for a flow that is not replayable.
    """
    replay = FLOWS[flow].replay
    with tempfile.TemporaryDirectory(prefix="katachi-replay-") as tmp:
        engine = open_store(tmp)
        try:
            yield replay(engine, client, {"rag": rag, "review": review})
        finally:
            engine.dispose()
