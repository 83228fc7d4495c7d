"""Benchmark: review-chat context + message building (spec 02) — time at turn 50 and prompt size vs full history.

Run: .venv/bin/python tests/bench/review_chat.py   (prints a table; no assertions)
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.flows.review_chat import (
    ReviewRecord,
    ThreadState,
    build_review_chat_messages,
    prepare_review_turn,
    run_review_turn,
)
from core.flows.review_chat.context import assemble_review_context
from core.llm.base import LLMReply, LLMRequest, TextStream, stream_from_reply

PARAGRAPHS = 200
TURNS = 50
REPEATS = 300
SENTENCE = (
    "本問では、通謀虚偽表示の第三者保護について、条文の文言から規範を示して事実を当てはめる必要がある。"
)


def text_of(rng: random.Random, low: int, high: int) -> str:
    n = rng.randint(low, high)
    return (SENTENCE * (n // len(SENTENCE) + 1))[:n]


class SizedClient:
    """Deterministic replies of realistic length: answers 300–600 chars, summaries ~400 chars."""

    provider, model = "bench", "sized"

    def __init__(self, seed: int = 7):
        self.rng = random.Random(seed)

    def complete(self, request: LLMRequest) -> LLMReply:
        if request.tags.get("step") == "summarize":
            return LLMReply(text_of(self.rng, 380, 420))
        return LLMReply(text_of(self.rng, 300, 600))

    def stream(self, request: LLMRequest) -> TextStream:
        return stream_from_reply(self.complete(request))


def make_review(rng: random.Random) -> ReviewRecord:
    answer = "\n".join(f"$$[{i}] {text_of(rng, 80, 220)}" for i in range(1, PARAGRAPHS + 1))
    items = [
        {
            "title": f"項目{i}",
            "description": text_of(rng, 80, 160),
            "paragraph_numbers": [i * 7 % PARAGRAPHS + 1],
        }
        for i in range(40)
    ]
    review_json = {
        "overall_review": text_of(rng, 400, 400),
        "strengths": items[:10],
        "weaknesses": items[10:25],
        "important_points": items[25:33],
        "future_considerations": items[33:],
    }
    return ReviewRecord(
        "bench", text_of(rng, 600, 600), review_json, answer, text_of(rng, 800, 800), text_of(rng, 800, 800)
    )


def question(rng: random.Random, turn: int) -> str:
    base = text_of(rng, 300, 600)
    return f"§{rng.randint(1, PARAGRAPHS)} について。{base}" if turn % 4 == 1 else base


def main() -> None:
    rng = random.Random(42)
    review = make_review(rng)
    client = SizedClient()
    state, history = ThreadState(), []
    sizes: dict[int, tuple[int, int, int]] = {}
    for turn in range(1, TURNS + 1):
        text = question(rng, turn)
        outcome = run_review_turn(client, review, state, history, text)
        plan = outcome.plan
        full = build_review_chat_messages(plan.context.text, history, text)  # same chat, no summaries
        sizes[turn] = (
            sum(len(m["content"]) for m in plan.messages),
            sum(len(m["content"]) for m in full),
            len(plan.messages),
        )
        if turn == TURNS:
            break
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply.text}]
        state = outcome.state

    last_input = "続きについて、§120 と §35 の関係をもう少し詳しく。"
    timings_ms, context_ms = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        prepare_review_turn(review, state, history, last_input)
        timings_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        assemble_review_context(
            review.question_text,
            review.review_json,
            last_input,
            review.purpose_text,
            review.grading_impression_text,
            review.answer_text,
        )
        context_ms.append((time.perf_counter() - start) * 1000)

    print(f"review chat benchmark: {PARAGRAPHS}-paragraph answer, {TURNS} turns, turns of 300–600 chars")
    print()
    print("| measure | value | target |")
    print("|---|---|---|")
    median = statistics.median(timings_ms)
    print(f"| context + messages at turn {TURNS}, median of {REPEATS} | {median:.2f} ms | ≤ 5 ms |")
    print(f"| context only, median | {statistics.median(context_ms):.2f} ms | |")
    print(f"| context + messages, p95 | {sorted(timings_ms)[int(REPEATS * 0.95)]:.2f} ms | |")
    print()
    print("| turn | messages | prompt chars (summaries) | prompt chars (full history) | ratio |")
    print("|---|---|---|---|---|")
    for turn in (6, 20, TURNS):
        summarized, full, count = sizes[turn]
        print(f"| {turn} | {count} | {summarized:,} | {full:,} | {summarized / full:.0%} |")
    ratio = sizes[TURNS][0] / sizes[TURNS][1]
    print()
    print(f"turn {TURNS}: summarized prompt is {ratio:.0%} of the full-history prompt (target ≤ 40%)")


if __name__ == "__main__":
    main()
