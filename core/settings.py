"""Provider, model, keys, data dir and storage servers, from the environment or values the shell passes in
(st.secrets).

The demo model is the default whenever no API key is configured. Storage is embedded (SQLite and Chroma under
the data dir) unless DATABASE_URL (a SQLAlchemy URL, e.g. PostgreSQL) or CHROMA_HOST name a server.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from core.llm.deadline import Deadlines
from core.llm.providers import DESCRIPTORS
from core.llm.server_profiles import DEFAULT_PROFILE, PROFILES


def provider_names() -> tuple[str, ...]:
    """Every registered provider (core.llm.providers), in the sidebar's order."""
    return tuple(DESCRIPTORS)


def provider_label(name: str) -> str:
    """The provider's Japanese label (its name when unknown)."""
    descriptor = DESCRIPTORS.get(name)
    return descriptor.label if descriptor else name


def default_model(name: str) -> str:
    return DESCRIPTORS[name].default_model


# How an OpenAI-compatible server is asked for structured output (core.llm.server_profiles).
SERVERS = tuple(PROFILES)
DEFAULT_SERVER = DEFAULT_PROFILE
DEFAULT_CHROMA_PORT = 8000
SERVER_LABELS = {
    "auto": "自動判定（拒否されたら形式を下げる）",
    "openai": "OpenAI（json_schema strict）",
    "vllm": "vLLM",
    "ollama": "Ollama",
    "llamacpp": "llama.cpp・llama-cpp-python",
    "lmstudio": "LM Studio",
    "azure": "Azure OpenAI",
}


EMBEDDING_KINDS = ("bundled", "e5", "openai", "ngram", "bedrock", "gemini")


@dataclass(frozen=True)
class EmbeddingSettings:
    """Which embedder builds the vectors (core.search.embedders): the bundled model by default, an
    OpenAI-compatible `/v1/embeddings` endpoint, or the n-gram hash fallback."""

    kind: str = "bundled"
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    dimensions: int | None = None
    # bedrock / gemini (core.search.provider_embedders): the provider settings, as in Settings.credentials
    credentials: tuple[tuple[str, str], ...] = field(default=(), repr=False)


@dataclass(frozen=True)
class PoolSettings:
    """The database connection pool of one replica (PostgreSQL): at most `size + max_overflow` connections, a
    request waits `timeout_s` for a free one. Keep replicas × (size + max_overflow) under the server's
    max_connections (100 by default), or put PgBouncer in front."""

    size: int = 5
    max_overflow: int = 5
    timeout_s: float = 10.0


@dataclass(frozen=True)
class JobSettings:
    """Background jobs (core/jobs): whether this process runs a worker (`in_process`; off for replicas that
    leave jobs to `python -m core.jobs` processes), how many jobs it runs at once, and how often it looks
    for owed work (pending extractions, missing summaries) to queue again."""

    in_process: bool = True
    concurrency: int = 2
    sweep_s: float = 60.0


@dataclass(frozen=True)
class Settings:
    provider: str = "demo"
    model: str = "katachi-demo"
    base_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    anthropic_api_key: str | None = field(default=None, repr=False)
    data_dir: Path = Path(".data")
    timeout_s: float = 60.0
    anthropic_base_url: str | None = None  # a proxy or gateway in front of the Anthropic API
    server: str = DEFAULT_SERVER  # server profile of the OpenAI-compatible endpoint (SERVERS)
    deadlines: Deadlines = field(default_factory=Deadlines)  # connect / first byte / overall, per call
    database_url: str | None = field(default=None, repr=False)  # may carry a password: never shown
    chroma_host: str | None = None  # a Chroma server (`chroma run`) instead of the embedded one
    chroma_port: int = DEFAULT_CHROMA_PORT
    embeddings: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    pool: PoolSettings = field(default_factory=lambda: PoolSettings())
    require_server_store: bool = False  # KATACHI_REQUIRE_SERVER_STORE=1: refuse SQLite / embedded Chroma
    jobs: JobSettings = field(default_factory=lambda: JobSettings())
    # The settings the descriptor providers read (region, keys, project ids), as (name, value) pairs.
    credentials: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def credential_map(self) -> dict[str, str]:
        """`credentials` as a dict (what a descriptor's `ready` and `build` take)."""
        return dict(self.credentials)

    @property
    def provider_values(self) -> dict[str, str]:
        """Every provider setting by its environment name, as a descriptor's `ready` and `build` read them:
        `credentials`, plus the OpenAI / Anthropic fields this class keeps by name (the sidebar changes the
        base URL at run time)."""
        named = {
            "OPENAI_API_KEY": self.openai_api_key,
            "OPENAI_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": self.anthropic_api_key,
            "ANTHROPIC_BASE_URL": self.anthropic_base_url,
        }
        return {**self.credential_map, **{k: v for k, v in named.items() if v}}

    @property
    def api_key(self) -> str | None:
        return {"openai": self.openai_api_key, "anthropic": self.anthropic_api_key}.get(self.provider)

    @property
    def has_key(self) -> bool:
        """Whether the active provider can be called (its descriptor's `ready`: a key, a region, or an
        OpenAI-compatible base URL)."""
        descriptor = DESCRIPTORS.get(self.provider)
        return descriptor is not None and descriptor.ready(self.provider_values)

    @property
    def secrets(self) -> list[str]:
        """Values that must never be shown or logged (API keys, the database password and URL)."""
        found = [s for s in (self.openai_api_key, self.anthropic_api_key, self.embeddings.api_key) if s]
        secret_names = {name for d in DESCRIPTORS.values() for name in d.secret_settings}
        pairs = (*self.credentials, *self.embeddings.credentials)
        found += list(dict.fromkeys(value for name, value in pairs if name in secret_names and value))
        if self.database_url:
            found.append(self.database_url)
            password = database_password(self.database_url)
            if password:
                found.append(password)
        return found

    @property
    def database_label(self) -> str:
        """Which database is in use, safe to show: engine, host and database name (never the password)."""
        return database_label(self.database_url)

    def with_provider(self, provider: str, model: str | None = None, base_url: str | None = None) -> Settings:
        if provider not in DESCRIPTORS:
            raise ValueError(f"unknown provider: {provider}")
        return replace(
            self, provider=provider, model=model or default_model(provider), base_url=base_url or None
        )

    def with_server(self, server: str) -> Settings:
        """The same settings with another server profile (the sidebar's choice)."""
        if server not in SERVERS:
            raise ValueError(f"unknown server profile: {server}")
        return replace(self, server=server)


def database_password(url: str) -> str | None:
    """The password inside a database URL, if any (so it can be redacted)."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415 - SQLAlchemy takes ~0.4 s; only with DATABASE_URL
    from sqlalchemy.exc import ArgumentError  # noqa: PLC0415

    try:
        return make_url(url).password or None
    except ArgumentError:
        return None


def database_label(url: str | None) -> str:
    """`SQLite（組み込み）` or e.g. `postgresql://db.internal:5432/katachi`, without user or password."""
    if not url:
        return "SQLite（組み込み）"
    place = database_place(url)
    return "（DATABASE_URL を読み取れません）" if place is None else f"{place[0]}://{place[1]}"


def database_place(url: str) -> tuple[str, str] | None:
    """(engine name, `host:port/database`) of a database URL, never user or password; None when unreadable."""
    from sqlalchemy.engine import make_url  # noqa: PLC0415 - see database_password
    from sqlalchemy.exc import ArgumentError  # noqa: PLC0415

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    where = f"{parsed.host or ''}{f':{parsed.port}' if parsed.port else ''}"
    return parsed.get_backend_name(), f"{where}/{parsed.database or ''}"


def _port(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


def _pick(name: str, env: Mapping[str, str], secrets: Mapping[str, Any]) -> str | None:
    value = secrets.get(name) or env.get(name)
    return str(value).strip() or None if value else None


def load_settings(env: Mapping[str, str] | None = None, secrets: Mapping[str, Any] | None = None) -> Settings:
    """Read KATACHI_PROVIDER / KATACHI_MODEL / KATACHI_SERVER / KATACHI_TIMEOUT_* / OPENAI_* / ANTHROPIC_* /
    APP_DATA_DIR / DATABASE_URL / CHROMA_HOST / CHROMA_PORT, and the descriptor providers' settings.

    Secrets win over env. An unknown KATACHI_SERVER falls back to `auto`. Without KATACHI_PROVIDER the
    provider is the first with a key (OpenAI, Anthropic; Bedrock, Gemini and watsonx only when named), else the demo model; a provider named in KATACHI_PROVIDER is kept
    even without its key (its calls then say the key is missing), never silently replaced by the demo.
    """
    env = os.environ if env is None else env
    secrets = secrets or {}
    openai_key = _pick("OPENAI_API_KEY", env, secrets)
    anthropic_key = _pick("ANTHROPIC_API_KEY", env, secrets)
    base_url = _pick("OPENAI_BASE_URL", env, secrets)
    provider = (_pick("KATACHI_PROVIDER", env, secrets) or "").lower()
    if provider not in DESCRIPTORS:
        provider = "openai" if openai_key else "anthropic" if anthropic_key else "demo"
    model = _pick("KATACHI_MODEL", env, secrets) or default_model(provider)
    data_dir = Path(_pick("APP_DATA_DIR", env, secrets) or ".data")
    server = (_pick("KATACHI_SERVER", env, secrets) or DEFAULT_SERVER).lower()
    settings = Settings(
        provider,
        model,
        base_url if provider == "openai" else None,
        openai_key,
        anthropic_key,
        data_dir,
        server=server if server in SERVERS else DEFAULT_SERVER,
        deadlines=Deadlines.from_env(
            {k: str(v) for k, v in {**env, **secrets}.items() if k.startswith("KATACHI_TIMEOUT_")}
        ),
        database_url=_pick("DATABASE_URL", env, secrets),
        chroma_host=_pick("CHROMA_HOST", env, secrets),
        chroma_port=_port(_pick("CHROMA_PORT", env, secrets), DEFAULT_CHROMA_PORT),
        embeddings=load_embedding_settings(env, secrets, openai_key),
        pool=PoolSettings(
            size=_port(_pick("KATACHI_DB_POOL_SIZE", env, secrets), PoolSettings.size),
            max_overflow=_port(_pick("KATACHI_DB_MAX_OVERFLOW", env, secrets), PoolSettings.max_overflow),
            timeout_s=float(
                _port(_pick("KATACHI_DB_POOL_TIMEOUT", env, secrets), int(PoolSettings.timeout_s))
            ),
        ),
        require_server_store=(_pick("KATACHI_REQUIRE_SERVER_STORE", env, secrets) or "").lower()
        in ("1", "true", "yes", "on"),
        jobs=JobSettings(
            in_process=(_pick("KATACHI_JOB_WORKER", env, secrets) or "in-process").lower() != "off",
            concurrency=_port(_pick("KATACHI_JOB_CONCURRENCY", env, secrets), JobSettings.concurrency),
            sweep_s=float(_port(_pick("KATACHI_JOB_SWEEP_S", env, secrets), int(JobSettings.sweep_s))),
        ),
        credentials=load_credentials(env, secrets),
    )
    return settings


def load_credentials(env: Mapping[str, str], secrets: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The settings every descriptor provider names (AWS_REGION, GEMINI_API_KEY, WATSONX_URL, ...), secrets first."""
    named = {
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
    }  # Settings fields
    names = dict.fromkeys(name for d in DESCRIPTORS.values() for name in d.settings if name not in named)
    return tuple((name, value) for name in names if (value := _pick(name, env, secrets)))


def load_embedding_settings(
    env: Mapping[str, str], secrets: Mapping[str, Any], openai_key: str | None
) -> EmbeddingSettings:
    """KATACHI_EMBEDDINGS (`bundled` default, `e5`, `openai`, `ngram`, `bedrock`, `gemini`; unknown values mean
    `bundled`),
    KATACHI_EMBEDDINGS_MODEL, KATACHI_EMBEDDINGS_BASE_URL, KATACHI_EMBEDDINGS_DIMENSIONS and
    KATACHI_EMBEDDINGS_API_KEY (else OPENAI_API_KEY)."""
    kind = (_pick("KATACHI_EMBEDDINGS", env, secrets) or "bundled").lower()
    if kind not in EMBEDDING_KINDS:
        kind = "bundled"
    dims = _port(_pick("KATACHI_EMBEDDINGS_DIMENSIONS", env, secrets), 0)
    if kind in ("bedrock", "gemini"):  # the provider's own credentials (AWS chain and region, Gemini key)
        model = _pick("KATACHI_EMBEDDINGS_MODEL", env, secrets)
        return EmbeddingSettings(
            kind, model, dimensions=dims or None, credentials=load_credentials(env, secrets)
        )
    if kind != "openai":
        return EmbeddingSettings(kind)
    dims = _port(_pick("KATACHI_EMBEDDINGS_DIMENSIONS", env, secrets), 0)
    return EmbeddingSettings(
        kind,
        model=_pick("KATACHI_EMBEDDINGS_MODEL", env, secrets) or "text-embedding-3-small",
        base_url=_pick("KATACHI_EMBEDDINGS_BASE_URL", env, secrets),
        api_key=_pick("KATACHI_EMBEDDINGS_API_KEY", env, secrets) or openai_key,
        dimensions=dims if dims > 0 else None,
    )
