"""spec 02 LLMに渡るメッセージ配列の形 / 要約: golden message arrays of a scripted 12-turn chat (Replay client)."""

from __future__ import annotations

import pytest

from core.contracts.prompts import load_prompt
from core.flows.review_chat import (
    ReviewRecord,
    ThreadState,
    build_review_chat_messages,
    prepare_review_turn,
    run_review_turn,
    stream_review_reply,
    summarize_conversation_segment,
)
from core.flows.review_chat.summary import due_summary_segment, maybe_summarize
from core.guard.json_guard import GuardedStream
from core.llm.base import ProviderError
from core.llm.replay import ReplayClient

REVIEW = ReviewRecord(
    title="t",
    question_text="Q",
    purpose_text="PU",
    grading_impression_text="GI",
    answer_text="\n".join(f"$$[{i}] P{i}" for i in range(1, 21)),
    review_json={
        "overall_review": "OV",
        "strengths": [
            {"title": "S-a", "paragraph_numbers": [2, 3]},
            {"title": "S-b", "paragraph_number": 15},
        ],
        "weaknesses": [{"title": "W-a", "paragraph_number": 3}, {"title": "W-b", "paragraph_numbers": [12]}],
        "important_points": [{"title": "I-a", "paragraph_numbers": [1, 20]}],
        "future_considerations": [{"title": "F-a", "paragraph_numbers": [3], "paragraph_number": 12}],
    },
)
INPUTS = [
    "§3はどう評価されていますか",  # 1: input, T=1
    "理由は？",  # 2: carried from 1
    "出題趣旨との関係は？",  # 3: carried from 1, + purpose
    "採点実感では？",  # 4: expired (4 > 1 + 2), + grading
    "第12段落について",  # 5: input, T=5; summary 1-5 afterwards
    "もう少し",  # 6: carried from 5
    "§2と§15は？",  # 7: input, T=7 (gap between ranges)
    "続けて",  # 8: carried
    "ほかには",  # 9: carried
    "まとめて",  # 10: expired; summary 6-10 afterwards
    "§1",  # 11: input
    "最後に",  # 12: carried
]
OUTPUTS = [*(f"A{i}" for i in range(1, 6)), "S1", *(f"A{i}" for i in range(6, 11)), "S2", "A11", "A12"]
SYSTEM = {"role": "system", "content": load_prompt("review_chat_system").strip()}
BASE = "【問題文】\nQ\n\n【講評（全体）】\nOV"


def spec(*ranges: tuple[int, int]) -> str:
    chunks = ["\n".join(f"§{i} P{i}" for i in range(a, b + 1)) for a, b in ranges]
    return "\n……\n".join(chunks)


def related(groups: dict[str, list[str]]) -> str:
    parts = [
        f'  "{cat}": [\n' + ",\n".join(f"    {item}" for item in items) + "\n  ]"
        for cat, items in groups.items()
    ]
    return "{\n" + ",\n".join(parts) + "\n}"


S_A = '{"title": "S-a", "paragraph_numbers": [2, 3]}'
S_B = '{"title": "S-b", "paragraph_number": 15}'
W_A = '{"title": "W-a", "paragraph_number": 3}'
W_B = '{"title": "W-b", "paragraph_numbers": [12]}'
I_A = '{"title": "I-a", "paragraph_numbers": [1, 20]}'
F_A = '{"title": "F-a", "paragraph_numbers": [3], "paragraph_number": 12}'


def ctx(
    specified: str | None = None, rel: str | None = None, purpose: bool = False, grading: bool = False
) -> dict:
    text = BASE
    if purpose:
        text += "\n\n【出題趣旨／参考文章】\nPU"
    if grading:
        text += "\n\n【採点実感】\nGI"
    if specified is not None:
        text += f"\n\n【指定段落付き答案（Specified）】\n{specified}\n\n【指定段落に関連する講評（Related）】\n{rel}"
    return {"role": "user", "content": text}


CTX_S3 = dict(
    specified=spec((1, 8)),
    rel=related({"strengths": [S_A], "weaknesses": [W_A], "future_considerations": [F_A]}),
)
CTX_S12 = dict(specified=spec((7, 17)), rel=related({"weaknesses": [W_B], "future_considerations": [F_A]}))
CTX_S2_15 = dict(specified=spec((1, 7), (10, 20)), rel=related({"strengths": [S_A, S_B]}))
CTX_S1 = dict(specified=spec((1, 6)), rel=related({"important_points": [I_A]}))


def u(i: int) -> dict[str, str]:
    return {"role": "user", "content": INPUTS[i - 1]}


def a(i: int) -> dict[str, str]:
    return {"role": "assistant", "content": f"A{i}"}


def q(i: int) -> dict[str, str]:
    return {"role": "user", "content": f"ユーザーの質問: {INPUTS[i - 1]}"}


def rallies(start: int, end: int) -> list[dict[str, str]]:
    return [m for i in range(start, end + 1) for m in (u(i), a(i))]


SUM1 = {"role": "user", "content": "【これまでの会話の要約】\n【1～5ターンの要約】\nS1"}
SUM2 = {
    "role": "user",
    "content": "【これまでの会話の要約】\n【1～5ターンの要約】\nS1\n\n【6～10ターンの要約】\nS2",
}

GOLDEN = {
    1: [SYSTEM, ctx(**CTX_S3), q(1)],
    2: [SYSTEM, ctx(**CTX_S3), *rallies(1, 1), q(2)],
    5: [SYSTEM, ctx(**CTX_S12), *rallies(1, 4), q(5)],
    6: [SYSTEM, ctx(**CTX_S12), SUM1, u(5), a(5), q(6)],
    7: [SYSTEM, ctx(**CTX_S2_15), SUM1, *rallies(5, 6), q(7)],
    10: [SYSTEM, ctx(), SUM1, *rallies(5, 9), q(10)],
    11: [SYSTEM, ctx(**CTX_S1), SUM2, u(10), a(10), q(11)],
    12: [SYSTEM, ctx(**CTX_S1), SUM2, *rallies(10, 11), q(12)],
}


def summary_request(start: int, end: int) -> list[dict[str, str]]:
    transcript = "\n\n".join(
        f"【ユーザー】\n{INPUTS[i - 1]}\n\n【アシスタント】\nA{i}" for i in range(start, end + 1)
    )
    template = load_prompt("review_chat_summarize").strip()
    return [{"role": "user", "content": template.replace("{CONVERSATION}", transcript)}]


@pytest.fixture(scope="module")
def scripted_chat() -> tuple[ReplayClient, list, list[ThreadState]]:
    client = ReplayClient(OUTPUTS)
    state, history, outcomes, states = ThreadState(), [], [], []
    for text in INPUTS:
        outcome = run_review_turn(client, REVIEW, state, history, text)
        assert outcome.reply.ok
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": outcome.reply.text}]
        state = outcome.state
        outcomes.append(outcome)
        states.append(state)
    assert client.remaining == 0
    return client, outcomes, states


def reply_requests(client: ReplayClient) -> dict[int, list[dict[str, str]]]:
    replies = [r for r in client.requests if r.tags["step"] == "reply"]
    return {i + 1: r.messages for i, r in enumerate(replies)}


@pytest.mark.parametrize("turn", sorted(GOLDEN))
def test_golden_message_arrays(scripted_chat, turn: int) -> None:  # type: ignore[no-untyped-def]
    client, outcomes, _ = scripted_chat
    assert reply_requests(client)[turn] == GOLDEN[turn]
    assert outcomes[turn - 1].plan.messages == GOLDEN[turn]


def test_other_turns_contexts(scripted_chat) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = scripted_chat
    sent = reply_requests(client)
    assert sent[3][1] == ctx(purpose=True, **CTX_S3)
    assert sent[4][1] == ctx(grading=True)
    assert sent[8][1] == sent[9][1] == ctx(**CTX_S2_15)


def test_summary_calls(scripted_chat) -> None:  # type: ignore[no-untyped-def]
    client, _, _ = scripted_chat
    steps = [r.tags for r in client.requests]
    assert [i for i, t in enumerate(steps) if t["step"] == "summarize"] == [5, 11]  # after turns 5 and 10
    assert all(t["flow"] == "review" for t in steps)
    assert client.requests[5].messages == summary_request(1, 5)
    assert client.requests[11].messages == summary_request(6, 10)


def test_thread_state_transitions(scripted_chat) -> None:  # type: ignore[no-untyped-def]
    _, _, states = scripted_chat
    columns = [
        (s.summary_up_to_turn, s.last_section_mention_turn, s.last_section_paragraph_numbers) for s in states
    ]
    assert columns == [
        (0, 1, "[3]"), (0, 1, "[3]"), (0, 1, "[3]"), (0, 1, "[3]"),
        (5, 5, "[12]"), (5, 5, "[12]"),
        (5, 7, "[2,15]"), (5, 7, "[2,15]"), (5, 7, "[2,15]"), (10, 7, "[2,15]"),
        (10, 11, "[1]"), (10, 11, "[1]"),
    ]  # fmt: skip
    assert states[4].conversation_summary == "【1～5ターンの要約】\nS1"
    assert states[9].conversation_summary == "【1～5ターンの要約】\nS1\n\n【6～10ターンの要約】\nS2"


def test_build_messages_without_summary_keeps_raw_history() -> None:
    history = [{"role": "user", "content": "x", "meta": "ignored"}, {"role": "assistant", "content": "y"}]
    messages = build_review_chat_messages("CTX", history, "z", system="SYS")
    assert messages == [
        {"role": "system", "content": "SYS"},
        {"role": "user", "content": "CTX"},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "y"},
        {"role": "user", "content": "ユーザーの質問: z"},
    ]


def test_failed_reply_leaves_state_unchanged() -> None:
    client = ReplayClient([ProviderError("timeout")])
    state = ThreadState()
    outcome = run_review_turn(client, REVIEW, state, [], "§3")
    assert (outcome.reply.ok, outcome.reply.error_type, outcome.state) == (False, "provider_error", state)
    assert outcome.plan.state_after.last_section_mention_turn == 1  # applied only once a reply arrives


def test_failed_summary_is_caught_up_next_turn() -> None:
    history = [m for i in range(1, 6) for m in (u(i), a(i))]
    failing = maybe_summarize(ThreadState(), history, ReplayClient([ProviderError("server_error")]))
    assert failing.failed and failing.state == ThreadState() and failing.segment == (1, 5)
    history += [u(6), a(6)]
    assert due_summary_segment(failing.state, 6) == (1, 5)
    client = ReplayClient(["S"])
    caught = maybe_summarize(failing.state, history, client)
    assert (
        caught.state.summary_up_to_turn == 5
        and caught.state.conversation_summary == "【1～5ターンの要約】\nS"
    )
    assert client.requests[0].messages == summary_request(1, 5)


def test_empty_summary_is_an_error() -> None:
    result = summarize_conversation_segment([u(1), a(1)], ReplayClient(["  "]))
    assert (result.ok, result.error_type) == (False, "empty_output")


@pytest.mark.parametrize(
    ("up_to", "completed", "due"),
    [
        (0, 4, None),
        (0, 5, (1, 5)),
        (5, 9, None),
        (5, 10, (6, 10)),
        (0, 12, (1, 10)),
        (10, 10, None),
        (10, 14, None),
        (10, 15, (11, 15)),
        (15, 20, (16, 20)),
    ],
)
def test_due_summary_segment(up_to: int, completed: int, due: tuple[int, int] | None) -> None:
    assert due_summary_segment(ThreadState(summary_up_to_turn=up_to), completed) == due


ISSUE_CLOSING_SENTENCE = (  # copied from issue 4 / spec 02, deliberately not the constant
    "すみませんが、該当箇所を確認できません。該当箇所をコピペするか、"
    "答案左の§記号または講評の該当箇所をクリックすることで、入力に含めてください。"
)


def test_system_prompt_covers_the_spec_and_ends_with_the_exact_sentence() -> None:
    system = load_prompt("review_chat_system").strip()
    assert system.endswith("\n" + ISSUE_CLOSING_SENTENCE)
    for needle in (
        "【問題文】",
        "【講評（全体）】",
        "Specified",
        "Related",
        "機械的に抽出",
        "無視",
        "Markdown",
    ):
        assert needle in system, needle
    assert load_prompt("review_chat_user").strip() == "ユーザーの質問: {QUESTION}"
    summarize = load_prompt("review_chat_summarize")
    assert all(w in summarize for w in ("疑問・観点", "行った回答", "残っている論点", "{CONVERSATION}"))


def test_reply_is_streamed_in_chunks_and_the_result_matches() -> None:
    reply = "§3 について。" * 10
    plan = prepare_review_turn(REVIEW, ThreadState(), [], "§3 は？")
    stream = stream_review_reply(ReplayClient([reply]), plan)
    assert isinstance(stream, GuardedStream)
    chunks = list(stream)
    assert len(chunks) > 1 and "".join(chunks) == reply
    assert stream.result is not None and stream.result.ok and stream.result.text == reply


def test_third_segment_is_appended_after_turn_15() -> None:
    history = [m for i in range(1, 16) for m in ({"role": "user", "content": f"q{i}"}, a(i))]
    state = ThreadState("【1～5ターンの要約】\nS1\n\n【6～10ターンの要約】\nS2", 10)
    client = ReplayClient(["S3"])
    outcome = maybe_summarize(state, history, client)
    assert outcome.state.summary_up_to_turn == 15
    assert outcome.state.conversation_summary.endswith(
        "\n\n【6～10ターンの要約】\nS2\n\n【11～15ターンの要約】\nS3"
    )
    transcript = client.requests[0].messages[0]["content"]
    assert "【ユーザー】\nq11\n\n" in transcript and "q10" not in transcript and "\nA15\n" in transcript
    # turn 16 then sends: summary (1-15) + user_15, assistant_15 + the question
    messages = build_review_chat_messages(
        "CTX",
        history,
        "q16",
        conversation_summary=outcome.state.conversation_summary,
        summary_up_to_turn=15,
        system="SYS",
    )
    assert messages[2:] == [
        {"role": "user", "content": "【これまでの会話の要約】\n" + outcome.state.conversation_summary},
        {"role": "user", "content": "q15"},
        a(15),
        {"role": "user", "content": "ユーザーの質問: q16"},
    ]
