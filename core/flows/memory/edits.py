"""Turn the browser's st.data_editor changes into versioned unit edits (each edit versioned).

The grid's `version` column is the version each row had when it was read: an edit of a unit that has
changed since is not applied (StaleEdit, with both states), the other rows are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from core.flows.memory.constants import AFFECT_LABELS
from core.flows.memory.normalize import PREDICATES
from core.flows.memory.versions import StaleEdit, StaleUnit, edit_unit
from core.store.memory.repository import MemoryRepository
from core.store.memory.tables import KIND_EPISODE, KIND_FACT, KIND_LOOP, KIND_SUMMARY, clamp01

if TYPE_CHECKING:  # chromadb takes over a second to import; collections arrive opened
    import pandas as pd
    from chromadb.api.models.Collection import Collection

COMMON_EDITABLE = ("state", "confidence", "salience", "sensitivity", "pin", "topic_tags")
EDITABLE_COLUMNS = {
    KIND_EPISODE: (
        *COMMON_EDITABLE,
        "input_text",
        "reply_text",
        "persona_affect_label",
        "persona_affect_intensity",
    ),
    KIND_FACT: (*COMMON_EDITABLE, "predicate", "object_text"),
    KIND_LOOP: (*COMMON_EDITABLE, "loop_text"),
    KIND_SUMMARY: (*COMMON_EDITABLE, "summary_text"),
}
EDIT_NOTE = "記憶ブラウザで編集"


class InvalidEdit(ValueError):
    """A value an analyst typed that the store cannot take (message in Japanese)."""


def _clean(column: str, value: Any) -> Any:
    if column == "topic_tags":
        return [t.strip() for t in str(value or "").replace(",", "、").split("、") if t.strip()]
    if column == "pin":
        return int(bool(value))
    if column == "sensitivity":
        if int(value) not in (0, 1, 2):
            raise InvalidEdit("機微度は 0・1・2 のいずれかです。")
        return int(value)
    if column in ("confidence", "salience", "persona_affect_intensity"):
        return clamp01(float(value))
    if column == "state" and value not in ("active", "deleted"):
        raise InvalidEdit("状態は active か deleted です。")
    if column == "persona_affect_label" and value not in AFFECT_LABELS:
        raise InvalidEdit(f"感情ラベルは {', '.join(AFFECT_LABELS)} のいずれかです。")
    if column == "predicate" and value not in PREDICATES:
        raise InvalidEdit(f"述語は制御語彙（{', '.join(PREDICATES)}）から選んでください。")
    if isinstance(value, str) and not value.strip() and column.endswith("_text"):
        raise InvalidEdit("本文を空にはできません（削除は削除ボタンで行ってください）。")
    return value


def changed_rows(kind: str, before: pd.DataFrame, after: pd.DataFrame) -> dict[int, dict[str, Any]]:
    """unit id -> {column: new value} for every editable cell that changed."""
    changes: dict[int, dict[str, Any]] = {}
    old = before.set_index("id")
    for _, row in after.iterrows():
        unit_id = int(row["id"])
        if unit_id not in old.index:
            continue
        for column in EDITABLE_COLUMNS[kind]:
            if column in row and str(row[column]) != str(old.at[unit_id, column]):
                changes.setdefault(unit_id, {})[column] = _clean(column, row[column])
    return changes


def seen_versions(frame: pd.DataFrame) -> dict[int, int]:
    """unit id -> the version it had when the grid was read (the frame's `version` column)."""
    if "version" not in frame:
        return {}
    return {int(i): int(v) for i, v in zip(frame["id"], frame["version"], strict=True)}


def apply_edits(
    repo: MemoryRepository,
    collection: Collection | None,
    kind: str,
    before: pd.DataFrame,
    after: pd.DataFrame,
    now: int | None = None,
) -> dict[int, int]:
    """Apply every changed row as one versioned edit; returns unit id -> new version.

    `before` is the grid as it was read: a row whose unit changed since is not applied; when any is,
    StaleEdit is raised after the others were saved (its `saved` lists them).
    """
    changes = changed_rows(kind, before, after)
    seen = seen_versions(before)
    saved: dict[int, int] = {}
    stale: list[StaleUnit] = []
    for uid, values in changes.items():
        try:
            saved[uid] = edit_unit(
                repo, collection, uid, values, now, EDIT_NOTE, expected_version=seen.get(uid)
            )
        except StaleEdit as exc:
            stale.extend(exc.stale)
    if stale:
        raise StaleEdit(stale, saved)
    return saved


def overwrite_stale(
    repo: MemoryRepository, collection: Collection | None, stale: StaleUnit, now: int | None = None
) -> int:
    """Save the person's edit over the newer state they have now seen (still refused if it moved again)."""
    return edit_unit(
        repo, collection, stale.unit_id, stale.mine, now, EDIT_NOTE, expected_version=stale.current_version
    )


def stale_comparison(stale: StaleUnit, labels: Mapping[str, str]) -> pd.DataFrame:
    """Both versions of the changed fields, side by side: 項目 / あなたの編集 / 現在の内容."""
    import pandas as pd  # noqa: PLC0415 - pandas takes ~0.5 s to import; only the memory browser needs it

    rows = [
        {
            "項目": labels.get(name, name),
            "あなたの編集": str(value),
            "現在の内容": str(stale.current.get(name)),
        }
        for name, value in stale.mine.items()
    ]
    return pd.DataFrame(rows, columns=["項目", "あなたの編集", "現在の内容"])
