"""Knowledge interview store: interviews, every turn's full JSON, and a versioned knowledge base (spec 01 §4, §7.2).

SQLAlchemy Core on the shared `metadata`. Attachment text is never stored: a user turn keeps
only the typed text and the attachments' names and counts.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Engine,
    Float,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
    or_,
    select,
    update,
)

from core.flows.knowledge import KNOWLEDGE_FIELDS
from core.store.db import metadata

DEFAULT_EDITOR = "担当者"

knowledge_interviews = Table(
    "knowledge_interviews",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("title", String, nullable=False, default=""),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("provider", String, nullable=False, default=""),
    Column("model", String, nullable=False, default=""),
)

knowledge_turns = Table(
    "knowledge_turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("interview_id", String(32), ForeignKey("knowledge_interviews.id", ondelete="CASCADE"), nullable=False,
           index=True),
    Column("turn_no", Integer, nullable=False),  # 1-based count of user inputs in the interview
    Column("created_at", Float, nullable=False),
    Column("provider", String, nullable=False, default=""),
    Column("model", String, nullable=False, default=""),
    Column("user_text", Text, nullable=False, default=""),
    Column("attachments_json", Text, nullable=False, default="[]"),  # names and counts only
    Column("ok", Boolean, nullable=False),
    Column("turn_json", Text),  # control, state, assistant_message, knowledge_json (ok turns)
    Column("phase", String),
    Column("mode", String),
    Column("raw", Text, nullable=False, default=""),
    Column("error_type", String),
    Column("error", Text),
    Column("attempts", Integer, nullable=False, default=1),
)

knowledge_entries = Table(
    "knowledge_entries",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    *(Column(name, Text, nullable=False, default="") for name in KNOWLEDGE_FIELDS),
    Column("version", Integer, nullable=False, default=1),
    Column("source_interview_id", String(32)),
    Column("created_at", Float, nullable=False),
    Column("created_by", String, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("updated_by", String, nullable=False),
)

knowledge_entry_versions = Table(
    "knowledge_entry_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("entry_id", Integer, ForeignKey("knowledge_entries.id", ondelete="CASCADE"), nullable=False, index=True),
    Column("version", Integer, nullable=False),
    *(Column(name, Text, nullable=False, default="") for name in KNOWLEDGE_FIELDS),
    Column("edited_at", Float, nullable=False),
    Column("edited_by", String, nullable=False),
    Column("note", String, nullable=False, default=""),
)


def _now(now: float | None) -> float:
    return time.time() if now is None else now


def _fields(entry: Mapping[str, Any]) -> dict[str, str]:
    return {name: str(entry.get(name, "") or "") for name in KNOWLEDGE_FIELDS}


def create_interview(
    engine: Engine, *, title: str = "", provider: str = "", model: str = "", now: float | None = None
) -> str:
    """A new interview; returns its id (hex)."""
    interview_id = uuid.uuid4().hex
    ts = _now(now)
    with engine.begin() as conn:
        conn.execute(
            knowledge_interviews.insert().values(
                id=interview_id, title=title, created_at=ts, updated_at=ts, provider=provider, model=model
            )
        )
    return interview_id


def record_turn(
    engine: Engine,
    interview_id: str,
    *,
    turn_no: int,
    user_text: str,
    attachments: Sequence[Mapping[str, Any]] = (),
    result: Mapping[str, Any],
    provider: str = "",
    model: str = "",
    now: float | None = None,
) -> int:
    """Store one turn: the full turn JSON on success, the raw output and error type on failure (spec 01 §4 step 4)."""
    ts = _now(now)
    ok = bool(result.get("ok"))
    turn = None
    if ok:
        knowledge = result.get("knowledge") or []
        turn = {
            "control": result["control"],
            "state": result["state"],
            "assistant_message": result["assistant_message"],
            "knowledge_json": dict(knowledge[0]) if knowledge else None,
        }
    safe_attachments = [{k: a.get(k) for k in ("name", "kind", "pages", "paragraphs", "chars")} for a in attachments]
    values = dict(
        interview_id=interview_id,
        turn_no=turn_no,
        created_at=ts,
        provider=provider,
        model=model,
        user_text=user_text,
        attachments_json=json.dumps(safe_attachments, ensure_ascii=False),
        ok=ok,
        turn_json=json.dumps(turn, ensure_ascii=False) if turn else None,
        phase=turn["state"]["phase"] if turn else None,
        mode=turn["control"]["mode"] if turn else None,
        raw=str(result.get("raw") or ""),
        error_type=None if ok else result.get("error_type"),
        error=None if ok else result.get("error"),
        attempts=len(result.get("attempts") or []) or 1,
    )
    with engine.begin() as conn:
        row_id = conn.execute(knowledge_turns.insert().values(**values)).inserted_primary_key[0]
        title_update: dict[str, Any] = {"updated_at": ts, "provider": provider, "model": model}
        current = conn.execute(
            select(knowledge_interviews.c.title).where(knowledge_interviews.c.id == interview_id)
        ).scalar_one_or_none()
        if not current and turn and turn["knowledge_json"] and turn["knowledge_json"]["knowledge_title"]:
            title_update["title"] = turn["knowledge_json"]["knowledge_title"]
        elif not current and user_text:
            title_update["title"] = user_text.strip().splitlines()[0][:40]
        conn.execute(update(knowledge_interviews).where(knowledge_interviews.c.id == interview_id).values(**title_update))
    return int(row_id)


def interview_turns(engine: Engine, interview_id: str) -> list[dict[str, Any]]:
    """Every stored turn of an interview in order, with `turn` (parsed JSON) and `attachments` decoded."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(knowledge_turns)
            .where(knowledge_turns.c.interview_id == interview_id)
            .order_by(knowledge_turns.c.turn_no, knowledge_turns.c.id)
        ).mappings()
        out = []
        for row in rows:
            item = dict(row)
            item["turn"] = json.loads(row["turn_json"]) if row["turn_json"] else None
            item["attachments"] = json.loads(row["attachments_json"] or "[]")
            out.append(item)
    return out


def list_interviews(engine: Engine, limit: int = 50) -> list[dict[str, Any]]:
    """Interviews, newest first, with their number of stored turns and last phase."""
    last_phase = (
        select(knowledge_turns.c.phase)
        .where(knowledge_turns.c.interview_id == knowledge_interviews.c.id, knowledge_turns.c.ok.is_(True))
        .order_by(knowledge_turns.c.id.desc())
        .limit(1)
        .scalar_subquery()
    )
    turns = (
        select(func.count(knowledge_turns.c.id))
        .where(knowledge_turns.c.interview_id == knowledge_interviews.c.id)
        .scalar_subquery()
    )
    query = (
        select(knowledge_interviews, turns.label("turns"), last_phase.label("last_phase"))
        .order_by(knowledge_interviews.c.updated_at.desc())
        .limit(limit)
    )
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def save_entry(
    engine: Engine,
    entry: Mapping[str, Any],
    *,
    by: str = DEFAULT_EDITOR,
    source_interview_id: str | None = None,
    now: float | None = None,
) -> int:
    """Save a new knowledge base entry (version 1); returns its id."""
    ts, fields = _now(now), _fields(entry)
    with engine.begin() as conn:
        entry_id = conn.execute(
            knowledge_entries.insert().values(
                **fields, version=1, source_interview_id=source_interview_id,
                created_at=ts, created_by=by, updated_at=ts, updated_by=by,
            )
        ).inserted_primary_key[0]
        conn.execute(
            knowledge_entry_versions.insert().values(
                entry_id=entry_id, version=1, **fields, edited_at=ts, edited_by=by, note="作成"
            )
        )
    return int(entry_id)


def update_entry(
    engine: Engine, entry_id: int, entry: Mapping[str, Any], *, by: str = DEFAULT_EDITOR, note: str = "",
    now: float | None = None,
) -> int:
    """Edit an entry: a new version row is kept; returns the new version (unchanged if nothing changed)."""
    ts, fields = _now(now), _fields(entry)
    with engine.begin() as conn:
        row = conn.execute(select(knowledge_entries).where(knowledge_entries.c.id == entry_id)).mappings().first()
        if row is None:
            raise KeyError(entry_id)
        if all(row[name] == fields[name] for name in KNOWLEDGE_FIELDS):
            return int(row["version"])
        version = int(row["version"]) + 1
        conn.execute(
            update(knowledge_entries)
            .where(knowledge_entries.c.id == entry_id)
            .values(**fields, version=version, updated_at=ts, updated_by=by)
        )
        conn.execute(
            knowledge_entry_versions.insert().values(
                entry_id=entry_id, version=version, **fields, edited_at=ts, edited_by=by, note=note
            )
        )
    return version


def get_entry(engine: Engine, entry_id: int) -> dict[str, Any] | None:
    with engine.connect() as conn:
        row = conn.execute(select(knowledge_entries).where(knowledge_entries.c.id == entry_id)).mappings().first()
    return dict(row) if row else None


def entry_versions(engine: Engine, entry_id: int) -> list[dict[str, Any]]:
    """Every version of an entry, oldest first."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(knowledge_entry_versions)
            .where(knowledge_entry_versions.c.entry_id == entry_id)
            .order_by(knowledge_entry_versions.c.version)
        ).mappings()
        return [dict(r) for r in rows]


def list_entries(
    engine: Engine, *, search: str = "", contract_types: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """Saved entries, newest edit first; `search` matches any field, `contract_types` filters exactly."""
    query = select(knowledge_entries).order_by(knowledge_entries.c.updated_at.desc(), knowledge_entries.c.id.desc())
    if search.strip():
        pattern = f"%{search.strip()}%"
        query = query.where(or_(*(knowledge_entries.c[name].like(pattern) for name in KNOWLEDGE_FIELDS)))
    if contract_types:
        query = query.where(knowledge_entries.c.contract_type.in_(list(contract_types)))
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def contract_types(engine: Engine) -> list[str]:
    """Distinct contract types in the knowledge base (for the filter)."""
    with engine.connect() as conn:
        rows = conn.execute(select(knowledge_entries.c.contract_type).distinct().order_by(knowledge_entries.c.contract_type))
        return [r[0] for r in rows if r[0]]


def turn_phases(engine: Engine) -> list[dict[str, Any]]:
    """(interview_id, turn_no, ok, phase, mode) of every stored turn, in order: input to the analytics."""
    cols = [knowledge_turns.c[n] for n in ("interview_id", "turn_no", "ok", "phase", "mode")]
    with engine.connect() as conn:
        rows = conn.execute(select(*cols).order_by(knowledge_turns.c.interview_id, knowledge_turns.c.id)).mappings()
        return [dict(r) for r in rows]
