"""What a process opens once, behind one typed door: the store engine, the Chroma client, the embedder, the
client factory and the background jobs (ARCHITECTURE.md "The house").

The shell builds one `Services` per storage configuration (`open_services(settings)`, cached with
st.cache_resource) and hands its parts to the flows, so pages never import core.llm, core.store or chromadb.
The engine and the Chroma client open on first use and are kept once open: chromadb takes over a second to
import and the home and debug pages never need it; a database or Chroma server that cannot be reached raises
on every use until it can (the shell turns that into a Japanese notice).

Jobs: `jobs()` is the one job interface. With DATABASE_URL on PostgreSQL it is the procrastinate engine
(core/jobs/engine.py; a worker runs in this process unless KATACHI_JOB_WORKER=off); otherwise the in-process
worker. Either way the flows' tasks come from `task_registry()` (this is the composition root that wires
them) and a job's dependencies from `job_context()`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from core.debuglog.events import DebugEvent, events_from_jsonl
from core.jobs.queue import JobQueue
from core.jobs.tasks import JobContext, TaskRegistry
from core.jobs.worker import BackgroundWorker
from core.llm.base import LLMClient, base_host
from core.llm.demo import Persona
from core.llm.providers import DESCRIPTORS
from core.llm.server_profiles import forget_form, remembered_forms
from core.services.clients import build_client
from core.settings import Settings, database_place, provider_label
from core.store import StoreBusy, StoreUnavailable

if TYPE_CHECKING:  # chromadb and SQLAlchemy are imported where they are first opened, not here
    from chromadb.api import ClientAPI as ChromaClient
    from sqlalchemy.engine import Engine

    from core.search.embedders import Embedder

__all__ = [
    "DESCRIPTORS",
    "BackgroundWorker",
    "ChromaClient",
    "DeploymentView",
    "Engine",
    "JobQueue",
    "LLMClient",
    "ServerStoreRequired",
    "Services",
    "StoreBusy",
    "StoreUnavailable",
    "deployment_view",
    "forget_form",
    "open_services",
    "remembered_forms",
    "task_registry",
]


def task_registry() -> TaskRegistry:
    """Every flow's background tasks and finders of owed work (the diagnosis summary is no task: the turn
    that starts it awaits its result in the same process)."""
    # The flows' task modules import what their jobs need (Sudachi, SQLAlchemy, numpy): only when jobs start.
    from core.flows.knowledge import register_knowledge_tasks  # noqa: PLC0415
    from core.flows.memory import register_memory_tasks  # noqa: PLC0415
    from core.flows.review_chat import register_review_tasks  # noqa: PLC0415

    registry = TaskRegistry()
    register_memory_tasks(registry)
    register_review_tasks(registry)
    register_knowledge_tasks(registry)
    return registry


class ServerStoreRequired(StoreUnavailable):
    """The deployment requires the team's database and Chroma server, and one is not configured; the message
    is Japanese and says which setting is missing."""


@dataclass
class Services:
    """The process's shared resources for one storage configuration (data dir, DATABASE_URL, Chroma)."""

    settings: Settings
    worker: BackgroundWorker
    _engine: Engine | None = field(default=None, repr=False)
    _jobs: JobQueue | None = field(default=None, repr=False)
    _jobs_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _chroma: ChromaClient | None = field(default=None, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @functools.cached_property
    def registry(self) -> TaskRegistry:
        """Every flow's background tasks (built on first use: the flows' job code is heavy to import)."""
        return task_registry()

    def engine(self) -> Engine:
        """The shared SQLAlchemy engine; raises StoreUnavailable while the database cannot be reached."""
        with self._lock:
            if self._engine is None:
                s = self.settings
                if s.require_server_store and not s.database_url:
                    raise ServerStoreRequired(
                        "KATACHI_REQUIRE_SERVER_STORE が有効ですが、DATABASE_URL が設定されていません。"
                        "チームのデータベースを指定してから起動してください（ローカルの SQLite には書き込みません）。"
                    )
                from core.store import open_store  # noqa: PLC0415 - SQLAlchemy and Alembic: when a page first needs the store

                self._engine = open_store(s.data_dir, url=s.database_url, pool=s.pool)
            return self._engine

    def chroma(self) -> ChromaClient:
        """The shared Chroma client (PersistentClient under the data dir, or HttpClient with CHROMA_HOST)."""
        with self._lock:
            if self._chroma is None:
                from core.search.vectors import open_chroma  # noqa: PLC0415 - chromadb takes >1 s to import; home/debug never need it

                # host "" (not None): the settings decide, env CHROMA_HOST is not read again here
                s = self.settings
                if s.require_server_store and not s.chroma_host:
                    raise ServerStoreRequired(
                        "KATACHI_REQUIRE_SERVER_STORE が有効ですが、CHROMA_HOST が設定されていません。"
                        "チームの Chroma サーバーを指定してから起動してください（組み込みの Chroma には書き込みません）。"
                    )
                self._chroma = open_chroma(s.data_dir, host=s.chroma_host or "", port=s.chroma_port)
            return self._chroma

    def embedder(self, settings: Settings | None = None) -> Embedder:
        """The deployment's embedder (KATACHI_EMBEDDINGS; the bundled model by default)."""
        from core.search.embedders import build_embedder  # noqa: PLC0415 - numpy and the model: when a page searches

        return build_embedder((settings or self.settings).embeddings)

    def embedder_label(self, settings: Settings | None = None) -> str:
        """What the deployment's embedder is called on screen, without building it (no numpy, no model)."""
        from core.search.embedder_labels import embedder_label  # noqa: PLC0415 - like embedder(): only when asked

        return embedder_label((settings or self.settings).embeddings)

    def knowledge_embedder_label(self, settings: Settings | None = None) -> str:
        """What the knowledge base's embedder is called on screen (the bundled embedder's sentence model)."""
        from core.search.embedder_labels import knowledge_embedder_label  # noqa: PLC0415 - only when asked

        return knowledge_embedder_label((settings or self.settings).embeddings)

    def client(
        self, settings: Settings, *, fault_rate: float = 0.0, personas: Mapping[str, Persona] | None = None
    ) -> LLMClient:
        """A client for these provider settings; `fault_rate` > 0 wraps it in the fault injector."""
        return build_client(settings, fault_rate=fault_rate, personas=personas)

    def job_context(self) -> JobContext:
        """What a job run by a worker gets: the shared engine, Chroma and embedder, and a client of the
        deployment's configured provider (a person's sidebar choice stays with their own session)."""
        return JobContext(
            self.engine(),
            self.client(self.settings),
            chroma=self.chroma,
            embedder=self.embedder(),
            secrets=tuple(self.settings.secrets),
        )

    def jobs(self) -> JobQueue:
        """The job interface of this deployment, opened (and its worker and sweep started) on first use."""
        with self._jobs_lock:
            if self._jobs is None:
                engine = self.engine()
                js = self.settings.jobs
                if engine.dialect.name == "postgresql":
                    from core.jobs.engine import EngineQueue  # noqa: PLC0415 - procrastinate only for a team

                    queue = EngineQueue(
                        engine,
                        self.registry,
                        self.job_context,
                        local=self.worker,
                        concurrency=js.concurrency,
                        sweep_every=js.sweep_s,
                    )
                    if js.in_process:
                        queue.start_worker()
                    self._jobs = queue
                else:
                    if js.in_process:
                        self.worker.start_sweep(engine, self.registry, self.job_context, js.sweep_s)
                    self._jobs = self.worker
            return self._jobs

    def job_calls(self, owner_id: str, after_id: int = 0) -> list[tuple[int, DebugEvent]]:
        """The model calls background jobs made for `owner_id` (redacted debug events) newer than row
        `after_id`, oldest first, with their row ids: what the debug page adds to the person's log."""
        from core.store.job_calls import calls_after  # noqa: PLC0415 - SQLAlchemy: when the debug page opens

        return [
            (row_id, event)
            for row_id, line in calls_after(self.engine(), owner_id, after_id)
            for event in events_from_jsonl(line)
        ]

    def queue_summary(self) -> dict[str, Any]:
        """For an admin: the job engine, counts per status, the oldest waiting job, recent failures."""
        return self.jobs().summary()


def open_services(settings: Settings, *, worker: BackgroundWorker | None = None) -> Services:
    """The door: nothing opens until it is first used (see the module docstring)."""
    return Services(settings=settings, worker=worker or BackgroundWorker(threads=2))


# Where a provider's SDK goes when no base URL is configured (what the sidebar names as its model server).
DEFAULT_MODEL_HOSTS = {"openai": "api.openai.com", "anthropic": "api.anthropic.com"}


@dataclass(frozen=True)
class DeploymentView:
    """What one replica uses, in Japanese and safe to show (no user, password or key): the store, the vector
    store, the job engine and the model server."""

    store: str
    vectors: str
    jobs: str
    model: str


def _database_place(url: str) -> str:
    place = database_place(url)
    return "DATABASE_URL を読み取れません" if place is None else place[1]


def deployment_view(settings: Settings, model_host: str | None = None) -> DeploymentView:
    """What `settings` imply this replica uses: SQLite file or PostgreSQL host and database; embedded Chroma
    path or Chroma server; the in-process worker or the PostgreSQL job queue (DATABASE_URL set); the
    provider and its server (`model_host`: the client's own base host when known, else the base URL
    configured, else the provider's default)."""
    s = settings
    if s.database_url:
        store = f"PostgreSQL（{_database_place(s.database_url)}）"
        jobs = "PostgreSQL のジョブキュー"
    else:
        store = f"SQLite ファイル（{s.data_dir / 'app.db'}）"
        jobs = "このプロセス内のワーカー"
    if s.chroma_host:
        vectors = f"Chroma サーバー（{s.chroma_host}:{s.chroma_port}）"
    else:
        vectors = f"組み込みの Chroma（{s.data_dir / 'chroma'}）"
    label = provider_label(s.provider)
    if s.provider == "demo":
        return DeploymentView(store, vectors, jobs, f"{label}（オフライン・サーバーなし）")
    configured = {"openai": s.base_url, "anthropic": s.anthropic_base_url}.get(s.provider)
    host = (
        model_host
        or (base_host(configured) if configured else None)
        or DEFAULT_MODEL_HOSTS.get(s.provider, "プロバイダーの既定のエンドポイント")
    )
    return DeploymentView(store, vectors, jobs, f"{label}（{host}）")
