"""Exact oracles for the aggregates across tasks (:mod:`boontrack.across`), in rational arithmetic.

Written from the definitions of Agarwal et al. (2021) (rliable's ``metrics.py``) and of Bajgar et al. (2018),
run by run in plain Python with :class:`fractions.Fraction` (every float score converted exactly), with no
numpy and nothing of the library but the Boo_n oracle of :mod:`oracles` (which enumerates every draw). Each
function takes the runs as rows ``(group, task, score, validation)`` (validation None: Boo_n of the scores
themselves) and returns a dict by group (or by pair of groups).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from fractions import Fraction

from oracles import enumerated_run_weights, expected_test_of_best

Row = tuple[object, object, float, float | None]


def cells(rows: Iterable[Row]) -> dict[object, dict[object, list[tuple[Fraction, float | None, float]]]]:
    """group -> task -> [(score as a Fraction, validation, score as given)], in row order."""
    out: dict[object, dict[object, list]] = defaultdict(lambda: defaultdict(list))
    for group, task, score, validation in rows:
        out[group][task].append((Fraction(score), validation, score))
    return out


def normalizer(rows: list[Row], normalize: str | Mapping) -> dict[object, tuple[Fraction, Fraction]]:
    """task -> (low, high): min-max over every group's runs of the task, or the reference scores given."""
    tasks = {task for _, task, _, _ in rows}
    if normalize == "none":
        return {task: (Fraction(0), Fraction(1)) for task in tasks}
    if normalize == "min-max":
        return {
            task: (
                min(Fraction(s) for _, t, s, _ in rows if t == task),
                max(Fraction(s) for _, t, s, _ in rows if t == task),
            )
            for task in tasks
        }
    return {task: (Fraction(normalize[task][0]), Fraction(normalize[task][1])) for task in tasks}


def normalized(rows: list[Row], normalize: str | Mapping = "none"):
    """group -> task -> [(normalized score, what Boo_n picks the best run by: the validation score, or the score
    as given when there is none)]."""
    scale = normalizer(rows, normalize)
    out = {}
    for group, tasks in cells(rows).items():
        out[group] = {
            task: [
                ((x - scale[task][0]) / (scale[task][1] - scale[task][0]), raw if v is None else v)
                for x, v, raw in runs
            ]
            for task, runs in tasks.items()
        }
    return out


def task_means(runs_by_task) -> list[Fraction]:
    return [sum((x for x, _ in runs), Fraction(0)) / len(runs) for runs in runs_by_task.values()]


def aggregates(
    rows: list[Row],
    *,
    maximize: bool,
    normalize: str | Mapping = "none",
    gamma: Fraction | None = None,
    n: int = 2,
    estimator: str = "V",
    tau: Iterable[float] = (),
) -> dict[object, dict[str, object]]:
    """Every aggregate of each group: mean, median, iqm, optimality_gap, boo_n, profile (a list over ``tau``)."""
    target = (Fraction(1) if maximize else Fraction(0)) if gamma is None else Fraction(gamma)
    out = {}
    for group, by_task in normalized(rows, normalize).items():
        means = task_means(by_task)
        pooled = sorted(x for runs in by_task.values() for x, _ in runs)
        cut = len(pooled) // 4  # scipy.stats.trim_mean(x, 0.25): int(0.25 N) cut from each end
        middle = pooled[cut : len(pooled) - cut]
        shortfall = [max(target - x, Fraction(0)) if maximize else max(x - target, Fraction(0)) for x in pooled]
        boo = []
        for runs in by_task.values():
            scores = [x for x, _ in runs]
            picked_by = [v for _, v in runs]
            weights = enumerated_run_weights(picked_by, n, estimator, maximize=maximize)
            boo.append(expected_test_of_best(weights, scores))
        better = (lambda x, t: x > t) if maximize else (lambda x, t: x < t)
        out[group] = {
            "mean": sum(means, Fraction(0)) / len(means),
            "median": statistics.median(means),
            "iqm": sum(middle, Fraction(0)) / len(middle),
            "optimality_gap": sum(shortfall, Fraction(0)) / len(shortfall),
            "boo_n": sum(boo, Fraction(0)) / len(boo),
            "profile": [Fraction(sum(better(x, Fraction(t)) for x in pooled), len(pooled)) for t in tau],
        }
    return out


def prob_improvement(rows: list[Row], a: object, b: object, *, maximize: bool) -> Fraction:
    """Mean over tasks of P(x_a better than x_b) + 1/2 P(x_a = x_b), counting every pair of runs."""
    by_group = cells(rows)
    shares = []
    for task, mine in by_group[a].items():
        theirs = by_group[b][task]
        total = Fraction(0)
        for x, _, _ in mine:
            for y, _, _ in theirs:
                if x == y:
                    total += Fraction(1, 2)
                elif (x > y) == maximize:
                    total += 1
        shares.append(total / (len(mine) * len(theirs)))
    return sum(shares, Fraction(0)) / len(shares)
