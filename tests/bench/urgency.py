"""Benchmark of the keyword urgency rules (issue 12 item 3): precision and recall per level on the labelled
Japanese phrasings (tests/data/urgency_phrasings.json), the hard targets, and the time per check.

Run: .venv/bin/python tests/bench/urgency.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from core.flows.diagnosis.urgency import keyword_urgency_check, urgency_rank

LEVELS = ("critical", "high", "medium", "low")


def main() -> None:
    path = Path(__file__).resolve().parents[1] / "data/urgency_phrasings.json"
    phrasings = json.loads(path.read_text(encoding="utf-8"))["phrasings"]
    predicted = [keyword_urgency_check(p["text"]).level for p in phrasings]
    truth = [p["level"] for p in phrasings]
    print(f"{len(phrasings)} labelled phrasings")
    print("| level | phrasings | precision | recall |\n|---|---:|---:|---:|")
    for level in LEVELS:
        tp = sum(t == level and p == level for t, p in zip(truth, predicted, strict=True))
        n_pred = sum(p == level for p in predicted)
        n_true = sum(t == level for t in truth)
        precision = tp / n_pred if n_pred else 1.0
        print(f"| {level} | {n_true} | {precision:.2f} | {tp / n_true:.2f} |")
    under = sum(
        t == "critical" and urgency_rank(p) < urgency_rank("high")
        for t, p in zip(truth, predicted, strict=True)
    )
    over = sum(
        t == "low" and urgency_rank(p) >= urgency_rank("high") for t, p in zip(truth, predicted, strict=True)
    )
    print(f"\ncritical phrasings rated below high: {under} (target 0)")
    print(f"not-urgent questions rated high or critical: {over} (target 0)")
    times = []
    for _ in range(5):
        for p in phrasings:
            start = time.perf_counter()
            keyword_urgency_check(p["text"])
            times.append((time.perf_counter() - start) * 1e6)
    print(f"keyword_urgency_check median: {statistics.median(times):.0f} µs")


if __name__ == "__main__":
    main()
