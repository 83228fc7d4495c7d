"""The notes of the debug log, by kind: every note (short or blank assistant_message, strict
downgrade, dropped history, ...) shown on its call and filterable. No Streamlit.

Notes are free text in two places: the `notes` list of a call / error event (what the client or guard
noticed on that attempt) and `kind == "note"` events (what a flow noticed after the call). `note_kind`
sorts a note into a kind by its wording; anything else is 「その他」.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from core.debuglog.events import DebugEvent
from core.workbench.tree import CallNode

OTHER = "その他"
# (kind, pattern), first match wins; patterns follow the wording of the notes the code writes.
KINDS: list[tuple[str, re.Pattern[str]]] = [
    ("短い・空の返答", re.compile(r"assistant_message|短すぎ|空の返答|空です|blank|short reply", re.I)),
    ("形式の格下げ", re.compile(r"downgrad|格下げ|json_object|strict", re.I)),
    ("履歴の省略", re.compile(r"履歴|history|dropped|省き|省略", re.I)),
    ("切り詰め", re.compile(r"切り詰め|文字だけを表示|上限で途中|truncat", re.I)),
    ("数値の補正", re.compile(r"範囲外|丸めました|clamp", re.I)),
    ("障害の注入", re.compile(r"fault injected", re.I)),
    (
        "プロバイダーエラー",
        re.compile(r"^(timeout|rate_limit|server_error|auth|connection|bad_request|malformed|missing_key):"),
    ),
]


@dataclass(frozen=True)
class Note:
    """One note of a call: its kind, its text, and the attempt it was written on (0: a note event)."""

    kind: str
    text: str
    attempt: int = 0


def note_kind(text: str) -> str:
    """The kind of a note by its wording (「その他」 when nothing matches)."""
    for kind, pattern in KINDS:
        if pattern.search(text):
            return kind
    return OTHER


def event_notes(event: DebugEvent) -> list[Note]:
    """The notes of one event (a note event's text is its `notes`, else its errors)."""
    texts = event.notes or (event.errors if event.kind == "note" else [])
    attempt = event.attempt if event.kind in ("call", "error") else 0
    return [Note(note_kind(text), text, attempt) for text in texts if text]


def call_notes(node: CallNode) -> list[Note]:
    """Every note of a call: those on its attempts, then its note events (children not included)."""
    return [note for event in (*node.attempts, *node.notes) for note in event_notes(event)]


def note_kinds(notes: Iterable[Note]) -> list[str]:
    """The distinct kinds among `notes`, in the order of KINDS (「その他」 last)."""
    present = {n.kind for n in notes}
    return [kind for kind, _ in KINDS if kind in present] + ([OTHER] if OTHER in present else [])
