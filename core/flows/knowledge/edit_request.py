"""A request to change one item of the knowledge draft, read from what the person wrote (spec 00 review_knowledge).

「対応方針を「…」に変更してください」, 「ナレッジ名は…にして」, 「審査ポイントに「…」を追記して」: which item, the new
text when it was given, and whether it is added to the item rather than replacing it. The demo interviewer
applies it; the flow checks a model did (a draft returned unchanged after a request is reported to the page).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# item -> the words staff use for it, longest first so 「審査のポイント」 wins over shorter overlaps
ITEM_WORDS: dict[str, tuple[str, ...]] = {
    "knowledge_title": ("ナレッジ名", "ナレッジのタイトル", "タイトル", "見出し"),
    "contract_type": ("契約書の種類", "契約の種類", "契約種別"),
    "target_clause": ("対象条項",),
    "review_points": ("審査のポイント", "審査ポイント"),
    "action_plan": ("対応方針",),
    "clause_sample": ("条項サンプル", "サンプル文言", "条項の修正例", "修正例"),
}
ITEM_LABELS = {
    "knowledge_title": "ナレッジ名",
    "contract_type": "契約書の種類",
    "target_clause": "対象条項",
    "review_points": "審査ポイント",
    "action_plan": "対応方針",
    "clause_sample": "条項サンプル",
}
_CHANGE = r"(?:変更|修正|直し|直す|直して|変え|書き換え|差し替え|改め|して|する|に)"
_CHANGE_WORD = re.compile(
    r"変更|修正|直し|直す|直して|変え|書き換え|差し替え|改め|追記|追加|加え|にして|にする|として"
)
_APPEND_WORD = re.compile(r"追記|追加|加え|足し")
# 「もう少し具体的に」: how to change it, not the new text (the interviewer asks for the text)
_VAGUE = re.compile(r"^(?:もう少し|もっと|少し|より|全体的に|簡潔)|的$")


@dataclass(frozen=True)
class EditRequest:
    """Which draft item to change; `value` None when the new text was not given (ask for it)."""

    item: str
    value: str | None = None
    append: bool = False

    @property
    def label(self) -> str:
        return ITEM_LABELS[self.item]


def _mentioned(text: str) -> tuple[str, str, int] | None:
    """(item, the word used, where) of the first item the text names."""
    found = [
        (text.find(word), item, word) for item, words in ITEM_WORDS.items() for word in words if word in text
    ]
    if not found:
        return None
    where, item, word = min(found, key=lambda f: (f[0], -len(f[2])))
    return item, word, where


def _outer_quote(text: str) -> str | None:
    """The text inside the outermost 「」 (nested 「」 kept), or None."""
    start = text.find("「")
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "「":
            depth += 1
        elif text[i] == "」":
            depth -= 1
            if depth == 0:
                return text[start + 1 : i].strip() or None
    return None


def read_edit_request(text: str) -> EditRequest | None:
    """The edit request in one message, or None when it names no draft item together with a change."""
    text = (text or "").strip()
    mentioned = _mentioned(text)
    if mentioned is None or not _CHANGE_WORD.search(text):
        return None
    item, word, where = mentioned
    after = text[where + len(word) :]
    append = bool(_APPEND_WORD.search(after))
    quoted = _outer_quote(after)
    if quoted:
        return EditRequest(item, quoted, append)
    unquoted = re.match(rf"\s*(?:は|を|について(?:は)?)\s*[、,]?\s*(.+?)\s*(?:に|へ|と)\s*{_CHANGE}", after)
    value = unquoted.group(1).strip("、。 ") if unquoted else ""
    if value and not _CHANGE_WORD.fullmatch(value) and not _VAGUE.search(value):
        return EditRequest(item, value, append)
    return EditRequest(item, None, append)
