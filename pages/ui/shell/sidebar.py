"""The shell's sidebar: the settings in effect (provider, model, embedder, DEBUG, fault injection) and, behind
「設定を変更」, the widgets that change them (provider, model, base URL and server profile, DEBUG, fault injection).

The provider a person configured is the provider they get: the choice lives in the data key
`app_settings` (never bound to a widget); widgets only propose changes through their on_change
callbacks. Widget keys carry a per-process boot id, so a browser tab that reconnects after a restart
cannot push its old selection (e.g. the demo model) over what the server was started with.
"""

from __future__ import annotations

import uuid

import streamlit as st

from core.services import DESCRIPTORS, deployment_view, forget_form, remembered_forms
from core.settings import SERVER_LABELS, SERVERS, Settings, provider_label, provider_names
from pages.ui.shell import state
from pages.ui.shell.render import plain_label

FORM_LABELS = {
    "json_schema": "json_schema（strict）",
    "ollama_format": "json_schema（Ollama形式）",
    "json_object+schema": "json_object + スキーマ",
    "json_object": "json_object（スキーマなし）",
}


@st.cache_resource(show_spinner=False)
def boot_id() -> str:
    """Changes on every server start: part of every sidebar widget key."""
    return uuid.uuid4().hex[:8]


def _key(name: str) -> str:
    return f"sidebar_{name}_{boot_id()}"


def _apply(change: str) -> None:
    """on_change: copy one widget's value into the settings (the only way the choice changes)."""
    ss = st.session_state
    current: Settings = ss["app_settings"]
    value = ss[_key(change)]
    if change == "provider":  # the model typed for that provider earlier in this session comes back
        model = ss.get(_key(f"model_{value}"))
        ss["app_settings"] = current.with_provider(value, str(model or "").strip() or None, current.base_url)
    elif change == "model":
        ss["app_settings"] = current.with_provider(
            current.provider, str(value).strip() or None, current.base_url
        )
    elif change == "base_url":
        ss["app_settings"] = current.with_provider(
            current.provider, current.model, str(value).strip() or None
        )
    elif change == "server":
        ss["app_settings"] = current.with_server(value)


def _use_demo() -> None:
    st.session_state["app_settings"] = state.settings().with_provider("demo")


def _seed(name: str, value: object) -> str:
    """The widget key, seeded from the settings when the widget is new (first run, restart, provider switch)."""
    key = _key(name)
    if key not in st.session_state:
        st.session_state[key] = value
    return key


def _provider_fields(current: Settings) -> None:
    """Inside the settings popover: the model, and for OpenAI-compatible servers the base URL and server type."""
    provider = current.provider
    st.text_input("モデル", key=_seed(f"model_{provider}", current.model), on_change=_apply, args=("model",))
    if provider == "openai":
        st.text_input(
            "ベースURL（互換サーバー用・任意）",
            key=_seed("base_url", current.base_url or ""),
            on_change=_apply,
            args=("base_url",),
            placeholder="例: http://localhost:11434/v1",
        )
        st.selectbox(
            "サーバーの種類（構造化出力の頼み方）",
            SERVERS,
            format_func=lambda s: SERVER_LABELS[s],
            key=_seed("server", current.server),
            on_change=_apply,
            args=("server",),
        )
        url = (current.base_url or "https://api.openai.com/v1").rstrip("/")
        form = remembered_forms().get(url)
        if form:
            st.caption(f":material/data_object: このサーバーで使える形式: {FORM_LABELS.get(form, form)}")
            st.button(
                "構造化出力の形式をもう一度試す",
                key=_key("retry_form"),
                icon=":material/restart_alt:",
                on_click=forget_form,
                args=(url,),
                help="サーバーが json_schema を受け付けるようになったときに。次の呼び出しで最も厳密な形式から試します。",
            )
    if current.has_key and DESCRIPTORS[provider].secret_settings:
        st.caption(":material/key: 認証情報: 設定済み（値は表示しません）")


def _problems(current: Settings) -> None:
    """What keeps the chosen provider from answering, shown in the sidebar itself (not behind the settings
    button): a missing optional package, missing credentials, and the way back to the demo model."""
    descriptor = DESCRIPTORS[current.provider]
    missing = descriptor.missing_modules()
    if missing:
        st.warning(
            f"{descriptor.label} を使うための追加パッケージがインストールされていません（{', '.join(missing)}）。"
            f"`pip install 'katachi[{descriptor.extra}]'` でインストールしてから、アプリを再起動してください。",
            icon=":material/extension_off:",
        )
    if not current.has_key:
        st.warning(
            f"{descriptor.label}: {descriptor.missing_hint}"
            "環境変数か .streamlit/secrets.toml で設定するか、デモモデルに切り替えてください。",
            icon=":material/key_off:",
        )
        st.button(
            "デモモデルに切り替える", key=_key("use_demo"), on_click=_use_demo, icon=":material/science:"
        )


def _provider_label(provider: str) -> str:
    extra = "（追加パッケージ未インストール）" if DESCRIPTORS[provider].missing_modules() else ""
    return f"{provider}: {provider_label(provider)}{extra}"


def _status(current: Settings) -> None:
    """The settings in effect, as text: what every page runs on, readable without opening anything."""
    ss = st.session_state
    if current.provider == "demo":
        model = ":material/science: デモモデル（オフライン）: APIキー不要で動作します。"
    else:
        model = f":material/smart_toy: {plain_label(provider_label(current.provider))} ・ {plain_label(current.model)}"
    # the widgets' own keys first: they hold a change made in the popover before this run reaches the widgets
    debug = bool(ss.get("sidebar_debug", ss["app_debug"]))
    fault = int(ss.get("sidebar_fault_pct", ss["app_fault_pct"]))
    faults = f":orange[**障害注入 {fault}%**]" if fault else "障害注入なし"
    lines = [
        model,
        f":material/manage_search: 検索の埋め込み: {state.embedder_label()}",
        f":material/bug_report: LLM呼び出しの記録: {'オン' if debug else 'オフ'} ・ {faults}",
    ]
    st.caption("\n\n".join(lines))  # one element: every element is one more message on the first paint


def render() -> None:
    """Draw the sidebar: the settings in effect as text, what blocks the provider, and the widgets that change
    them in a popover. The browser builds a popover's widgets only when it opens, so the selectbox, toggle and
    slider (the costliest elements to draw) stay off the first paint. `st.session_state.app_settings` stays
    the one source of truth."""
    ss = st.session_state
    current = state.settings()
    with st.sidebar:
        st.subheader("LLMの設定")
        _status(current)
        with st.popover("設定を変更", icon=":material/tune:", width="stretch"):
            key = _key("provider")
            if ss.get(key) != current.provider:  # e.g. the demo button: the widget follows the settings
                ss[key] = current.provider
            st.selectbox(
                "プロバイダー",
                provider_names(),
                format_func=_provider_label,
                key=key,
                on_change=_apply,
                args=("provider",),
            )
            if current.provider != "demo":
                _provider_fields(current)
            ss["app_debug"] = st.toggle(
                "LLM呼び出しを記録する（デバッグ）",
                value=ss["app_debug"],
                key="sidebar_debug",
                help="オンの間だけ、このセッション内にLLMとのやり取りを記録します。外部には保存しません。",
            )
            ss["app_fault_pct"] = st.select_slider(
                "障害注入（デモ用）",
                options=[0, 10, 20, 30, 50, 80, 100],
                value=ss["app_fault_pct"],
                key="sidebar_fault_pct",
                format_func=lambda v: f"{v}%",
                help="指定した割合でLLMの出力をわざと壊したり、通信エラー（タイムアウト・429・5xx）を起こしたりして、ガードが修復・報告する様子をデバッグログで確認できます。",
            )
        _problems(current)  # after the popover: a warning appearing above it would shift it and close it
        _deployment(current)


def _deployment(current: Settings) -> None:
    """Which store, vector store, job engine and model server this replica uses (never a password or key)."""
    view = deployment_view(current, getattr(state.client(), "base_host", None))
    with st.expander("このサーバーの接続先", icon=":material/dns:"):
        st.text(f"データベース: {view.store}")
        st.text(f"ベクトル検索: {view.vectors}")
        st.text(f"バックグラウンド処理: {view.jobs}")
        st.text(f"モデルサーバー: {view.model}")
