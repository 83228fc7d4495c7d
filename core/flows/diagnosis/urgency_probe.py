"""A reading of the whole text for urgency by meaning (spec 04 §6 fast path): a linear probe over the examples' vectors.

The nearest examples (core.flows.diagnosis.urgency_meaning) tell what a text is about; a text that tells a danger as a
story, a plan, a joke or somebody else's car lies near the reports of that danger all the same, and the rules read
only the frames they were written for. A logistic regression over the vectors of the examples that name a danger
(by rule, in whatever frame) or are critical learns which way a text leans: towards the urgent ones (critical or high)
or towards the harmless tellings. `UrgencyJudge` fits it once, from its examples, when it first needs it (about a
second on two cores; Newton's method, ridge-regularized, converges in a few steps), and the fast path caps a text the
probe reads as clearly harmless at medium (`Thresholds.probe_below`).
"""

from __future__ import annotations

import numpy as np

from core.search.embedders import Matrix

# The ridge (L2) weight of the probe, on unit vectors: 0.1 chosen leave-one-set-out over v1-v41 with 0.03 and 0.3
# (the lowest critical phrasing's probability 0.18, 0.33 and 0.44; false alarms below 0.15: 20, 12 and 2 of 39).
PROBE_RIDGE = 0.1
# A probe over fewer examples of either side than this is not fitted (it would say nothing): the judgement goes on
# without it.
PROBE_MIN_EACH = 50
NEWTON_STEPS = 30
NEWTON_TOLERANCE = 1e-9


def fit_probe(vectors: Matrix, urgent: np.ndarray, ridge: float = PROBE_RIDGE) -> np.ndarray | None:
    """The probe's weights (one per dimension, then the bias) for the rows of `vectors` and whether each is urgent
    (True: critical or high); None when either side has fewer than PROBE_MIN_EACH rows."""
    y = np.asarray(urgent, dtype=np.float64)
    if min(int(y.sum()), len(y) - int(y.sum())) < PROBE_MIN_EACH:
        return None
    x = np.hstack([np.asarray(vectors, dtype=np.float64), np.ones((len(y), 1))])
    penalty = np.full(x.shape[1], ridge)
    penalty[-1] = 0.0  # the bias is not shrunk
    w = np.zeros(x.shape[1])
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < NEWTON_TOLERANCE:
            break
    return w


def probe_score(weights: np.ndarray, vector: np.ndarray) -> float:
    """How likely the probe reads `vector` as urgent (0-1)."""
    z = float(np.asarray(vector, dtype=np.float64) @ weights[:-1] + weights[-1])
    return float(1.0 / (1.0 + np.exp(-z)))
