"""Guard overhead and repair economy. Prints tables; run: .venv/bin/python tests/bench/guard_overhead.py

1. Local parse + validate of a knowledge turn through the guard (valid, fenced, trailing comma) beside
   spec 00's sample approach (a new Draft202012Validator on every call).
2. Per-call time through OpenAIClient + guarded_json beside the bare openai SDK, on a local OpenAI-wire server.
3. Model calls spent to reach a valid turn over a corpus of damaged replies.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import openai
from jsonschema import Draft202012Validator

from core.contracts.schemas import load_schema, strict_copy, validation_errors
from core.guard.json_guard import _check, guarded_json
from core.llm.base import LLMReply
from core.llm.faulty import corrupt
from core.llm.openai_client import OpenAIClient
from core.llm.replay import ReplayClient
from tests.core.wire_server import Scripted, WireServer

TURN = load_schema("knowledge_llm_turn")
ENTRY = load_schema("knowledge_llm_entry")
VALID = {
    "control": {"schema_version": "1.0", "mode": "finalize"},
    "state": {"phase": "draft_knowledge", "missing_info": ["適用条件の具体的な表現"]},
    "assistant_message": "ヒアリングした内容をもとに、ナレッジのドラフトを作成しました。内容をご確認ください。",
    "knowledge_json": {k: f"{k} の内容（サンプル）" for k in ENTRY["required"]},
}
VALID_TEXT = json.dumps(VALID, ensure_ascii=False)
MESSAGES = [
    {"role": "system", "content": "契約審査ナレッジ生成"},
    {"role": "user", "content": "秘密保持期間の相談"},
]


def entry_validator(data):  # the knowledge flow's validator: knowledge_json against the entry schema
    return validation_errors(ENTRY, data["knowledge_json"]) if data.get("knowledge_json") is not None else []


def median_us(fn, n=3000) -> float:
    for _ in range(200):
        fn()
    samples = []
    for _ in range(n):
        t = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t)
    return statistics.median(samples) / 1000


def spec00_sample(raw: str) -> None:
    parsed = json.loads(raw)
    Draft202012Validator(TURN).validate(parsed)
    if parsed.get("knowledge_json") is not None:
        Draft202012Validator(ENTRY).validate(parsed["knowledge_json"])


def local_table() -> list[tuple[str, float]]:
    fenced = LLMReply(f"```json\n{VALID_TEXT}\n```")
    trailing = LLMReply(VALID_TEXT[:-1] + ",}")
    valid = LLMReply(VALID_TEXT)
    for reply in (valid, fenced, trailing):
        assert _check(reply, TURN, [entry_validator])[1].error_type is None
    strict_copy(TURN)
    return [
        ("guard: parse + validate, valid turn", median_us(lambda: _check(valid, TURN, [entry_validator]))),
        ("guard: fenced reply", median_us(lambda: _check(fenced, TURN, [entry_validator]))),
        ("guard: trailing-comma reply", median_us(lambda: _check(trailing, TURN, [entry_validator]))),
        (
            "guarded_json end to end, in-process client",
            median_us(
                lambda: guarded_json(
                    ReplayClient([VALID_TEXT]), MESSAGES, TURN, name="Turn", validators=[entry_validator]
                ),
                n=2000,
            ),
        ),
        (
            "spec 00 sample: new Draft202012Validator per call",
            median_us(lambda: spec00_sample(VALID_TEXT), n=500),
        ),
        ("strict copy per call after the first (cached)", median_us(lambda: strict_copy(TURN))),
    ]


def wire_table(calls: int = 300) -> list[tuple[str, float]]:
    with WireServer(record=False, default=Scripted.text_reply(VALID_TEXT)) as server:
        bare = openai.OpenAI(api_key="sk-bench", base_url=server.openai_base_url, max_retries=0)
        ours = OpenAIClient("bench-model", api_key="sk-bench", base_url=server.openai_base_url)
        strict = strict_copy(TURN)  # the same response_format our client sends
        body = {"name": "Turn", "schema": strict or TURN, "strict": strict is not None}
        fmt = {"type": "json_schema", "json_schema": body}

        def sdk():
            bare.chat.completions.create(model="bench-model", messages=MESSAGES, response_format=fmt)

        def guarded():
            assert guarded_json(ours, MESSAGES, TURN, name="Turn", validators=[entry_validator]).ok

        # interleave to share any drift of the machine between both
        a, b = [], []
        for _ in range(20):
            sdk(), guarded()
        for _ in range(calls):
            t = time.perf_counter_ns()
            sdk()
            a.append(time.perf_counter_ns() - t)
            t = time.perf_counter_ns()
            guarded()
            b.append(time.perf_counter_ns() - t)
    sdk_ms, ours_ms = statistics.median(a) / 1e6, statistics.median(b) / 1e6
    return [
        ("bare openai SDK chat.completions.create", sdk_ms),
        ("OpenAIClient + guarded_json", ours_ms),
        ("ratio (target <= 1.15)", ours_ms / sdk_ms),
    ]


def repair_table() -> list[tuple[str, int, str]]:
    extra = json.dumps({**VALID, "confidence": 0.9}, ensure_ascii=False)
    corpus = {
        "code fence": corrupt(VALID_TEXT, "code_fence", TURN),
        "prose around the JSON": corrupt(VALID_TEXT, "prose", TURN),
        "BOM": "\ufeff" + VALID_TEXT,
        "trailing commas": corrupt(VALID_TEXT, "trailing_comma", TURN),
        "missing field": corrupt(VALID_TEXT, "missing_field", TURN),
        "wrong enum": corrupt(VALID_TEXT, "wrong_enum", TURN),
        "extra field": extra,
        "refusal": LLMReply("申し訳ありませんが、お手伝いできません。", finish_reason="refusal"),
    }
    rows = []
    for label, damaged in corpus.items():
        client = ReplayClient([damaged, VALID_TEXT, VALID_TEXT])
        result = guarded_json(client, MESSAGES, TURN, name="Turn", validators=[entry_validator])
        outcome = "valid" if result.ok else f"not valid ({result.error_type}; no repair call)"
        fixes = ", ".join(result.attempts[0].fixes) or "-"
        rows.append((label, len(client.requests), f"{outcome}; local fixes: {fixes}"))
    return rows


def main() -> None:
    print("| guard local path | median µs |\n|---|---:|")
    for label, value in local_table():
        print(f"| {label} | {value:.1f} |")
    print("\n| local OpenAI-wire server, 300 calls | median ms |\n|---|---:|")
    for label, value in wire_table():
        print(f"| {label} | {value:.3f} |")
    print("\n| damaged reply | model calls | outcome |\n|---|---:|---|")
    for label, calls, outcome in repair_table():
        print(f"| {label} | {calls} | {outcome} |")


if __name__ == "__main__":
    main()
