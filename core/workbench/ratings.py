"""Ratings of replies beside the debug log: which calls belong to a rated turn.

A rating is stored per (flow, conversation, turn) (core.flows.feedback); a debug event carries the same
three trace fields (core.debuglog.trace), so every call of a rated turn, background calls included, shows the
rating, and "calls with negative feedback" are the calls of turns rated 👎. Exports carry the rating on
each event of a rated turn (JSONL key `feedback`), so an imported log shows it too. Pure data.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from core.debuglog.events import DebugEvent

Key = tuple[str, str, int]
Ratings = dict[Key, dict[str, Any]]  # value: {"score": 0|1, "rating": "👎"|"👍", "comment": str}
NEGATIVE = 0


def ratings_from_rows(rows: Iterable[Mapping[str, Any]]) -> Ratings:
    """Ratings keyed by (flow, conversation_id, turn), from core.flows.feedback.feedback_rows."""
    return {
        (str(r["flow"]), str(r["conversation_id"]), int(r["turn"])): {
            "score": int(r["score"]),
            "rating": str(r["rating"]),
            "comment": str(r.get("comment") or ""),
        }
        for r in rows
    }


def key_of(event: DebugEvent) -> Key | None:
    """The rating key of an event's turn (None outside a numbered turn of a conversation)."""
    if not event.conversation_id or event.turn < 1:
        return None
    return (event.flow, event.conversation_id, event.turn)


def rating_of(event: DebugEvent, ratings: Mapping[Key, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The rating of the turn the event belongs to, or None."""
    key = key_of(event)
    return ratings.get(key) if key is not None else None


def is_negative(event: DebugEvent, ratings: Mapping[Key, Mapping[str, Any]]) -> bool:
    rating = rating_of(event, ratings)
    return rating is not None and rating.get("score") == NEGATIVE


def ratings_from_jsonl(text: str) -> Ratings:
    """The ratings an exported JSONL log carries (its lines' `feedback` keys); lines that are not JSON
    objects are skipped (events_from_jsonl reports those)."""
    out: Ratings = {}
    for line in text.splitlines():
        try:
            data = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("feedback"), dict):
            continue
        try:
            key = (str(data["flow"]), str(data["conversation_id"]), int(data["turn"]))
            fb = data["feedback"]
            out[key] = {"score": int(fb["score"]), "rating": str(fb["rating"]), "comment": str(fb["comment"])}
        except (KeyError, TypeError, ValueError):
            continue
    return out
