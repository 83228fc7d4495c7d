"""Finding what people mean, three ways, each on the tune half and the held-out half of tests/data/meaning:
before (n-gram hash, dense only, rules only), e5 (the sentence model alone, hybrid search, urgency by meaning:
the previous default) and bundled (the default now: the sentence model beside chiVe word vectors).

The four sets were written before any tuning by someone who had not seen the rules; thresholds and choices
were tuned on the tune half only. Judge by the held-out column. Urgency is the exception: every urgency set but
the newest (URGENCY_SETS) is among the judgement's examples now, so their rows measure nothing but regressions
(`--loso` prints each judged with the others as examples: how the thresholds were chosen; `--loso-only` prints
only that, reading no held-out set); the newest, written by someone who had seen neither the rules, the examples
nor the other sets, is its held-out figure. The second
and third memory sets (memory_pairs_v2.json, _v3.json) were held out whole until their runs and tuned on since;
the fourth (_v4.json, written blind) is held out whole. `--urgency` prints the urgency rows
alone, `--memory` the memory rows.

Run: .venv/bin/python tests/bench/meaning.py [--loso | --loso-only | --urgency | --memory] [--sizes 1000 10000]
"""

from __future__ import annotations

import json
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from memory_retrieval import NOW, bulk_store, pct  # noqa: E402

from core.flows.diagnosis.rag import RAGService  # noqa: E402
from core.flows.diagnosis.urgency_fast_path import fast_urgency_check  # noqa: E402
from core.flows.diagnosis.urgency_meaning import (  # noqa: E402
    EXEMPLARS_FILE,
    SHIPPED_VECTORS,
    UrgencyJudge,
)
from core.flows.knowledge.index import INDEXED_FIELDS, KnowledgeIndex, knowledge_collection  # noqa: E402
from core.flows.memory.retrieval import retrieve  # noqa: E402
from core.people import LOCAL_PERSON  # noqa: E402
from core.search.embedders import (  # noqa: E402
    BundledE5Embedder,
    BundledEmbedder,
    Embedder,
    NgramEmbedder,
    sentence_model,
)
from core.search.vectors import open_chroma  # noqa: E402
from core.store import open_store  # noqa: E402
from core.store.knowledge.entries import KnowledgeBaseRepository  # noqa: E402
from core.text.japanese import lexical_keys  # noqa: E402

DATA = ROOT / "tests" / "data" / "meaning"
SPLITS = ("tune", "heldout")


VARIANTS = ("before", "e5", "bundled")


def load(name: str) -> dict:  # type: ignore[type-arg]
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def embedder_of(variant: str) -> Embedder:
    return {"before": NgramEmbedder, "e5": BundledE5Embedder, "bundled": BundledEmbedder}[variant]()


def manual_rag(variant: str) -> dict[str, tuple[float, float]]:
    """top-5 hit rate on related queries, and the share of unrelated queries that get no source, per split."""
    after = variant != "before"
    embedder = embedder_of(variant)
    rag = RAGService(open_chroma(Path(tempfile.mkdtemp())), embedder=embedder, lexical_lane=after)
    rag.index_manuals()
    out = {}
    for split in SPLITS:
        items = [x for x in load("manual_queries.json")["items"] if x["split"] == split]
        related = [x for x in items if x["sections"]]
        hits = sum(
            any(s["section"] in x["sections"] for s in rag.search(x["query"], x["vehicle_id"]))
            for x in related
        )
        unrelated = [x for x in items if not x["sections"]]
        dropped = sum(not rag.search(x["query"], x["vehicle_id"]) for x in unrelated)
        out[split] = (hits / len(related), dropped / len(unrelated))
    return out


def memory(variant: str, size: int, name: str = "memory_pairs.json") -> tuple[dict[str, float], list[float]]:
    """recall@5 (the episode among the injected memories) per split among `size` episodes; query latencies.
    `name`: the set (the later sets are whole sets, split "heldout": their tune figure is absent)."""
    items = load(name)["items"]
    episodes = [
        {"key": x["id"], "days_ago": x["days_ago"], "input": x["statement"], "reply": x["reply"]}
        for x in items
    ]
    after = variant != "before"
    embedder = embedder_of(variant)
    repo, collection, key_ids, _ = bulk_store(size, episodes=episodes, embedder=embedder)
    out, times = {}, []
    for split in SPLITS:
        part = [x for x in items if x["split"] == split]
        if not part:
            continue
        hits = 0
        for x in part:
            start = time.perf_counter()
            result = retrieve(repo, collection, [], x["question"], NOW, lexical=after)
            times.append((time.perf_counter() - start) * 1000)
            hits += key_ids[x["id"]] in [c.unit_id for c in result.selected[:5]]
        out[split] = hits / len(part)
    return out, times


def knowledge(variant: str) -> dict[str, tuple[float, float]]:
    """recall@5 of 類似ナレッジ (within the distance limit) and the share of small talk that shows no entry."""
    import core.flows.knowledge.index as ki  # noqa: PLC0415 - the "before" swaps the indexed fields

    data = load("knowledge_cases.json")
    tmp = Path(tempfile.mkdtemp())
    base = KnowledgeBaseRepository(open_store(tmp), lambda: NOW)
    after = variant != "before"
    embedder = embedder_of(variant)
    ki.INDEXED_FIELDS = INDEXED_FIELDS if after else tuple(BEFORE_FIELDS)
    limit = ki.SIMILAR_MAX_DISTANCE if after else 0.8
    embedder = sentence_model(
        embedder
    )  # what knowledge_index does: the knowledge base embeds with the sentence model
    index = KnowledgeIndex(base, knowledge_collection(open_chroma(tmp), embedder), embedder)
    ids = {}
    for entry in data["entries"]:
        saved = base.save_entry({k: entry[k] for k in BEFORE_FIELDS}, by=LOCAL_PERSON)
        ids[saved] = entry["key"]
        index.index(saved)
    out = {}
    for split in SPLITS:
        items = [q for q in data["queries"] if q["split"] == split]
        found = {
            q["id"]: [
                ids[s.entry["id"]] for s in ki._closest(base, index.collection, q["query"], limit, {})[:5]
            ]
            for q in items
        }
        related = [q for q in items if q["expected"]]
        small = [q for q in items if not q["expected"]]
        out[split] = (
            sum(bool(set(found[q["id"]]) & set(q["expected"])) for q in related) / len(related),
            sum(not found[q["id"]] for q in small) / len(small),
        )
    ki.INDEXED_FIELDS = INDEXED_FIELDS
    return out


BEFORE_FIELDS = (
    "contract_type",
    "knowledge_title",
    "target_clause",
    "review_points",
    "action_plan",
    "clause_sample",
)


# The urgency sets in the order written: every one but the newest is among the judgement's examples; the newest is
# the held-out set of the round (a new round appends its set here and to the examples, nothing else).
URGENCY_SETS = ("urgency_phrasings.json", *(f"urgency_phrasings_v{i}.json" for i in range(2, 85)))
EXAMPLE_SETS, HELD_OUT_SET = URGENCY_SETS[:-1], URGENCY_SETS[-1]


def set_name(file: str) -> str:
    """「v7」 for urgency_phrasings_v7.json (「v1」 for the first set)."""
    stem = file.removesuffix(".json").rpartition("_")[2]
    return stem if stem.startswith("v") else "v1"


def judged_levels(judge: UrgencyJudge | None, items: list[dict]) -> dict[str, str]:  # type: ignore[type-arg]
    """The fast path's level of each phrasing (fast_urgency_check): the rules alone without a judge."""
    return {x["id"]: fast_urgency_check(x["text"], judge).level for x in items}


def scored(items: list[dict], levels: dict[str, str]) -> tuple[float, int, int]:  # type: ignore[type-arg]
    """(critical judged critical as a share, not urgent judged high or critical, not urgent in all)."""
    critical = [x for x in items if x["level"] == "critical"]
    low = [x for x in items if x["level"] == "low"]
    return (
        sum(levels[x["id"]] == "critical" for x in critical) / len(critical),
        sum(levels[x["id"]] in ("high", "critical") for x in low),
        len(low),
    )


def urgency(variant: str) -> dict[str, tuple[float, int, int]]:
    """Per half of the first set, per later set (the examples, then the held-out set), keyed 「v2」…"""
    judge = UrgencyJudge(embedder_of(variant)) if variant != "before" else None
    sets = {split: [x for x in load(URGENCY_SETS[0])["items"] if x["split"] == split] for split in SPLITS}
    for file in URGENCY_SETS[1:]:
        sets[set_name(file)] = load(file)["items"]
    return {name: scored(items, judged_levels(judge, items)) for name, items in sets.items()}


def leave_one_set_out(variant: str) -> dict[str, tuple[float, int, int]]:
    """Each example set judged with the others among the examples (and the examples that are none of the sets):
    how the judgement's thresholds were chosen. The held-out set is not read."""
    exemplars = json.loads(EXEMPLARS_FILE.read_text(encoding="utf-8"))
    sets = {name: load(name)["items"] for name in EXAMPLE_SETS}
    in_sets = {x["text"] for items in sets.values() for x in items}
    folder = Path(tempfile.mkdtemp())
    # each fold loads the shipped example vectors instead of ~2,500 model runs
    for shipped in EXEMPLARS_FILE.parent.glob(SHIPPED_VECTORS.format(key="*")):
        shutil.copy(shipped, folder / shipped.name)
    out = {}
    for held, items in sets.items():
        levels: dict[str, list[str]] = {
            lvl: [t for t in ts if t not in in_sets] for lvl, ts in exemplars["levels"].items()
        }
        for name, others in sets.items():
            if name != held:
                for x in others:
                    if x["text"] not in levels[x["level"]]:
                        levels[x["level"]].append(x["text"])
        path = folder / "exemplars.json"
        path.write_text(
            json.dumps({"description": "", "levels": levels}, ensure_ascii=False), encoding="utf-8"
        )
        out[held] = scored(items, judged_levels(UrgencyJudge(embedder_of(variant), path), items))
    return out


def resident_mb() -> float:
    """This process's resident memory now (not its peak), in MB."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


def model_cost() -> tuple[float, float, float]:
    """Resident MB the bundled embedder adds once loaded and used (e5-small and the word vectors; the Sudachi
    dictionary that splits the words is loaded first, as lexical search loads it in the app anyway: its mapped
    pages are reported apart), documents per second, ms per query embedding."""
    texts = [x["statement"] for x in load("memory_pairs.json")["items"]] * 4
    start_mb = resident_mb()
    for text in texts:
        lexical_keys(text)
    before = resident_mb()
    print(f"Sudachi's dictionary (lexical search loads it anyway): +{before - start_mb:.0f} MB resident")
    model = BundledEmbedder()
    start = time.perf_counter()
    model.embed_documents(texts)
    per_s = len(texts) / (time.perf_counter() - start)
    queries = [x["question"] for x in load("memory_pairs.json")["items"]]
    start = time.perf_counter()
    for q in queries:
        model.embed_queries([q])
    q_ms = (time.perf_counter() - start) * 1000 / len(queries)
    return resident_mb() - before, per_s, q_ms


def row(label: str, cells: list[str]) -> None:
    print(f"{label:<44} " + " ".join(f"{c:>8}" for c in cells))


def urgency_times() -> list[float]:
    """ms per text of the fast path with the bundled judge (its examples embedded and its probe fitted first) over
    every text of the held-out set."""
    judge = UrgencyJudge(embedder_of("bundled"))
    fast_urgency_check("ブレーキが効かない", judge)
    times = []
    for x in load(HELD_OUT_SET)["items"]:
        start = time.perf_counter()
        fast_urgency_check(x["text"], judge)
        times.append((time.perf_counter() - start) * 1000)
    return times


def print_urgency() -> None:
    """The urgency rows: the first set's halves, each example set, the held-out set; before -> e5 -> bundled."""
    urg = [urgency(v) for v in VARIANTS]
    row("urgency: critical judged critical", [f"{u[s][0]:.2f}" for u in urg for s in SPLITS])
    row("urgency: not urgent judged high/critical", [f"{u[s][1]}/{u[s][2]}" for u in urg for s in SPLITS])
    for file in URGENCY_SETS[1:]:
        name = set_name(file)
        label = f"{name} set, HELD OUT" if file == HELD_OUT_SET else f"{name} set (examples now)"
        print(
            f"  {label}: critical judged critical "
            + " -> ".join(f"{u[name][0]:.2f}" for u in urg)
            + "; not urgent judged high/critical "
            + " -> ".join(f"{u[name][1]}/{u[name][2]}" for u in urg)
            + "  (before -> e5 -> bundled)"
        )
    times = urgency_times()
    print(
        f"  urgency fast path, bundled, per text of the held-out set: p50 {pct(times, 0.5):.1f} ms  "
        f"p95 {pct(times, 0.95):.1f} ms  max {max(times):.1f} ms"
    )


def print_loso() -> None:
    """Leave-one-set-out over the example sets, per variant, per set and summed."""
    for variant in VARIANTS[1:]:
        loso = leave_one_set_out(variant)
        counts = {n: sum(x["level"] == "critical" for x in load(n)["items"]) for n in loso}
        for name, (c, f, n) in loso.items():
            print(
                f"  loso {variant} {name}: critical {c * counts[name]:.0f}/{counts[name]}, not urgent high/critical {f}/{n}"
            )
        print(
            f"  leave-one-set-out over v1-{set_name(EXAMPLE_SETS[-1])}, {variant}: critical "
            f"{sum(c * counts[n] for n, (c, _, _) in loso.items()):.0f}/{sum(counts.values())}, "
            f"not urgent judged high/critical {sum(f for _, f, _ in loso.values())}/{sum(n for _, _, n in loso.values())}"
        )


def main() -> None:
    if "--loso-only" in sys.argv:
        print_loso()
        return
    if "--urgency" in sys.argv:
        row("measure (tune / held-out)", [f"{v} {s[:4]}" for v in VARIANTS for s in SPLITS])
        print_urgency()
        return
    sizes = (
        [int(a) for a in sys.argv[sys.argv.index("--sizes") + 1 :]]
        if "--sizes" in sys.argv
        else [1000, 10_000]
    )
    if "--memory" in sys.argv:  # the memory rows alone
        row("measure (tune / held-out)", [f"{v} {s[:4]}" for v in VARIANTS for s in SPLITS])
        for size in sizes:
            results = [memory(v, size) for v in VARIANTS]
            row(
                f"memory recall@5 among {size:,} episodes",
                [f"{r[0][s]:.2f}" for r in results for s in SPLITS],
            )
            print_memory_held_out(size, results)
        return
    extra, per_s, q_ms = model_cost()
    print(
        f"bundled embedder: +{extra:.0f} MB resident, {per_s:.0f} documents/s, {q_ms:.1f} ms per query embedding\n"
    )
    row("measure (tune / held-out)", [f"{v} {s[:4]}" for v in VARIANTS for s in SPLITS])
    rag = [manual_rag(v) for v in VARIANTS]
    row("manual RAG top-5 hit rate", [f"{r[s][0]:.2f}" for r in rag for s in SPLITS])
    row("manual RAG unrelated query gets no source", [f"{r[s][1]:.2f}" for r in rag for s in SPLITS])
    kb = [knowledge(v) for v in VARIANTS]
    row("knowledge base recall@5", [f"{r[s][0]:.2f}" for r in kb for s in SPLITS])
    row("knowledge base small talk shows no entry", [f"{r[s][1]:.2f}" for r in kb for s in SPLITS])
    print_urgency()
    if "--loso" in sys.argv:
        print_loso()
    for size in sizes:
        results = [memory(v, size) for v in VARIANTS]
        row(f"memory recall@5 among {size:,} episodes", [f"{r[0][s]:.2f}" for r in results for s in SPLITS])
        for variant, (_, times) in zip(VARIANTS[1:], results[1:], strict=True):
            print(
                f"  {variant}: retrieval incl. query embedding, {size:,}: p50 {pct(times, 0.5):.1f} ms  "
                f"p95 {pct(times, 0.95):.1f} ms  (median {statistics.median(times):.1f})"
            )
        print_memory_held_out(size, results)


def print_memory_held_out(size: int, first: list[tuple[dict[str, float], list[float]]]) -> None:
    """The later memory sets (whole sets) among `size` episodes: the second and third (run once each, tuned on
    since), the fourth (held out); and the held-out parts never tuned on (the first set's half and the fourth)."""
    n = [sum(x["split"] == "heldout" for x in load("memory_pairs.json")["items"])]
    figures = [[r[0]["heldout"] for r in first]]
    for label, name, held_out in (
        ("second set (v2, 60, tuned on since its run)", "memory_pairs_v2.json", False),
        ("third set (v3, 60, tuned on since its run)", "memory_pairs_v3.json", False),
        ("fourth set (v4, 60, HELD OUT)", "memory_pairs_v4.json", True),
    ):
        result = [memory(v, size, name)[0]["heldout"] for v in VARIANTS]
        row(f"  {label}", [c for h in result for c in ("-", f"{h:.2f}")])
        if held_out:
            n.append(len(load(name)["items"]))
            figures.append(result)
    held = [sum(k * f[i] for k, f in zip(n, figures, strict=True)) / sum(n) for i in range(len(VARIANTS))]
    row(
        f"  held out, never tuned on ({' + '.join(map(str, n))})",
        [c for b in held for c in ("-", f"{b:.2f}")],
    )


if __name__ == "__main__":
    main()
