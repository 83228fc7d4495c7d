"""Normalize extraction output before it is stored (spec 03: Entity / Fact / OpenLoops extraction).

TYPE labels upper case, roles and relations lower case, confidences clamped to 0..1, predicates mapped
to a controlled vocabulary, the speaker ("SPEAKER", 私, ユーザー, ...) mapped to one entity.
"""

from __future__ import annotations

import re
from typing import Any

from core.store.memory.tables import clamp01

SPEAKER = "SPEAKER"
SPEAKER_TYPE = "PERSON"
_SPEAKER_NAMES = frozenset(
    {"speaker", "user", "ユーザー", "ユーザ", "私", "わたし", "僕", "ぼく", "俺", "おれ", "自分", "話者"}
)
PREDICATES = (
    "name_is",
    "is_addressed_as",
    "likes",
    "dislikes",
    "prefers",
    "uses",
    "owns",
    "affiliated_with",
    "located_in",
    "operates_on",
    "goal_is",
    "first_met_at",
    "related_to",
)
_PREDICATE_SYNONYMS = {
    "name": "name_is",
    "is_named": "name_is",
    "called": "is_addressed_as",
    "addressed_as": "is_addressed_as",
    "nickname": "is_addressed_as",
    "like": "likes",
    "loves": "likes",
    "love": "likes",
    "enjoys": "likes",
    "favorite": "likes",
    "好き": "likes",
    "dislike": "dislikes",
    "hates": "dislikes",
    "hate": "dislikes",
    "苦手": "dislikes",
    "嫌い": "dislikes",
    "prefer": "prefers",
    "use": "uses",
    "uses_tool": "uses",
    "own": "owns",
    "has": "owns",
    "works_at": "affiliated_with",
    "works_for": "affiliated_with",
    "employed_by": "affiliated_with",
    "member_of": "affiliated_with",
    "belongs_to": "affiliated_with",
    "lives_in": "located_in",
    "lives_at": "located_in",
    "located_at": "located_in",
    "goal": "goal_is",
    "wants": "goal_is",
    "aims_to": "goal_is",
    "met_at": "first_met_at",
    "works_on": "operates_on",
}
RELATIONS = ("friend", "family", "colleague", "romantic", "likes", "dislikes", "related", "other")


def is_speaker(name: str | None) -> bool:
    """Whether an extracted name refers to the user speaking (SPEAKER handling)."""
    return name is None or name.strip().lower() in _SPEAKER_NAMES or not name.strip()


def normalize_type(label: str | None) -> str:
    """TYPE labels upper case; empty becomes THING."""
    label = (label or "").strip().upper().replace(" ", "_")
    return label or "THING"


def normalize_predicate(predicate: str | None) -> str:
    """Map a predicate to the controlled vocabulary (unknown ones become related_to)."""
    key = re.sub(r"[\s\-]+", "_", (predicate or "").strip().lower())
    if key in PREDICATES:
        return key
    return _PREDICATE_SYNONYMS.get(key, "related_to")


def split_entity_ref(ref: str) -> tuple[str, str]:
    """`"person:太郎"` -> ("PERSON", "太郎"); a bare name is a THING."""
    if ":" in ref:
        type_label, name = ref.split(":", 1)
        return normalize_type(type_label), name.strip()
    return "THING", ref.strip()


def normalize_entities(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Clean entities and relations; speaker names become PERSON:SPEAKER."""
    entities: dict[tuple[str, str], dict[str, Any]] = {}
    for item in data.get("entities", []):
        type_label, name = normalize_type(item.get("type_label")), (item.get("name") or "").strip()
        if type_label == SPEAKER_TYPE and is_speaker(name):
            name = SPEAKER
        if not name:
            continue
        key = (type_label, name)
        entry = entities.setdefault(
            key, {"type_label": type_label, "name": name, "roles": [], "aliases": [], "confidence": 0.0}
        )
        for role in item.get("roles", []):
            role = role.strip().lower()
            if role and role not in entry["roles"]:
                entry["roles"].append(role)
        for alias in item.get("aliases", []):
            alias = alias.strip()
            if alias and alias != name and alias not in entry["aliases"]:
                entry["aliases"].append(alias)
        entry["confidence"] = max(entry["confidence"], clamp01(item.get("confidence")))
    relations = []
    for rel in data.get("relations", []):
        src, dst = split_entity_ref(rel.get("src") or ""), split_entity_ref(rel.get("dst") or "")
        src = (src[0], SPEAKER) if src[0] == SPEAKER_TYPE and is_speaker(src[1]) else src
        dst = (dst[0], SPEAKER) if dst[0] == SPEAKER_TYPE and is_speaker(dst[1]) else dst
        if not src[1] or not dst[1] or src == dst:
            continue
        relations.append(
            {
                "src": src,
                "relation": (rel.get("relation") or "related").strip().lower() or "related",
                "dst": dst,
                "confidence": clamp01(rel.get("confidence")),
                "evidence": (rel.get("evidence") or "").strip()[:200],
            }
        )
    return {"entities": list(entities.values()), "relations": relations}


def _entity_of(ref: Any) -> tuple[str, str] | None:
    if not isinstance(ref, dict):
        return None
    type_label, name = normalize_type(ref.get("type_label")), (ref.get("name") or "").strip()
    if type_label == SPEAKER_TYPE and is_speaker(name):
        return SPEAKER_TYPE, SPEAKER
    return (type_label, name) if name else None


def normalize_facts(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Clean facts: a missing or speaker subject is PERSON:SPEAKER; predicates mapped; validity ints."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for item in data.get("facts", []):
        subject = _entity_of(item.get("subject")) or (SPEAKER_TYPE, SPEAKER)
        obj = _entity_of(item.get("object"))
        object_text = (item.get("object_text") or (obj[1] if obj else "")).strip()
        if not object_text:
            continue
        predicate = normalize_predicate(item.get("predicate"))
        key = (subject, predicate, object_text)
        if key in seen:
            continue
        seen.add(key)
        validity = item.get("validity") or {}
        out.append(
            {
                "subject": subject,
                "predicate": predicate,
                "predicate_raw": (item.get("predicate") or "").strip(),
                "object_text": object_text,
                "object": obj,
                "confidence": clamp01(item.get("confidence")),
                "valid_from": _int_or_none(validity.get("from")),
                "valid_to": _int_or_none(validity.get("to")),
            }
        )
    return out


def normalize_loops(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Clean loops: text stripped and unique, due_at a positive int or None, confidence clamped."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for item in data.get("loops", []):
        text = (item.get("loop_text") or "").strip()
        if not text or text in seen:
            continue
        seen.add(text)
        due = _int_or_none(item.get("due_at"))
        out.append(
            {
                "loop_text": text,
                "due_at": due if due and due > 0 else None,
                "confidence": clamp01(item.get("confidence")),
            }
        )
    return out


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)
