"""Session-state access for pages: the LLM client, the debug sink, the store engine, the Chroma client, the
background worker.

The engine is SQLite under the data dir, or the database of DATABASE_URL (PostgreSQL for a team); Chroma is
embedded, or the server of CHROMA_HOST / CHROMA_PORT. One of each per process (st.cache_resource); a
database or Chroma server that cannot be reached stops the page with a Japanese message, never a traceback.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import streamlit as st

from core.debuglog.events import ListSink
from core.flows.registry import demo_personas
from core.people import Person
from core.services import (
    BackgroundWorker,
    JobQueue,
    LLMClient,
    ServerStoreRequired,
    Services,
    StoreUnavailable,
    open_services,
)
from core.settings import Settings, load_settings
from pages.ui.shell.nav import FLOW_PAGES

if TYPE_CHECKING:
    from core.flows import feedback
    from core.search.embedders import Embedder
    from core.services import ChromaClient, Engine
    from core.workbench.rerun import Target

# The chat keys of st.session_state.chat: one per flow page listed in pages/ui/shell/nav.py.
CHAT_FLOWS = tuple(p.flow.name for p in FLOW_PAGES if p.flow is not None)
PERSON_KEY = "app_person"
SESSION_ID_KEY = "app_session_id"  # the session's Person, set by the shell's sign-in (pages/ui/shell/auth.py)


def read_secrets() -> dict[str, Any]:
    """st.secrets as a dict; empty when there is no secrets.toml."""
    try:
        return {k: v for k, v in st.secrets.items() if isinstance(v, str | int | float)}
    except Exception:  # noqa: BLE001 - Streamlit raises several types when no secrets file exists
        return {}


@st.cache_resource(show_spinner=False)
def base_settings() -> Settings:
    return load_settings(secrets=read_secrets())


def init_session() -> None:
    """Spec 00 session keys, set once (ARCHITECTURE.md "Session state")."""
    ss = st.session_state
    ss.setdefault("chat", {flow: [] for flow in CHAT_FLOWS})
    for flow in CHAT_FLOWS:
        ss.chat.setdefault(flow, [])
    ss.setdefault("knowledge_outputs", [])
    ss.setdefault("debug_logs", [])
    ss.setdefault("app_settings", base_settings())
    ss.setdefault("app_debug", True)
    ss.setdefault("app_fault_pct", 0)  # the sidebar's fault-injection slider, in percent
    ss.setdefault("llm_client", None)
    ss.setdefault("llm_client_key", None)
    ss.setdefault("llm_client_pinned", False)  # tests inject a Replay client and pin it
    ss.setdefault(SESSION_ID_KEY, uuid.uuid4().hex[:12])  # trace id of this browser session


def browser_session_id() -> str:
    """The stable id of this browser session (every debug event of its turns carries it, core.debuglog.trace)."""
    return str(st.session_state.setdefault(SESSION_ID_KEY, uuid.uuid4().hex[:12]))


def ensure_shell(page_path: str) -> None:
    """Route a deep link through the shell when the shell has not run yet in this session.

    Until some session has run streamlit_app.py (which calls st.navigation), Streamlit treats the
    `pages/` folder the legacy way and runs `/knowledge` directly, without the shell. The page is then
    re-entered through the shell with its query parameters, so nothing in the link is lost.
    """
    if "app_settings" in st.session_state:
        return
    st.session_state["app_deep_link"] = (page_path, st.query_params.to_dict())
    st.switch_page("streamlit_app.py")


def follow_deep_link() -> None:
    """Called by the shell after st.navigation: finish a deep link that ensure_shell() redirected."""
    link = st.session_state.pop("app_deep_link", None)
    if link is not None:
        st.switch_page(link[0], query_params=link[1])


def settings() -> Settings:
    return cast(Settings, st.session_state["app_settings"])


def person() -> Person:
    """The person of this session (decided by pages/ui/shell/auth.py, which the shell runs before any page): every
    flow call that reads or writes personal data passes it."""
    found = st.session_state.get(PERSON_KEY)
    if not isinstance(found, Person):
        st.error("サインインの状態を確認できませんでした。ページを再読み込みしてください。")
        st.stop()
    return found


def client() -> LLMClient:
    """The active client, rebuilt when provider settings or the fault rate change (unless pinned).

    The demo model plays every registered flow (core.flows.registry personas).
    """
    ss = st.session_state
    s: Settings = ss["app_settings"]
    fault_rate = ss["app_fault_pct"] / 100
    key = (s.provider, s.model, s.base_url, fault_rate)
    if ss["llm_client"] is None or (not ss["llm_client_pinned"] and ss["llm_client_key"] != key):
        ss["llm_client"] = services().client(s, fault_rate=fault_rate, personas=demo_personas())
        ss["llm_client_key"] = key
    return cast(LLMClient, ss["llm_client"])


def client_for(target: Target) -> LLMClient:
    """A client for a re-run / replay target: the session's own client for the current one, else
    a fresh client of that configured provider and model (same keys and base URLs, no fault injection)."""
    from core.workbench.rerun import target_settings  # noqa: PLC0415 - the debug page's re-run: not on every page

    if target.current:
        return client()
    return services().client(target_settings(settings(), target), personas=demo_personas())


def sink() -> ListSink | None:
    """The debug sink over `debug_logs` while DEBUG is on; None otherwise (nothing is logged)."""
    if not st.session_state.get("app_debug"):
        return None
    return ListSink(st.session_state["debug_logs"], secrets=settings().secrets)


@st.cache_resource(show_spinner=False)
def _services(data_dir: str, url: str | None, host: str | None, port: int, _settings: Settings) -> Services:
    return open_services(_settings, worker=worker())


def services() -> Services:
    """The process's services for this session's storage settings (one per data dir, DATABASE_URL, Chroma)."""
    s = settings()
    return _services(str(s.data_dir), s.database_url, s.chroma_host, s.chroma_port, s)


def engine() -> Engine:
    """The shared SQLAlchemy engine (created once per data dir and DATABASE_URL)."""
    s = settings()
    try:
        return services().engine()
    except ServerStoreRequired as exc:
        st.error(str(exc), icon=":material/database_off:")
        st.stop()
    except StoreUnavailable:
        st.error(
            f"データベースに接続できません（{s.database_label}）。サーバーが起動しているか、"
            "DATABASE_URL の設定を確認してから、ページを再読み込みしてください。",
            icon=":material/database_off:",
        )
        st.stop()


def feedback_repo() -> feedback.FeedbackRepository:
    """The signed-in person's ratings of replies on the shared engine."""
    from core.flows import feedback  # noqa: PLC0415 - the feedback store (SQLAlchemy): when a reply is rated

    return feedback.repository(engine(), person())


def chroma() -> ChromaClient:
    """The shared Chroma client (PersistentClient under the data dir, or HttpClient with CHROMA_HOST)."""
    s = settings()
    try:
        return services().chroma()
    except ServerStoreRequired as exc:
        st.error(str(exc), icon=":material/cloud_off:")
        st.stop()
    except Exception:  # noqa: BLE001 - chromadb raises several types for an unreachable server; the page stops with a notice
        st.error(
            f"ベクトル検索のサーバーに接続できません（{s.chroma_host}:{s.chroma_port}）。Chroma サーバーが"
            "起動しているか、CHROMA_HOST / CHROMA_PORT を確認してから、ページを再読み込みしてください。",
            icon=":material/cloud_off:",
        )
        st.stop()


@st.cache_resource(show_spinner=False)
def worker() -> BackgroundWorker:
    """The process's one in-process worker: two threads, a bounded queue. It runs every job on the embedded
    default; with PostgreSQL it runs only what a turn awaits beside it (the diagnosis summary)."""
    return BackgroundWorker(threads=2)


# Seconds the opening thread waits before it imports the store and the flows' job code (~0.5 s of CPU): the
# browser is still drawing the first page then, and on two cores the two compete.
JOBS_OPEN_DELAY_S = 2.0


def start_jobs() -> None:
    """Open the job interface once per process, so its worker and the owed-work sweep run from the first page
    on (the home page too). The shell calls it after the page has run, and it opens on a thread of its own,
    JOBS_OPEN_DELAY_S later: the store's migrations and the flows' job code are not on the first paint's path (a
    page that needs jobs before then opens them itself, and the thread finds them open). A database that cannot
    be reached is reported by the page that needs it."""
    s = settings()
    _jobs_opener((str(s.data_dir), s.database_url, s.chroma_host, s.chroma_port), services())


def _open_jobs(opened: Services) -> None:
    time.sleep(JOBS_OPEN_DELAY_S)
    try:
        opened.jobs()
    except StoreUnavailable:
        return


@st.cache_resource(show_spinner=False)
def _jobs_opener(key: tuple[object, ...], _opened: Services) -> threading.Thread:
    """One opening thread per storage configuration (`key`, as `services()` keys its Services; `_opened` is
    not hashed)."""
    thread = threading.Thread(target=_open_jobs, args=(_opened,), name="katachi-jobs-open", daemon=True)
    thread.start()
    return thread


def jobs() -> JobQueue:
    """The deployment's job interface: the in-process worker, or the PostgreSQL job engine whose status every
    replica reads alike. Jobs write to the store; pages poll from the script thread, never from a worker."""
    return services().jobs()


@st.cache_resource(show_spinner=False)
def _done_once() -> dict[tuple[str, ...], object]:
    return {}


T = TypeVar("T")


def once_per_process(
    key: tuple[str, ...], label: str, work: Callable[[Callable[[int, int], None]], T]
) -> T | None:
    """Run `work(progress)` once per process and `key` (start-up reconciliation), drawing a progress bar while
    it runs; later calls return None. Two sessions arriving together may both run it (the work is idempotent)."""
    done = _done_once()
    if key in done:
        return None
    bars: list[Any] = []  # made on the first report only: an element that every run does not draw shifts the
    # page's elements, and Streamlit then redraws the chat input empty (a typed, unsent message was lost)

    def progress(n: int, total: int) -> None:
        if not bars:
            bars.append(st.empty())
        bars[0].progress(n / max(total, 1), text=f"{label} {n:,} / {total:,}")

    result = work(progress)
    for bar in bars:
        bar.empty()
    done[key] = True
    return result


def embedder() -> Embedder:
    """The deployment's embedder (KATACHI_EMBEDDINGS; the bundled model by default), one per process."""
    return services().embedder(settings())


def embedder_label() -> str:
    """The deployment's embedder as the sidebar and the debug page name it (nothing is loaded to say so)."""
    return services().embedder_label(settings())


def knowledge_embedder_label() -> str:
    """The knowledge base's embedder as the debug page names it (nothing is loaded to say so)."""
    return services().knowledge_embedder_label(settings())


def is_demo() -> bool:
    return client().provider == "demo"


def demo_badge() -> None:
    """Label the demo model wherever its output appears."""
    if is_demo():
        st.caption(
            ":material/science: デモモデル（オフライン）で動作中です。応答は実際のLLMではなく、決まった台本に沿って生成されます。"
        )
