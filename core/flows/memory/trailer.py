"""Hidden persona-affect trailer: withhold it from the stream, then parse and validate it (spec 03: chat SSE).

The reply ends with TRAILER_MARKER and one JSON object on the next line. The marker may arrive split
across stream chunks, so `TrailerSplitter` holds back the last `len(marker) - 1` characters until it
knows they are not the start of the marker.
"""

from __future__ import annotations

from typing import Any

from core.contracts.schemas import load_schema, validation_errors
from core.flows.memory.constants import TRAILER_MARKER
from core.guard.clamps import clamp_numbers
from core.guard.local_repair import parse_json_locally

TRAILER_SCHEMA = "memory_persona_affect"


class TrailerSplitter:
    """Split a streamed reply into the text to show and the trailer after the marker."""

    def __init__(self, marker: str = TRAILER_MARKER):
        self.marker = marker
        self._held = ""
        self._trailer: list[str] | None = None
        self._shown: list[str] = []

    def feed(self, chunk: str) -> str:
        """Take one chunk; return the text that is safe to show now (possibly empty)."""
        if self._trailer is not None:
            self._trailer.append(chunk)
            return ""
        self._held += chunk
        index = self._held.find(self.marker)
        if index >= 0:
            out = self._held[:index]
            self._trailer = [self._held[index + len(self.marker) :]]
            self._held = ""
            return self._show(out)
        keep = len(self.marker) - 1
        if len(self._held) <= keep:
            return ""
        out, self._held = self._held[: len(self._held) - keep], self._held[len(self._held) - keep :]
        return self._show(out)

    def finish(self) -> tuple[str, str | None]:
        """End of stream: (remaining visible text, trailer text or None when there was no marker)."""
        if self._trailer is None:
            out, self._held = self._held, ""
            return self._show(out), None
        return "", "".join(self._trailer).strip()

    @property
    def visible_text(self) -> str:
        """Everything shown so far, without trailing whitespace (what the episode stores as the reply)."""
        return "".join(self._shown).rstrip()

    def _show(self, text: str) -> str:
        self._shown.append(text)
        return text


def parse_trailer(trailer_text: str | None) -> tuple[dict[str, Any] | None, list[str]]:
    """Parse and validate the trailer JSON locally (no LLM call); (data, notes) or (None, errors). Numbers
    just out of range are clamped, each with a note, instead of throwing the trailer away."""
    if trailer_text is None:
        return None, ["trailer marker not found"]
    if not trailer_text.strip():
        return None, ["trailer is empty"]
    parsed = parse_json_locally(trailer_text)
    if not parsed.ok:
        return None, [parsed.error or "trailer is not JSON"]
    schema = load_schema(TRAILER_SCHEMA)
    value, notes = clamp_numbers(parsed.value, schema)
    errors = validation_errors(schema, value)
    if errors:
        return None, errors
    return value, notes


def split_raw_reply(raw: str) -> tuple[str, str | None]:
    """A whole raw chat reply as (the text the person saw, the trailer's JSON text) — None when the reply
    carries no trailer marker (for showing a recorded reply readably; the raw stays as it was)."""
    index = raw.find(TRAILER_MARKER)
    if index < 0:
        return raw, None
    return raw[:index].rstrip(), raw[index + len(TRAILER_MARKER) :].strip()
