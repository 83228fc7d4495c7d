"""Katachi shell: page config, session defaults, provider settings in the sidebar, navigation."""

import streamlit as st

from core.settings import DEFAULT_MODELS, PROVIDER_LABELS, PROVIDERS
from pages.ui import state
from pages.ui.nav import HOME, existing_pages

st.set_page_config(page_title="Katachi", page_icon=":material/category:", layout="wide")
state.init_session()


def sidebar_settings() -> None:
    ss = st.session_state
    current = state.settings()
    ss.setdefault("sidebar_provider", current.provider)
    with st.sidebar:
        st.subheader("LLMの設定")
        provider = st.selectbox(
            "プロバイダー",
            PROVIDERS,
            format_func=lambda p: f"{p}: {PROVIDER_LABELS[p]}",
            key="sidebar_provider",
        )
        if provider != "demo":
            model = st.text_input(
                "モデル",
                value=current.model if current.provider == provider else DEFAULT_MODELS[provider],
                key=f"sidebar_model_{provider}",
            )
            base_url = ""
            if provider == "openai":
                base_url = st.text_input(
                    "ベースURL（互換サーバー用・任意）",
                    value=current.base_url or "",
                    key="sidebar_base_url",
                    placeholder="例: http://localhost:11434/v1",
                )
            candidate = current.with_provider(provider, model.strip() or None, base_url.strip() or None)
            if candidate.has_key:
                ss["app_settings"] = candidate
                st.caption(":material/key: APIキー: 設定済み（値は表示しません）")
            else:
                st.warning(
                    f"{provider} のAPIキーが設定されていないため、デモモデルを使います。"
                    "環境変数か .streamlit/secrets.toml で設定してください。"
                )
                ss["app_settings"] = current.with_provider("demo")
        else:
            ss["app_settings"] = current.with_provider("demo")
            st.caption(":material/science: デモモデル（オフライン）: APIキー不要で動作します。")
        # Data keys (app_*) are never bound to widgets, so Streamlit never deletes them.
        ss["app_debug"] = st.toggle(
            "DEBUG（LLM呼び出しを記録）",
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


sidebar_settings()
state.client()  # build (or rebuild) the session's client before any page runs
pages = [st.Page(p.path, title=p.title, icon=p.icon, default=p is HOME) for p in existing_pages()]
navigation = st.navigation(pages)
state.follow_deep_link()
navigation.run()
