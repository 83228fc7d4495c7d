"""Knowledge interview store: interviews and every turn's full JSON (spec 01 §4 step 4, §7.2).

SQLAlchemy Core on the shared `metadata`; times are UTC epoch seconds from the repository's clock.
Attachment text is never stored: a user turn keeps only the typed text and the attachments' names
and counts. Interviews are personal: the repository is bound to one person (`owner_id`) and
never reads or writes another person's interview; only `team_turn_phases` (admin analytics) reads across.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    func,
    select,
    update,
)

from core.people import MAX_ID_CHARS
from core.store.base import EpochSeconds, OwnedRepository, inserted_id
from core.store.db import metadata
from core.store.owners import owned_by, owner_column

TITLE_CHARS = 40  # an interview's title: the first line typed, cut to this length
ATTACHMENT_KEYS = ("name", "kind", "pages", "paragraphs", "chars")  # what is kept of an attachment

knowledge_interviews = Table(
    "knowledge_interviews",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("title", String, nullable=False, default=""),
    Column("created_at", EpochSeconds, nullable=False),
    Column("updated_at", EpochSeconds, nullable=False),
    Column("provider", String, nullable=False, default=""),
    Column("model", String, nullable=False, default=""),
    owner_column(),
    # an archived interview is hidden from the person's list; its turns stay (audit)
    Column("archived_at", EpochSeconds),  # NULL: active
    Column("archived_by", String(MAX_ID_CHARS)),  # the id of the person who archived it (the owner)
)

knowledge_turns = Table(
    "knowledge_turns",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column(
        "interview_id",
        String(32),
        ForeignKey("knowledge_interviews.id", ondelete="CASCADE"),
        nullable=False,
        index=True,
    ),
    Column("turn_no", Integer, nullable=False),  # 1-based count of user inputs in the interview
    Column("created_at", EpochSeconds, nullable=False),
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


class KnowledgeRepository(OwnedRepository):
    """One person's interviews and their turns (`KnowledgeRepository(engine, clock, owner_id=...)`)."""

    def owns(self, interview_id: str | None, conn: Connection | None = None) -> bool:
        """True when `interview_id` is an interview of this repository's person."""
        if not interview_id:
            return False
        query = select(knowledge_interviews.c.id).where(
            knowledge_interviews.c.id == interview_id, owned_by(knowledge_interviews, self.owner_id)
        )
        if conn is not None:
            return conn.execute(query).first() is not None
        with self.engine.connect() as own:
            return own.execute(query).first() is not None

    def create_interview(self, *, title: str = "", provider: str = "", model: str = "") -> str:
        """A new interview; returns its id (hex)."""
        interview_id = uuid.uuid4().hex
        ts = self.now()
        with self.engine.begin() as conn:
            conn.execute(
                knowledge_interviews.insert().values(
                    id=interview_id,
                    title=title[:TITLE_CHARS],
                    created_at=ts,
                    updated_at=ts,
                    provider=provider,
                    model=model,
                    owner_id=self.owner_id,
                )
            )
        return interview_id

    def record_turn(
        self,
        interview_id: str,
        *,
        turn_no: int,
        user_text: str,
        attachments: Sequence[Mapping[str, Any]] = (),
        turn: Mapping[str, Any] | None = None,
        raw: str = "",
        error_type: str | None = None,
        error: str | None = None,
        attempts: int = 1,
        provider: str = "",
        model: str = "",
    ) -> int:
        """Store one turn (spec 01 §4 step 4): the full turn JSON when it succeeded (`turn` given),
        otherwise the raw output and error type. Also renames the interview after its latest draft.

        Raises KeyError when the interview is not this person's (or does not exist)."""
        ts = self.now()
        safe_attachments = [{k: a.get(k) for k in ATTACHMENT_KEYS} for a in attachments]
        values = dict(
            interview_id=interview_id,
            turn_no=turn_no,
            created_at=ts,
            provider=provider,
            model=model,
            user_text=user_text,
            attachments_json=json.dumps(safe_attachments, ensure_ascii=False),
            ok=turn is not None,
            turn_json=json.dumps(turn, ensure_ascii=False) if turn is not None else None,
            phase=turn["state"]["phase"] if turn else None,
            mode=turn["control"]["mode"] if turn else None,
            raw=raw or "",
            error_type=None if turn is not None else error_type,
            error=None if turn is not None else error,
            attempts=max(1, attempts),
        )
        with self.engine.begin() as conn:
            if not self.owns(interview_id, conn):
                raise KeyError(interview_id)
            row_id = inserted_id(conn.execute(knowledge_turns.insert().values(**values)))
            changes: dict[str, Any] = {"updated_at": ts, "provider": provider, "model": model}
            current = conn.execute(
                select(knowledge_interviews.c.title).where(knowledge_interviews.c.id == interview_id)
            ).scalar_one_or_none()
            # The latest draft's title names the interview best; until then, the first line typed.
            entry = turn.get("knowledge_json") if turn else None
            if entry and entry.get("knowledge_title"):
                changes["title"] = entry["knowledge_title"]
            elif not current and user_text.strip():
                changes["title"] = user_text.strip().splitlines()[0][:TITLE_CHARS]
            conn.execute(
                update(knowledge_interviews)
                .where(knowledge_interviews.c.id == interview_id)
                .values(**changes)
            )
        return row_id

    def get_interview(self, interview_id: str) -> dict[str, Any] | None:
        """One of this person's interviews as stored (title, times, `archived_at` / `archived_by`); None when it
        does not exist or is another person's."""
        query = select(knowledge_interviews).where(
            knowledge_interviews.c.id == interview_id, owned_by(knowledge_interviews, self.owner_id)
        )
        with self.engine.connect() as conn:
            row = conn.execute(query).mappings().first()
        return dict(row) if row is not None else None

    def interview_turns(self, interview_id: str) -> list[dict[str, Any]]:
        """Every stored turn of an interview in order, with `turn` (parsed JSON) and `attachments` decoded;
        empty for an interview of another person."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(knowledge_turns)
                .join(knowledge_interviews, knowledge_interviews.c.id == knowledge_turns.c.interview_id)
                .where(
                    knowledge_turns.c.interview_id == interview_id,
                    owned_by(knowledge_interviews, self.owner_id),
                )
                .order_by(knowledge_turns.c.turn_no, knowledge_turns.c.id)
            ).mappings()
            out = []
            for row in rows:
                item = dict(row)
                item["turn"] = json.loads(row["turn_json"]) if row["turn_json"] else None
                item["attachments"] = json.loads(row["attachments_json"] or "[]")
                out.append(item)
        return out

    def set_archived(self, interview_id: str, archived: bool) -> bool:
        """Archive (`archived=True`) or restore one of this person's interviews; its turns stay. True when it
        changed; raises KeyError when the interview is not this person's."""
        c = knowledge_interviews.c
        values = (
            {"archived_at": self.now(), "archived_by": self.owner_id}
            if archived
            else {
                "archived_at": None,
                "archived_by": None,
            }
        )
        state = c.archived_at.is_(None) if archived else c.archived_at.is_not(None)
        with self.engine.begin() as conn:
            if not self.owns(interview_id, conn):
                raise KeyError(interview_id)
            changed = conn.execute(
                update(knowledge_interviews)
                .where(c.id == interview_id, owned_by(knowledge_interviews, self.owner_id), state)
                .values(**values)
            )
            return changed.rowcount == 1

    def list_interviews(self, limit: int = 50, *, archived: bool = False) -> list[dict[str, Any]]:
        """Active interviews (`archived=True`: the archived ones only), newest first (ties by creation, then
        id), with their number of turns and last phase."""
        last_phase = (
            select(knowledge_turns.c.phase)
            .where(
                knowledge_turns.c.interview_id == knowledge_interviews.c.id, knowledge_turns.c.ok.is_(True)
            )
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
            .where(
                owned_by(knowledge_interviews, self.owner_id),
                knowledge_interviews.c.archived_at.is_not(None)
                if archived
                else knowledge_interviews.c.archived_at.is_(None),
            )
            .order_by(
                knowledge_interviews.c.updated_at.desc(),
                knowledge_interviews.c.created_at.desc(),
                knowledge_interviews.c.id.desc(),
            )
            .limit(limit)
        )
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def turn_phases(self) -> list[dict[str, Any]]:
        """(interview_id, turn_no, ok, phase, mode) of every turn of this person's interviews, in order:
        input to the analytics."""
        return self._phases(owned_by(knowledge_interviews, self.owner_id))

    def team_turn_phases(self) -> list[dict[str, Any]]:
        """The same for every person's interviews, with their `owner_id` (admin analytics only: callers
        check the person is an admin; nothing here names an interview or quotes a turn)."""
        return self._phases(None)

    def _phases(self, condition: Any) -> list[dict[str, Any]]:
        cols = [knowledge_turns.c[n] for n in ("interview_id", "turn_no", "ok", "phase", "mode")]
        query = select(*cols, knowledge_interviews.c.owner_id).join(
            knowledge_interviews, knowledge_interviews.c.id == knowledge_turns.c.interview_id
        )
        if condition is not None:
            query = query.where(condition)
        with self.engine.connect() as conn:
            rows = conn.execute(
                query.order_by(knowledge_turns.c.interview_id, knowledge_turns.c.id)
            ).mappings()
            return [dict(r) for r in rows]
