"""Paragraph persistence across turns: §N holds for turns T, T+1, T+2 (spec 02 §N の持続)."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from core.flows.review_chat.constants import PARAGRAPH_PERSIST_TURNS
from core.flows.review_chat.models import ThreadState
from core.flows.review_chat.paragraphs import extract_paragraph_numbers_from_user_input


def current_turn(chat_history: list[Any]) -> int:
    """spec 02: `current_turn = (len(chat_history) // 2) + 1` (1-indexed; history of completed rallies)."""
    return len(chat_history) // 2 + 1


def paragraph_numbers_json(numbers: list[int]) -> str:
    """The `last_section_paragraph_numbers` column text, e.g. `"[1,3,5]"`."""
    return json.dumps(sorted(set(numbers)), separators=(",", ":"))


@dataclass
class ParagraphDecision:
    """Which paragraph numbers this turn uses and why, and the thread state after the turn names any."""

    numbers: list[int]
    source: str  # input | carried | none
    from_turn: int | None  # the turn T whose input named the numbers
    turn: int
    state: ThreadState

    @property
    def override(self) -> list[int] | None:
        """`paragraph_numbers_override` for the context builder (the carried numbers only)."""
        return self.numbers if self.source == "carried" else None

    def describe(self) -> str:
        """A Japanese line for the page: which rule fired."""
        labels = "、".join(f"§{n}" for n in self.numbers)
        if self.source == "input":
            return f"ターン{self.turn}の入力で {labels} を指定"
        if self.source == "carried":
            assert self.from_turn is not None
            last = self.from_turn + PARAGRAPH_PERSIST_TURNS
            return f"ターン{self.from_turn}で指定された {labels} を持続（ターン{last}まで）"
        mentioned, stored = self.state.last_section_mention_turn, self.state.stored_paragraph_numbers()
        if mentioned is not None and stored:
            old = "、".join(f"§{n}" for n in stored)
            last = mentioned + PARAGRAPH_PERSIST_TURNS
            return f"ターン{mentioned}の {old} の指定はターン{last}で終了（Specified／Related は含めない）"
        return "§N・第N段落の指定なし（Specified／Related は含めない）"


def resolve_paragraph_numbers(user_input: str, state: ThreadState, turn: int) -> ParagraphDecision:
    """spec 02 §N の持続: numbers in the input replace the stored ones and mark turn T; without numbers the
    stored ones apply while `turn <= last_section_mention_turn + 2`. The given state is not modified.
    """
    numbers = extract_paragraph_numbers_from_user_input(user_input)
    if numbers:
        updated = replace(
            state,
            last_section_mention_turn=turn,
            last_section_paragraph_numbers=paragraph_numbers_json(numbers),
        )
        return ParagraphDecision(numbers, "input", turn, turn, updated)
    last = state.last_section_mention_turn
    stored = state.stored_paragraph_numbers()
    if last is not None and stored and turn <= last + PARAGRAPH_PERSIST_TURNS:
        return ParagraphDecision(stored, "carried", last, turn, replace(state))
    return ParagraphDecision([], "none", None, turn, replace(state))
