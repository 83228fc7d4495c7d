"""Text made safe once, where it enters storage (ARCHITECTURE "text is made safe once ...").

One person's text is read by everyone on a shared page and written into files others open (DOCX, CSV,
Markdown). A character that XML, a CSV reader or the database cannot hold there would break that page or
file for everyone, so every writer (knowledge base, review material, feedback, memory edits, model replies
before they are stored, titles) passes its text through `safe_text` first:

- CR LF and lone CR become LF; U+000B (Word's manual line break), U+000C, U+0085 and U+2028/U+2029 become LF;
- every other C0/C1 control character (NUL, ESC, DEL, ...) is removed; tab and LF stay;
- a lone surrogate (which UTF-8 cannot encode) becomes U+FFFD; U+FFFE/U+FFFF (not XML characters) are removed;
- a length bound per field: too long is a Japanese message naming the field (the writer refuses or, for a
  model reply, which has no person to ask, keeps the start with `truncate=True`).

`changed` says whether anything but line endings changed, so a page can tell the person
「制御文字を取り除きました」 where it changed what they typed. Idempotent and linear in the length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CHANGED_NOTICE = "制御文字を取り除きました。"
REPLACEMENT = "\ufffd"

# Per-field bounds (characters). Generous for what people write, small enough that one field cannot stall a page.
TITLE_MAX_CHARS = 200
FIELD_MAX_CHARS = 20_000  # one knowledge-base field, an item of a review, a memory text
COMMENT_MAX_CHARS = 2_000  # a feedback comment
DOCUMENT_MAX_CHARS = 200_000  # a question, an answer, a model reply (matches the answer paste bound)

_NEWLINES = re.compile("\r\n|[\r\x0b\x0c\x85\u2028\u2029]")
_REMOVED = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class SafeText:
    """Cleaned text, whether cleaning changed more than line endings, and a Japanese problem (too long)."""

    text: str
    changed: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def clean_text(value: object) -> tuple[str, bool]:
    """(the text with control characters normalised and lone surrogates replaced, whether that changed it
    beyond CR LF -> LF). Anything that is not a string is turned into one first."""
    text = value if isinstance(value, str) else ("" if value is None else str(value))
    lf = text.replace("\r\n", "\n")
    out = _NEWLINES.sub("\n", lf)
    out = _REMOVED.sub("", out)
    out = _SURROGATE.sub(REPLACEMENT, out)
    return out, out != lf


def too_long_message(label: str, max_chars: int) -> str:
    """「ナレッジ名は 200 文字以内にしてください（いまは 250 文字）。」 without the current count."""
    return f"{label}は {max_chars:,} 文字以内にしてください。"


def safe_text(
    value: object, label: str = "入力", max_chars: int | None = None, *, truncate: bool = False
) -> SafeText:
    """`value` made safe for storage; over `max_chars` is an error naming `label`, or (with `truncate`, for text
    nobody can shorten such as a model reply) cut to the bound and marked changed."""
    text, changed = clean_text(value)
    if max_chars is not None and len(text) > max_chars:
        if truncate:
            return SafeText(text[:max_chars], True)
        return SafeText(
            text, changed, f"{too_long_message(label, max_chars)[:-1]}（いまは {len(text):,} 文字）。"
        )
    return SafeText(text, changed)


def safe_fields(
    values: dict[str, object], labels: dict[str, str], limits: dict[str, int]
) -> tuple[dict[str, str], bool, list[str]]:
    """Every field of a form through `safe_text`: (cleaned values, whether any changed, Japanese problems in
    field order). Fields without a limit in `limits` are cleaned but not bounded."""
    cleaned: dict[str, str] = {}
    changed = False
    errors: list[str] = []
    for key, value in values.items():
        result = safe_text(value, labels.get(key, key), limits.get(key))
        cleaned[key] = result.text
        changed |= result.changed
        if result.error:
            errors.append(result.error)
    return cleaned, changed, errors


def safe_value(value: object) -> object:
    """Every string inside a JSON-like value cleaned (keys too); other values unchanged. For JSON stored as is
    (a review's JSON, an item's extra keys)."""
    if isinstance(value, str):
        return clean_text(value)[0]
    if isinstance(value, dict):
        return {clean_text(k)[0] if isinstance(k, str) else k: safe_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [safe_value(v) for v in value]
    return value
