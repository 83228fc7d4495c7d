"""AppTest: the shell, the home page and the debug-log page."""

import json

from streamlit.testing.v1 import AppTest

from core.contracts.schemas import load_schema
from core.debuglog.events import ListSink
from core.flows.registry import FLOWS
from core.guard.json_guard import guarded_json
from core.llm.missing_key import MissingKeyClient
from core.llm.replay import ReplayClient
from core.settings import Settings
from pages.ui.shell.nav import FLOW_PAGES
from pages.ui.shell.state import CHAT_FLOWS
from tests.pages.conftest import APP, make_app

VALID = json.dumps(
    {
        "control": {"schema_version": "1.0", "mode": "interview"},
        "state": {"phase": "collect_case", "missing_info": []},
        "assistant_message": "契約書の種類を教えてください。",
        "knowledge_json": None,
    },
    ensure_ascii=False,
)


def test_shell_sets_spec_session_keys_and_home_shows_demo_provider(tmp_path):
    at = make_app(tmp_path)
    assert not at.exception
    assert set(at.session_state["chat"]) == {"knowledge", "review", "memory", "diagnosis"}
    assert at.session_state["knowledge_outputs"] == [] and at.session_state["debug_logs"] == []
    assert at.session_state["llm_client"].provider == "demo"
    provider_box = next(b for b in at.sidebar.selectbox if b.label == "プロバイダー")
    assert provider_box.value == "demo" and provider_box.key.startswith("sidebar_provider_")
    (status,) = [m.value for m in at.markdown if m.value.startswith("**使用中のプロバイダー**")]
    line, note = status.split("\n\n")
    assert line == "**使用中のプロバイダー** デモモデル　**モデル** katachi\\-demo　**APIキー** 不要（デモ）"
    assert note.startswith(":material/science: 現在はデモモデル（オフライン）で動作しています。")


def test_the_shell_demo_model_plays_every_registered_flow(tmp_path):
    at = make_app(tmp_path)
    assert at.session_state["llm_client"].personas == {n: f.demo_persona for n, f in FLOWS.items()}


def test_the_page_list_is_the_one_registration_of_chat_flows():
    assert tuple(p.flow.name for p in FLOW_PAGES if p.flow is not None) == CHAT_FLOWS
    assert all(p.flow is FLOWS[p.flow.name] for p in FLOW_PAGES if p.flow is not None)


def _first_run(tmp_path, settings, provider):
    # AppTest re-runs only the page under st.navigation, so the sidebar is driven on the first run.
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = settings.with_provider(provider)
    return at.run()


def test_a_provider_chosen_without_a_key_is_kept_and_the_demo_model_is_offered(tmp_path):
    at = _first_run(tmp_path, Settings(data_dir=tmp_path), "anthropic")
    assert not at.exception
    assert any("APIキーが設定されていません" in w.value for w in at.sidebar.warning)
    client = at.session_state["llm_client"]
    assert isinstance(client, MissingKeyClient) and client.provider == "anthropic"  # never a silent switch
    at.sidebar.button[0].click().run()  # 「デモモデルに切り替える」: the person's own choice
    assert at.session_state["app_settings"].provider == "demo"


def test_the_configured_provider_survives_a_stale_widget_value_from_before_a_restart(tmp_path):
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(
        data_dir=tmp_path, anthropic_api_key="sk-ant-test-000000"
    ).with_provider("anthropic")
    at.session_state["sidebar_provider"] = "demo"  # what a tab reconnecting after a restart used to send
    at.run()
    assert not at.exception
    assert at.session_state["llm_client"].provider == "anthropic"
    assert next(b for b in at.sidebar.selectbox if b.label == "プロバイダー").value == "anthropic"


def test_choosing_a_provider_with_a_key_builds_its_client_and_never_shows_the_key(tmp_path):
    at = _first_run(
        tmp_path, Settings(data_dir=tmp_path, anthropic_api_key="sk-ant-test-000000"), "anthropic"
    )
    assert not at.exception
    client = at.session_state["llm_client"]
    assert (client.provider, client.model) == ("anthropic", "claude-sonnet-4-5")
    assert any("設定済み" in c.value for c in at.sidebar.caption)
    shown = [str(e.value) for e in [*at.markdown, *at.caption, *at.metric, *at.text_input]]
    assert not any("sk-ant-test" in v for v in shown)


def test_the_sidebar_states_the_settings_in_effect_outside_the_settings_popover(tmp_path):
    """Provider and model, embedder, DEBUG and fault injection are text in the sidebar; the widgets that change
    them sit in the 「設定を変更」 popover (the browser builds a popover's widgets only when it opens)."""
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(
        data_dir=tmp_path, anthropic_api_key="sk-ant-test-000000"
    ).with_provider("anthropic")
    at.session_state["app_fault_pct"] = 20
    at.run()
    assert not at.exception
    status = at.sidebar.caption[1].value  # after the local person's line
    assert status.split("\n\n") == [
        ":material/smart_toy: Anthropic ・ claude\\-sonnet\\-4\\-5",
        ":material/manage_search: 検索の埋め込み: 同梱モデル（e5‑small＋語ベクトル chiVe・オフライン）",
        ":material/bug_report: LLM呼び出しの記録: オン ・ :orange[**障害注入 20%**]",
    ]
    (popover,) = at.sidebar.get("popover")
    assert popover.proto.popover.label == "設定を変更"
    inside = {
        w.label for w in [*popover.selectbox, *popover.toggle, *popover.select_slider, *popover.text_input]
    }
    assert inside == {"プロバイダー", "LLM呼び出しを記録する（デバッグ）", "障害注入（デモ用）", "モデル"}


def test_the_shell_skips_streamlits_run_outside_streamlit_check():
    """streamlit_app.py marks Streamlit's "not run with `streamlit run`" check as done (it walks every loaded
    module on the first element of a process); the flag it sets must still be the one Streamlit reads."""
    import inspect  # noqa: PLC0415

    import streamlit.delta_generator as dg  # noqa: PLC0415

    assert hasattr(dg, "_use_warning_has_been_displayed")
    assert "_use_warning_has_been_displayed" in inspect.getsource(dg._maybe_print_use_warning)


def test_debug_page_explains_how_to_turn_debug_on(tmp_path):
    at = make_app(tmp_path, page="pages/debug_log.py", debug=False)
    assert not at.exception
    assert any("LLM呼び出しを記録する（デバッグ）" in i.value for i in at.info)


def test_debug_page_lists_a_guarded_call_and_shows_its_detail(tmp_path):
    at = make_app(tmp_path, page="pages/debug_log.py")
    events = at.session_state["debug_logs"]
    client = ReplayClient(['```json\n{"control": {}}\n```', VALID])
    result = guarded_json(
        client,
        [{"role": "user", "content": "秘密保持の相談"}],
        load_schema("knowledge_llm_turn"),
        name="Turn",
        sink=ListSink(events),
        tags={"flow": "knowledge", "step": "turn"},
    )
    assert result.ok
    at.session_state["debug_logs"] = events
    at.session_state["debug_tab"] = "呼び出し一覧"
    at.run()
    assert not at.exception
    table = at.dataframe(key="debug_calls_table").value
    assert list(table["結果"]) == ["スキーマ違反", "成功"] and list(table["フロー"]) == [
        "ナレッジ聞き取り",
        "ナレッジ聞き取り",
    ]
    # the newest call is selected by default; choose the first (repaired) one
    at.selectbox(key="debug_selected").set_value(0).run()
    codes = [c.value for c in at.code]
    assert "秘密保持の相談" in codes  # request messages
    assert any(c.startswith("```json") for c in codes)  # raw output
    assert any(
        c.startswith("以下は、あなたが直前に出力した JSON 文字列です。") for c in codes
    )  # repair prompt
    assert any("コードブロックの囲みを除去" in m.value for m in at.markdown)  # the local fix, in words
    at.session_state["debug_tab"] = "エクスポート"
    at.run()
    labels = [b.label for b in at.get("download_button")]
    assert labels == [
        "JSONLで保存",
        "CSVで保存",
        "OpenTelemetry（OTLP/JSON）で保存",
        "OpenTelemetry（OTLP protobuf）で保存",
    ]
    at.button(key="debug_clear").click().run()
    assert at.session_state["debug_logs"] == []


def test_shell_data_keys_survive_reruns_without_the_sidebar(tmp_path):
    # Data keys are not bound to widgets, so a rerun that skips the sidebar does not delete them.
    at = make_app(tmp_path, page="pages/debug_log.py")
    at.run()
    at.run()
    assert not at.exception
    assert at.session_state["app_fault_pct"] == 0 and at.session_state["app_debug"] is True


def test_an_unreachable_database_is_a_notice_without_the_password(tmp_path) -> None:  # type: ignore[no-untyped-def]
    at = AppTest.from_file(APP, default_timeout=30)
    at.session_state["app_settings"] = Settings(
        data_dir=tmp_path, database_url="postgresql://katachi:s3cret@127.0.0.1:9/katachi"
    )
    at.run()
    at.switch_page("pages/knowledge.py")
    at.run()
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "データベースに接続できません（postgresql://127.0.0.1:9/katachi）" in error
    assert "s3cret" not in error
