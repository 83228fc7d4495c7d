"""The urgency rules (spec 04 §6) and where they match: `urgency_rules.json` beside this module holds the levels
(can_drive, visit_urgency), a vocabulary of spellings (ブレーキ / ぶれーき, 漏れ / もれ / 垂れ / シミ, ...), each rule's
name, level, reason and patterns, and the patterns that read a text's frames (core.flows.diagnosis.urgency_frames).
Patterns run on core.text.textnorm.fold of the text with whitespace removed (normalize_symptom), so full-width,
half-width and radical spellings meet. A match directly followed by a negation (「煙は出ていません」「警告灯は点いて
いない」) or in a hypothetical (「もし…」「…場合はどうすれば」) does not count, nor does a rule whose `unless` pattern
describes a normal behaviour in the same text (every warning light lit for a moment at start-up).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.text.textnorm import fold

RULES_FILE = Path(__file__).with_name("urgency_rules.json")
LEVELS = ("critical", "high", "medium")
# The kinds of car a rule can be for alone ("vehicle" in the rule file): an electric car's flood is critical even when
# the owner does not say the car is electric, which the catalog knows (core.flows.diagnosis.catalog.Vehicle.electric).
VEHICLE_KINDS = ("electric",)


@dataclass(frozen=True)
class UrgencyRule:
    """One named pattern; `reason` is the Japanese text shown to staff when it matches."""

    name: str
    pattern: re.Pattern[str]
    reason: str
    # a text this matches describes a normal behaviour (「警告灯が全部点いてすぐ消える」): the rule does not count
    unless: re.Pattern[str] | None = None


def _words(words: list[str]) -> str:
    """A word list of the vocabulary as one group of alternatives."""
    return "(?:" + "|".join(words) + ")"


def _expand(pattern: str, vocabulary: dict[str, list[str]]) -> str:
    return re.sub(r"\{([A-Z_]+)\}", lambda m: _words(vocabulary[m.group(1)]), pattern)


def _with_guards(pattern: str, guards: dict[str, str], vocabulary: dict[str, list[str]] | None = None) -> str:
    """`pattern` with each {NAME} written out: a guard of `guards`, or else a word list of `vocabulary` (a frame names
    leaks or 「また」 as the rules do, 「{LEAK}」「{AGAIN}」, rather than restating their spellings)."""

    def written_out(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in guards or vocabulary is None or name not in vocabulary:
            return guards[name]
        return _words(vocabulary[name])

    return re.sub(r"\{([A-Z_]+)\}", written_out, pattern)


def harmless_frames_pattern(frames: dict[str, Any], vocabulary: dict[str, list[str]] | None = None) -> str:
    """One alternation of the named harmless frames, each guard ({NO_DANGER_AFTER}: no danger told after the frame in
    its sentence; {NOT_ABOUT_THE_CAR}: a frame's words the settled reach shares) and each vocabulary name ({LEAK})
    written out. The frames are tried in the file's order."""
    return "|".join(
        _with_guards(frame["pattern"], frames["guards"], vocabulary) for frame in frames["frames"]
    )


def load_rules(path: Path = RULES_FILE) -> dict[str, Any]:
    """The rule file with every pattern expanded and compiled, rules grouped by level."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    vocabulary = {name: [fold(w) for w in words] for name, words in data["vocabulary"].items()}
    if shared := sorted(vocabulary.keys() & data["harmless_frames"]["guards"].keys()):
        raise ValueError(f"a guard and a vocabulary word list share a name: {shared}")
    by_level: dict[str, list[UrgencyRule]] = {level: [] for level in LEVELS}
    by_vehicle: dict[str, dict[str, list[UrgencyRule]]] = {}
    for rule in data["rules"]:
        pattern = "|".join(f"(?:{_expand(p, vocabulary)})" for p in rule["patterns"])
        unless = "|".join(f"(?:{_expand(p, vocabulary)})" for p in rule.get("unless", []))
        compiled = UrgencyRule(
            rule["name"], re.compile(pattern), rule["reason"], re.compile(unless) if unless else None
        )
        if "vehicle" in rule:  # counts only for a car of that kind (VEHICLE_KINDS), known from the catalog
            if rule["vehicle"] not in VEHICLE_KINDS:
                raise ValueError(f"rule {rule['name']}: no kind of car {rule['vehicle']!r} ({VEHICLE_KINDS})")
            by_vehicle.setdefault(rule["vehicle"], {level: [] for level in LEVELS})[rule["level"]].append(
                compiled
            )
        else:
            by_level[rule["level"]].append(compiled)
    data["by_level"] = {level: tuple(rules) for level, rules in by_level.items()}
    data["by_vehicle"] = {
        kind: {level: tuple(rules) for level, rules in levels.items()} for kind, levels in by_vehicle.items()
    }
    data["negation_re"] = re.compile(data["negation"])
    data["before_re"] = re.compile(data["hypothetical"]["before"])
    data["after_re"] = re.compile(data["hypothetical"]["after"])
    data["clause_end_re"] = re.compile(data["hypothetical"]["clause_end"])
    data["story_step_re"] = re.compile(data["frame_reach"]["story_step"])
    data["settled_re"] = re.compile(
        _with_guards(data["frame_reach"]["settled"], data["harmless_frames"]["guards"], vocabulary)
    )
    data["turn_re"] = re.compile(data["frame_reach"]["turn"])
    data["car_turn_re"] = re.compile(data["frame_reach"]["car_turn"])
    data["now_my_car_re"] = re.compile(data["frame_reach"]["now_my_car"])
    data["frames_re"] = re.compile(harmless_frames_pattern(data["harmless_frames"], vocabulary))
    data["function_ok_re"] = re.compile(_expand(data["function_ok"], vocabulary))
    return data


RULES = load_rules()
CRITICAL_RULES: tuple[UrgencyRule, ...] = RULES["by_level"]["critical"]
HIGH_RULES: tuple[UrgencyRule, ...] = RULES["by_level"]["high"]
MEDIUM_RULES: tuple[UrgencyRule, ...] = RULES["by_level"]["medium"]
# level, rules, can_drive, visit_urgency (spec 04 §6 table, from the rule file)
LEVEL_RULES: tuple[tuple[str, tuple[UrgencyRule, ...], bool, str], ...] = tuple(
    (
        level,
        RULES["by_level"][level],
        bool(RULES["levels"][level]["can_drive"]),
        str(RULES["levels"][level]["visit_urgency"]),
    )
    for level in LEVELS
)
VEHICLE_RULES: dict[str, dict[str, tuple[UrgencyRule, ...]]] = RULES["by_vehicle"]
# level -> (can_drive, visit_urgency), low included: what a judgement of that level tells the owner
LEVEL_ACTIONS: dict[str, tuple[bool, str]] = {
    level: (can_drive, visit) for level, _, can_drive, visit in LEVEL_RULES
} | {"low": (True, "when_convenient")}
# A hypothetical's もし reaches to the end of its clause: 「もし…と思ってたけど、今本当にブレーキが効かない」 is no hypothetical.
CLAUSE_END: re.Pattern[str] = RULES["clause_end_re"]


def normalize_symptom(text: str) -> str:
    """The text the rules see: core.text.textnorm.fold (NFKC, lower case, radicals repaired), whitespace removed."""
    return "".join(fold(text).split())


def _counts(text: str, match: re.Match[str]) -> bool:
    """Not a denial (「…はありません」) and not a hypothetical (「もし…」「…場合は」)."""
    if RULES["negation_re"].match(text[match.end() :]) or RULES["after_re"].match(text[match.end() :]):
        return False
    clause = CLAUSE_END.split(text[: match.start()])[-1]
    return not RULES["before_re"].search(clause)


def counting_matches(rule: UrgencyRule, text: str) -> list[re.Match[str]]:
    """The rule's matches that count (none when its `unless` names a normal behaviour)."""
    if rule.unless is not None and rule.unless.search(text):
        return []
    return [match for match in rule.pattern.finditer(text) if _counts(text, match)]


def match_starts(rule: UrgencyRule, text: str) -> list[int]:
    """Where the rule's counting matches begin."""
    return [match.start() for match in counting_matches(rule, text)]


def matches(rule: UrgencyRule, text: str) -> bool:
    return bool(match_starts(rule, text))


def danger_starts(normalized: str) -> list[int]:
    """Where the critical and high rules' counting matches begin, whatever frame they are told in."""
    return [at for rule in (*CRITICAL_RULES, *HIGH_RULES) for at in match_starts(rule, normalized)]


def names_a_danger(text: str) -> bool:
    """A critical or high rule counts in the text, whatever frame it is told in (「友達の車のブレーキが効かなくなった話」
    names one; 「煙は出ていません」 and 「もしブレーキが効かなくなったら」 do not)."""
    return bool(danger_starts(normalize_symptom(text)))


def says_it_works(text: str) -> bool:
    """The owner says the car works (`function_ok`: 「ブレーキはちゃんと効いてる」) or denies a critical symptom
    (「煙は出ていない」: a critical rule's match followed by a negation), and no critical rule counts: the text
    names a danger to say it is not there."""
    normalized = normalize_symptom(text)
    if any(matches(rule, normalized) for rule in CRITICAL_RULES):
        return False
    if RULES["function_ok_re"].search(normalized):
        return True
    return any(
        RULES["negation_re"].match(normalized[m.end() :])
        for rule in CRITICAL_RULES
        for m in rule.pattern.finditer(normalized)
    )
