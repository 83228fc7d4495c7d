"""Demo, Replay and Faulty clients, settings and the registry."""

import json

import pytest

from core.contracts.schemas import load_schema, schema_names, validation_errors
from core.debuglog.events import ListSink, events_to_jsonl
from core.guard.json_guard import guarded_json, guarded_text
from core.llm.base import JSONSchemaSpec, LLMReply, LLMRequest, ProviderError
from core.llm.demo import DemoClient, instance_from_schema
from core.llm.faulty import CORRUPTIONS, FaultyClient, corrupt
from core.llm.missing_key import MissingKeyClient
from core.llm.replay import ReplayClient, ReplayExhausted
from core.services.clients import build_client
from core.settings import Settings, load_settings

TURN = load_schema("knowledge_llm_turn")


@pytest.mark.parametrize("name", schema_names())
def test_demo_returns_a_valid_instance_of_every_bundled_schema(name):
    schema = load_schema(name)
    reply = DemoClient().complete(
        LLMRequest([{"role": "user", "content": "x"}], JSONSchemaSpec(name, schema))
    )
    assert validation_errors(schema, json.loads(reply.text)) == []
    assert reply.provider == "demo"


def test_instance_from_schema_handles_refs_nullable_and_bounds():
    schema = {
        "type": "object",
        "$defs": {"score": {"type": "number", "minimum": 0.2, "maximum": 0.6}},
        "properties": {
            "s": {"$ref": "#/$defs/score"},
            "n": {"type": ["null", "integer"], "minimum": 3},
            "a": {"type": "array", "minItems": 2, "uniqueItems": True, "items": {"type": "string"}},
            "e": {"anyOf": [{"type": "null"}, {"enum": ["x", "y"]}]},
            "t": {"type": "string", "minLength": 10},
        },
    }
    value = instance_from_schema(schema)
    assert value["s"] == 0.4 and value["n"] == 3 and len(set(value["a"])) == 2 and value["e"] == "x"
    assert len(value["t"]) >= 10


def test_demo_is_deterministic_and_streams_the_same_text():
    request = LLMRequest([{"role": "user", "content": "契約の相談です"}])
    first, second = DemoClient().complete(request), DemoClient().complete(request)
    assert first.text == second.text and "デモ" in first.text
    stream = DemoClient().stream(request)
    assert "".join(stream) == first.text and stream.reply is not None


def test_demo_plays_the_persona_passed_in_for_the_request_flow_only():
    client = DemoClient(personas={"review": lambda request: "台本どおりの応答"})
    tagged = LLMRequest([{"role": "user", "content": "質問"}], tags={"flow": "review"})
    other = LLMRequest([{"role": "user", "content": "質問"}], tags={"flow": "memory"})
    assert client.complete(tagged).text == "台本どおりの応答"
    assert client.complete(other).text == DemoClient().complete(other).text  # generic reply


def test_build_client_hands_personas_to_the_demo_model_also_under_faults():
    personas = {"knowledge": lambda request: "{}"}
    demo = build_client(Settings(), personas=personas)
    assert isinstance(demo, DemoClient) and demo.personas == personas
    faulty = build_client(Settings(), fault_rate=0.5, personas=personas)
    assert isinstance(faulty, FaultyClient) and faulty.inner.personas == personas
    assert build_client(Settings()).personas == {}  # type: ignore[attr-defined]


def test_replay_records_requests_and_raises_recorded_errors():
    client = ReplayClient(["a", ProviderError("timeout"), LLMReply("c", finish_reason="length")])
    req = LLMRequest([{"role": "user", "content": "q"}])
    assert client.complete(req).text == "a"
    with pytest.raises(ProviderError):
        client.complete(req)
    assert client.complete(req).finish_reason == "length"
    with pytest.raises(ReplayExhausted):
        client.complete(req)
    assert len(client.requests) == 4


@pytest.mark.parametrize("kind", CORRUPTIONS)
def test_each_corruption_is_handled_by_the_guard(kind):
    valid = json.dumps(instance_from_schema(TURN), ensure_ascii=False)
    damaged = corrupt(valid, kind, TURN)
    assert damaged != valid
    finish = "length" if kind == "truncated" else "stop"
    client = ReplayClient([LLMReply(damaged, finish_reason=finish), valid])
    result = guarded_json(client, [{"role": "user", "content": "x"}], TURN, name="Turn")
    assert result.ok
    local = kind in ("code_fence", "prose", "trailing_comma")
    assert len(client.requests) == (1 if local else 2)


def test_faulty_client_is_seeded_and_raises_provider_errors():
    request = LLMRequest([{"role": "user", "content": "x"}], JSONSchemaSpec("Turn", TURN))

    def sequence(seed):
        client = FaultyClient(DemoClient(), seed=seed, rates={"timeout": 0.3, "code_fence": 0.3})
        out = []
        for _ in range(20):
            try:
                out.append(client.complete(request).text[:3])
            except ProviderError as exc:
                out.append(exc.kind)
        return out, client.injected

    assert sequence(7) == sequence(7)
    outcomes, injected = sequence(7)
    assert "timeout" in outcomes and "```" in outcomes and set(injected) == {"timeout", "code_fence"}
    with pytest.raises(ValueError):
        FaultyClient(DemoClient(), rates={"meteor": 1.0})


def test_settings_default_to_demo_without_keys_and_secrets_win():
    assert load_settings(env={}).provider == "demo"
    s = load_settings(env={"OPENAI_API_KEY": "sk-env-1234567890"})
    assert s.provider == "openai" and s.has_key and s.model == "gpt-4.1-mini"
    s = load_settings(env={"OPENAI_API_KEY": "sk-env"}, secrets={"OPENAI_API_KEY": "sk-secret"})
    assert s.openai_api_key == "sk-secret" and "sk-secret" not in repr(s)
    chosen = load_settings(env={"KATACHI_PROVIDER": "anthropic"})  # chosen without a key: kept, says so
    assert chosen.provider == "anthropic" and not chosen.has_key
    s = load_settings(env={"KATACHI_PROVIDER": "openai", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert s.provider == "openai" and s.has_key  # compatible servers need no key
    assert load_settings(env={"APP_DATA_DIR": "/tmp/x"}).data_dir.as_posix() == "/tmp/x"


def test_registry_builds_each_provider_and_wraps_faults():
    assert build_client(Settings()).provider == "demo"
    faulty = build_client(Settings(), fault_rate=0.5)
    assert isinstance(faulty, FaultyClient) and sum(faulty.rates.values()) == pytest.approx(0.5)
    assert faulty.rates["timeout"] == pytest.approx(0.5 * 0.2 / 3)
    assert faulty.rates["code_fence"] == pytest.approx(0.5 * 0.8 / 6)
    openai = build_client(Settings("openai", "gpt-x", None, "sk-test-123456"))
    anthropic = build_client(Settings("anthropic", "claude-x", None, None, "sk-ant-test-123456"))
    assert (openai.provider, openai.model) == ("openai", "gpt-x")
    assert (anthropic.provider, anthropic.model) == ("anthropic", "claude-x")


def test_replay_client_replays_a_debug_log_export():
    events: list = []
    valid = json.dumps(instance_from_schema(TURN), ensure_ascii=False)
    first = guarded_json(
        ReplayClient(["{broken", valid]),
        [{"role": "user", "content": "x"}],
        TURN,
        name="Turn",
        sink=ListSink(events),
    )
    replay = ReplayClient.from_debug_export(events_to_jsonl(events))
    again = guarded_json(replay, [{"role": "user", "content": "x"}], TURN, name="Turn")
    assert first.ok and again.ok and again.data == first.data
    assert [a.raw for a in again.attempts] == ["{broken", valid]


def test_a_provider_chosen_without_a_key_explains_itself_instead_of_switching_to_demo():
    client = build_client(load_settings(env={"KATACHI_PROVIDER": "openai"}))
    assert isinstance(client, MissingKeyClient) and (client.provider, client.model) == (
        "openai",
        "gpt-4.1-mini",
    )
    result = guarded_text(client, [{"role": "user", "content": "こんにちは"}])
    assert not result.ok and result.error_type == "provider_error"
    assert result.message == "LLMの呼び出しに失敗しました。 " + ProviderError.MESSAGES["missing_key"]
