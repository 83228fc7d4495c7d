"""The memory turn as the page drives it: prepare_turn -> stream_reply -> finish_turn -> reply_item, on a real
SQLite store and an embedded Chroma, with the repository's clock; ChatItems for replies and failures.

The background job runs inline here (no worker) with the default, combined extraction call; the worker is
covered in test_memory_background.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine

from core.clock import format_local
from core.contracts.prompts import fill, load_prompt
from core.flows.chat_item import ChatItem, history, pop_failed_turn, user_item
from core.flows.memory.chat import finish_turn, prepare_turn, stream_reply
from core.flows.memory.constants import DAY
from core.flows.memory.items import UNEXPECTED_ERROR, reply_item, turn_details_of, unexpected_error_item
from core.flows.memory.stores import memory_collection, memory_repository
from core.llm.base import LLMClient, LLMReply, ProviderError
from core.llm.replay import ReplayClient
from core.people import LOCAL_PERSON
from core.search.vectors import open_chroma
from core.store.memory.repository import MemoryRepository
from tests.core.test_memory_flow import (
    NOW,
    REPLY,
    TRAILER,
    TRAILER_MARKER,
    USER,
    extracted,
    j,
)
from tests.core.test_memory_flow import combined_turn_outputs as full_turn_outputs

SECOND = "田中さんとのラーメンの話、覚えてる？"
LOOP = "来週、田中さんとまたラーメンに行く"


class Clock:
    """A clock the test moves by hand (UTC epoch seconds)."""

    def __init__(self, now: int):
        self.value = now

    def __call__(self) -> int:
        return self.value


@pytest.fixture
def page(tmp_path: Path, engine: Engine):  # type: ignore[no-untyped-def]
    """What the page holds: the repository (from the flow, on the shared engine), the collection, a clock."""
    clock = Clock(NOW)
    repo = memory_repository(engine, LOCAL_PERSON, clock)
    return repo, memory_collection(open_chroma(tmp_path), LOCAL_PERSON), clock


def page_turn(repo: MemoryRepository, collection, client: LLMClient, items: list[ChatItem], text: str):  # type: ignore[no-untyped-def]
    """Exactly what pages/ui/memory/chat.py does with one message (minus drawing)."""
    prior = history(items)
    turn = sum(1 for i in items if i["role"] == "user") + 1
    user = user_item(text, turn=turn)
    items.append(user)
    prepared = prepare_turn(repo, collection, prior, text)
    reply = stream_reply(client, prepared)
    shown = "".join(reply)
    outcome = finish_turn(repo, collection, client, prepared, reply)
    answer = reply_item(prepared, outcome, turn)
    user["status"] = "error" if answer["status"] == "error" else "done"
    items.append(answer)
    return prepared, outcome, shown


def test_two_turns_the_second_stack_carries_the_first_turns_memory(page) -> None:  # type: ignore[no-untyped-def]
    repo, collection, clock = page
    items: list[ChatItem] = []
    first = ReplayClient(full_turn_outputs())
    prepared, outcome, shown = page_turn(repo, collection, first, items, USER)
    assert shown.rstrip() == REPLY and prepared.now == NOW  # the trailer is never shown; time from the clock
    assert first.requests[0].messages[1:] == [{"role": "user", "content": USER}]
    assert "（関連する記憶はありません）" in first.requests[0].messages[0]["content"]
    assert [(i["role"], i["status"], i["turn"]) for i in items] == [
        ("user", "done", 1),
        ("assistant", "done", 1),
    ]
    assert items[1]["content"] == REPLY and TRAILER_MARKER in items[1]["raw"]
    details = items[1]["meta"]["details"]
    assert details["episode_id"] == outcome.episode_id == 1 and details["trailer"] == TRAILER
    assert details["summaries"] == ["絆サマリー（直近7日）を作成", "人物サマリー「田中」を作成"]
    typed = turn_details_of(items[1])  # what the page reads
    assert typed is not None and (typed.episode_id, typed.trailer, typed.summaries) == (
        1,
        TRAILER,
        details["summaries"],
    )
    assert turn_details_of(items[0]) is None

    clock.value = NOW + 600
    second = ReplayClient(
        [
            REPLY + "\n" + TRAILER_MARKER + "\n" + j(TRAILER),
            extracted({"entities": [], "relations": []}, {"facts": []}, {"loops": []}),
        ]
    )
    prepared2, outcome2, _ = page_turn(repo, collection, second, items, SECOND)
    day = format_local(NOW, "%Y-%m-%d")
    pack = "\n".join(
        [
            "## 関連する記憶",
            f"- [{day}・会話] {USER} / {REPLY}",
            f"- [{day}・約束] {LOOP}",
            f"- [{day}・まとめ] ラーメンの話をした",
            f"- [{day}・まとめ] 田中さんは同僚",
            f"- [{day}・事実] ユーザーが好きなもの:ラーメン",
            "## ユーザーについて知っていること",
            "- ユーザーが好きなもの:ラーメン",
            "## 未完了の約束・続きの話題",
            f"- {LOOP} (期限 {format_local(NOW + 7 * DAY, '%m/%d')})",
            "## この1週間の関係",
            "ラーメンの話をした",
        ]
    )
    mood = "現在の気分: 喜び（喜び 0.27、悲しみ 0.00、怒り 0.00、不安 0.00）\n応答方針: 協力度 0.90、断りやすさ 0.10、断らず協力する"
    system = fill(
        load_prompt("memory_chat_system"),
        PERSONA_ANCHOR=load_prompt("persona_anchor").strip(),
        MEMORY_PACK=pack,
        MOOD_POLICY=mood,
        NOW=format_local(NOW + 600),
        TRAILER_MARKER=TRAILER_MARKER,
    )
    assert second.requests[0].messages == [
        {"role": "system", "content": system},
        {"role": "user", "content": USER},
        {"role": "assistant", "content": REPLY},
        {"role": "user", "content": SECOND},
    ]
    assert prepared2.now == NOW + 600 and outcome2.ok and outcome2.episode_id == 6
    assert [i["status"] for i in items] == ["done"] * 4
    assert [m["ID"] for m in items[3]["meta"]["details"]["memories"]] == [1, 3, 4, 5, 2]


def test_a_failed_reply_is_an_error_item_and_is_sent_again(page) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = page
    items: list[ChatItem] = []
    page_turn(repo, collection, ReplayClient([ProviderError("timeout", "slow")]), items, USER)
    user, failed = items
    assert user == {"role": "user", "content": USER, "status": "error", "turn": 1}
    assert failed["role"] == "assistant" and failed["status"] == "error"
    assert failed["error_type"] == "provider_error" and failed["content"].startswith(
        "LLMの呼び出しに失敗しました。"
    )
    assert history(items) == [] and "meta" not in failed
    assert pop_failed_turn(items) is user and items == []  # 再送: the input comes back, the rally goes
    _prepared, outcome, _ = page_turn(repo, collection, ReplayClient(full_turn_outputs()), items, USER)
    assert outcome.ok and outcome.episode_id == 1  # the failed attempt stored nothing
    assert [i["status"] for i in items] == ["done", "done"]


def test_a_reply_cut_by_the_token_limit_is_kept_and_marked(page) -> None:  # type: ignore[no-untyped-def]
    repo, collection, _ = page
    items: list[ChatItem] = []
    outputs: list[str | LLMReply | ProviderError] = [
        LLMReply("いいですね！田中さんと", finish_reason="length")
    ]
    reflection = {k: v for k, v in TRAILER.items() if k != "persona_response_policy"}
    outputs += [j(reflection), *full_turn_outputs()[1:]]
    _, outcome, _ = page_turn(repo, collection, ReplayClient(outputs), items, USER)
    assert outcome.ok and outcome.truncated and outcome.reflection_source == "reflection"
    assert items[1]["status"] == "truncated" and items[1]["content"] == "いいですね！田中さんと"
    assert items[0]["status"] == "done" and len(history(items)) == 2


def test_unexpected_failure_item_keeps_the_input() -> None:
    item = unexpected_error_item(3)
    assert item["status"] == "error" and item["turn"] == 3 and item["content"] == UNEXPECTED_ERROR
    assert "入力した文は残っています" in item["content"]


def test_repository_times_come_from_its_clock(engine: Engine) -> None:
    clock = Clock(NOW)
    repo = MemoryRepository(engine, clock, owner_id=LOCAL_PERSON.id)
    uid = repo.save_episode("こんにちは", "はい", {"salience": 2, "topic_tags": ["挨拶"]}, source="default")
    clock.value = NOW + 60
    loop = repo.upsert_loop("明日電話する", 0.7, None, NOW + 7 * DAY, uid, NOW)
    assert (
        repo.upsert_loop("明日電話する", 0.9, NOW + DAY, NOW + DAY, uid, NOW) == loop
    )  # same text: refreshed
    assert repo.expired_loop_ids() == []
    clock.value = NOW + DAY
    assert repo.expired_loop_ids() == [loop]
    snap = repo.snapshot(uid)
    assert (snap["occurred_at"], snap["salience"], snap["topic_tags"]) == (NOW, 1.0, '["挨拶"]')
    assert repo.snapshot(loop)["due_at"] == NOW + DAY and repo.snapshot(loop)["state"] == "active"
    assert repo.record_version(uid, "edit", note="確認") == 2
