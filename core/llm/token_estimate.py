"""Local token estimates for replies that carry no usage (e.g. llama-cpp-python streams).

Nothing is downloaded (no tokenizer files): tokens are estimated from characters, with one rate
for Japanese / CJK text and one for everything else, then scaled by a running ratio per model
learned in-process from replies that did carry usage. Estimates are always labelled
(`Usage.estimated`), never mixed with counted usage silently.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable

from core.llm.base import Message, Usage

# Starting rates before any calibration. Japanese with common BPE vocabularies is roughly one
# token per character (kana and kanji often split below that, long words merge); Latin text and
# code average about four characters per token.
CJK_TOKENS_PER_CHAR = 1.0
ASCII_TOKENS_PER_CHAR = 0.25
MESSAGE_OVERHEAD_TOKENS = 4  # role markers and separators a chat template adds per message
RATIO_BOUNDS = (0.25, 4.0)  # a calibration never scales the base estimate beyond this

_CJK_RANGES = (
    (0x3000, 0x303F),  # CJK symbols and punctuation (、。「」)
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF00, 0xFFEF),  # half- and full-width forms
    (0x20000, 0x2FFFF),  # CJK extensions B and later
)


# The ranges as one character class: counting runs in the regex engine, not a Python loop per character
# (every reply is estimated, to calibrate the ratios, even when the server counted its usage).
_NOT_CJK = re.compile("[^" + "".join(f"{chr(low)}-{chr(high)}" for low, high in _CJK_RANGES) + "]+")


def is_cjk(char: str) -> bool:
    """Whether a character counts as Japanese / CJK text for the estimate."""
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def base_estimate(text: str) -> float:
    """Uncalibrated token estimate of a text: CJK characters and the rest at their own rates."""
    cjk = len(_NOT_CJK.sub("", text))
    return cjk * CJK_TOKENS_PER_CHAR + (len(text) - cjk) * ASCII_TOKENS_PER_CHAR


def _prompt_estimate(messages: Iterable[Message]) -> float:
    return sum(base_estimate(m.get("content", "")) + MESSAGE_OVERHEAD_TOKENS for m in messages)


class TokenEstimator:
    """Character-based estimates scaled by running ratios (counted / estimated) per model.

    Prompt and output are calibrated apart: a prompt also carries the chat template's tokens.
    Thread-safe: one estimator serves every client of the process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sums: dict[tuple[str, str], tuple[float, float]] = {}  # (model, part) -> (counted, base)

    def _observe(self, model: str, part: str, counted: int, base: float) -> None:
        if counted <= 0 or base <= 0:
            return
        with self._lock:
            total_counted, total_base = self._sums.get((model, part), (0.0, 0.0))
            self._sums[(model, part)] = (total_counted + counted, total_base + base)

    def ratio(self, model: str, part: str) -> float:
        """The learned counted/estimated ratio for a model's "input" or "output" (1.0 before any)."""
        with self._lock:
            counted, base = self._sums.get((model, part), (0.0, 0.0))
        if base <= 0:
            return 1.0
        low, high = RATIO_BOUNDS
        return min(max(counted / base, low), high)

    def observe(self, model: str, messages: Iterable[Message], output: str, usage: Usage) -> None:
        """Learn from a reply whose usage the server counted (estimated usage teaches nothing)."""
        if usage.estimated:
            return
        self._observe(model, "input", usage.input_tokens, _prompt_estimate(messages))
        self._observe(model, "output", usage.output_tokens, base_estimate(output))

    def estimate(self, model: str, messages: Iterable[Message], output: str) -> Usage:
        """An estimated Usage for a reply the server sent no token counts for."""
        prompt = _prompt_estimate(messages) * self.ratio(model, "input")
        out = base_estimate(output) * self.ratio(model, "output")
        return Usage(round(prompt), max(round(out), 1) if output else 0, estimated=True)

    def reset(self) -> None:
        """Forget every calibration (tests)."""
        with self._lock:
            self._sums.clear()


ESTIMATOR = TokenEstimator()  # the process-wide estimator the clients share


def has_counts(usage: Usage | None) -> bool:
    """Whether a server-sent usage actually counted something (some servers send zeros)."""
    return usage is not None and (usage.input_tokens > 0 or usage.output_tokens > 0)


def usage_or_estimate(
    model: str,
    messages: Iterable[Message],
    output: str,
    usage: Usage | None,
    estimator: TokenEstimator = ESTIMATOR,
) -> Usage:
    """The server's usage (learned from) when it counted anything, else a labelled estimate."""
    messages = list(messages)
    if usage is not None and has_counts(usage):
        estimator.observe(model, messages, output, usage)
        return usage
    return estimator.estimate(model, messages, output)
