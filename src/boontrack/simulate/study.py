"""The study of Dodge et al. (2021), §3-4: estimator errors, interval coverage, and how many runs are needed.

:func:`study` runs it on one population, :func:`format_study` prints it and :func:`write_study` writes it (the
CSV, and the figure of :func:`boontrack.plots.plot_study`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from scipy import stats

from boontrack._validation import as_count, as_probability
from boontrack.choices import DEFAULT_CI_METHOD, ESTIMATORS, STUDY_CI_METHODS
from boontrack.estimators import expected_max_of
from boontrack.simulate.coverage import CoverageCell, comparison_rates, coverage, coverage_iv
from boontrack.simulate.populations import Population
from boontrack.vocabulary import name as named


def _boo_n_rows(val: np.ndarray, test: np.ndarray, budgets: np.ndarray, estimator: str) -> np.ndarray:
    """Boo_n of every sweep (row) at every budget, (sweeps, budgets), with the tie rule of Bajgar et al. (§3.2).

    Rows are sorted by validation score (worst first); a run in a tie block of ranks ``start+1..end`` weighs
    ``(P(end) - P(start)) / (end - start)``, which averages the block's test scores (:func:`boontrack.boo_n`).
    """
    from boontrack.estimators import Estimator, best_of_n_cdf

    rows, m = val.shape
    order = np.argsort(val, axis=1, kind="stable")
    v, t = np.take_along_axis(val, order, axis=1), np.take_along_axis(test, order, axis=1)
    rank = np.broadcast_to(np.arange(m), (rows, m))
    step = v[:, 1:] != v[:, :-1]
    start = np.maximum.accumulate(np.where(np.hstack([np.ones((rows, 1), bool), step]), rank, 0), axis=1)
    ends = np.where(np.hstack([step, np.ones((rows, 1), bool)]), rank + 1, m)
    end = np.minimum.accumulate(ends[:, ::-1], axis=1)[:, ::-1]
    cdf = best_of_n_cdf(m, budgets, cast(Estimator, estimator))  # (budgets, m + 1); one of ESTIMATORS
    weights = (cdf[:, end] - cdf[:, start]) / (end - start)  # (budgets, rows, m)
    return np.einsum("brm,rm->rb", weights, t)


def _gaussian_rows(val: np.ndarray, test: np.ndarray, budgets: np.ndarray) -> np.ndarray:
    """The Gaussian estimate of every sweep (Bajgar et al. 2018, eq. 6; :func:`boontrack.boo_n_gaussian`)."""
    centred_v, centred_t = val - val.mean(axis=1, keepdims=True), test - test.mean(axis=1, keepdims=True)
    sd_v, sd_t = centred_v.std(axis=1, ddof=1), centred_t.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.nan_to_num((centred_v * centred_t).sum(axis=1) / ((val.shape[1] - 1) * sd_v * sd_t))
    best = np.asarray(expected_max_of(stats.norm(), budgets.tolist()), dtype=np.float64)
    return test.mean(axis=1)[:, None] + (rho * sd_t)[:, None] * best[None, :]


@dataclass(frozen=True)
class EstimatorError:
    """Bias, variance and MSE of one estimator of Boo_n, over simulated sweeps (Dodge et al. 2021, §3).

    ``estimator`` is ``"V"``, ``"U"``, ``"W"`` or ``"gaussian"``; ``bias = mean(estimate) - truth``,
    ``variance`` the variance of the estimates (ddof=0), ``mse = bias^2 + variance``.
    """

    population: str
    m: int
    n: int
    estimator: str
    truth: float
    bias: float
    variance: float
    mse: float
    replications: int


def estimator_errors(
    population: Population, *, m: int, n: Any = (1, 5, 10), replications: int = 1000, rng: Any = None
) -> tuple[EstimatorError, ...]:
    """Bias, variance and MSE of the estimators V, U, W and the Gaussian one, on ``replications`` sweeps of m runs.

    One draw of sweeps serves every estimator (a paired comparison). U is left out at budgets above m.

    Returns
    -------
    tuple of EstimatorError
        By estimator (V, U, W, gaussian), then budget ascending.
    """
    m, budgets, _, _, _, replications, _, rng = coverage_iv(
        population, m, n, (DEFAULT_CI_METHOD,), "V", 0.95, replications, 1, rng
    )
    truth = np.asarray(population.boo_n(budgets.tolist()), dtype=np.float64)
    val, test = population.sample(m, replications=replications, rng=rng)
    out = []
    for estimator in (*ESTIMATORS, "gaussian"):
        kept = budgets if estimator != "U" else budgets[budgets <= m]
        if not kept.size:
            continue
        estimates = (
            _gaussian_rows(val, test, kept) if estimator == "gaussian" else _boo_n_rows(val, test, kept, estimator)
        )
        bias = estimates.mean(axis=0) - truth[: kept.size]
        variance = estimates.var(axis=0)
        out += [
            EstimatorError(
                population.name,
                m,
                int(k),
                estimator,
                float(truth[j]),
                float(bias[j]),
                float(variance[j]),
                float(bias[j] ** 2 + variance[j]),
                replications,
            )
            for j, k in enumerate(kept)
        ]
    return tuple(out)


@dataclass(frozen=True)
class RunsNeeded:
    """How a quantity of interest changes with the number of runs m, and the smallest m that reaches a target.

    Attributes
    ----------
    quantity
        ``"median width"`` of the default (studentized) interval of Boo_n, or ``"power"`` of the studentized
        interval of Boo_n(A) - Boo_n(B) (seed-paired runs) at a true difference ``shift``.
    n
        The budget.
    target
        The width to reach (at most) or the power to reach (at least).
    m, value
        The numbers of runs tried and the quantity at each.
    m_needed
        The smallest m tried that reaches the target, or None.
    """

    quantity: str
    n: int
    target: float
    m: tuple[int, ...]
    value: tuple[float, ...]
    m_needed: int | None


def _reached(quantity: str, value: float, target: float) -> bool:
    return value <= target if quantity == "median width" else value >= target


def _runs_needed(quantity: str, n: int, target: float, measured: dict[int, float]) -> RunsNeeded:
    reached = [m for m, value in measured.items() if _reached(quantity, value, target)]
    return RunsNeeded(quantity, n, target, tuple(measured), tuple(measured.values()), min(reached, default=None))


@dataclass(frozen=True)
class Study:
    """The result of :func:`study`: estimator errors, interval coverage, and runs needed (when asked)."""

    population: str
    m: int
    errors: tuple[EstimatorError, ...]
    coverage: tuple[CoverageCell, ...]
    width: RunsNeeded | None
    power: RunsNeeded | None

    def rows(self) -> list[dict[str, Any]]:
        """Every number as one row per (section, ...): the CSV ``boontrack simulate --out`` writes."""
        rows = [
            {
                "section": "estimator",
                "m": e.m,
                "n": e.n,
                "name": e.estimator,
                "truth": e.truth,
                "bias": e.bias,
                "variance": e.variance,
                "mse": e.mse,
            }
            for e in self.errors
        ]
        rows += [
            {
                "section": "interval",
                "m": c.m,
                "n": c.n,
                "name": c.method,
                "truth": c.truth,
                "coverage": c.coverage,
                "coverage_se": c.coverage_se,
                "median_width": c.median_width,
            }
            for c in self.coverage
        ]
        for plan in (self.width, self.power):
            if plan is not None:
                rows += [
                    {
                        "section": f"runs needed: {plan.quantity}",
                        "m": m,
                        "n": plan.n,
                        "name": "target",
                        "target": plan.target,
                        "value": value,
                    }
                    for m, value in zip(plan.m, plan.value)
                ]
        return [{"population": self.population, **row} for row in rows]


#: Numbers of runs tried by "how many runs do I need".
PLAN_RUNS = (5, 10, 20, 50, 100, 200)


def _study_iv(pop, m, n, methods, width, shift, power, plan_runs, replications, n_resamples, rng):
    m, budgets, methods, _, level, replications, n_resamples, rng = coverage_iv(
        pop, m, n, methods, "V", 0.95, replications, n_resamples, rng
    )
    for name, value in (("width", width), ("shift", shift)):
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{named(name)} must be a number > 0, got {value!r}")
    power = as_probability(power, "power")
    plan = sorted({as_count(k, "plan_runs") for k in plan_runs})
    if (width is not None or shift is not None) and budgets.max() > min(plan):
        plan = [k for k in plan if k >= budgets.max()]
    return m, budgets, methods, width, shift, power, tuple(plan), replications, n_resamples, rng


def study(
    population: Population,
    *,
    m: int,
    n: Any = (1, 5, 10),
    methods: Any = STUDY_CI_METHODS,
    width: float | None = None,
    shift: float | None = None,
    power: float = 0.8,
    plan_runs: Any = PLAN_RUNS,
    replications: int = 200,
    n_resamples: int = 499,
    rng: Any = None,
    progress: bool = False,
) -> Study:
    """Dodge et al. (2021), §3-4, on one population: how good are the estimates, the intervals, and m?

    - Estimators: bias, variance and MSE of V, U, W and the Gaussian estimate at m runs
      (:func:`estimator_errors`, ``5 x replications`` sweeps: they are cheap).
    - Intervals: coverage and median width of each method at m runs (:func:`coverage`).
    - With ``width``: the median width of the default interval of Boo_n at the largest budget for each m of
      ``plan_runs``, and the smallest m whose width is at most ``width``.
    - With ``shift``: the power of the studentized interval of Boo_n(A) - Boo_n(B) at the largest budget,
      seed-paired runs (:func:`comparison_rates`), A better by ``shift``, for each m of ``plan_runs``, and the
      smallest m reaching ``power``.

    Parameters
    ----------
    population : Population
    m : int
        Runs per sweep for the estimator and interval sections.
    n : int or sequence of int
        Budgets.
    methods : sequence of str
        Interval methods (:data:`boontrack.choices.CI_METHODS`; default
        :data:`boontrack.choices.STUDY_CI_METHODS`, all but the costly ``"studentized-u-calibrated"``).
    width, shift : float, optional
        Targets of "how many runs do I need".
    power : float
        The power to reach with ``shift``.
    plan_runs : sequence of int
        Numbers of runs tried (those below the largest budget are skipped).
    replications, n_resamples, rng
        As in :func:`coverage`.
    progress : bool
        A progress bar over the steps on stderr, only when stderr is a terminal.
    """
    from boontrack._progress import progress_bar

    m, budgets, methods, width, shift, power, plan, replications, n_resamples, rng = _study_iv(
        population, m, n, methods, width, shift, power, plan_runs, replications, n_resamples, rng
    )
    largest = int(budgets.max())
    common = dict(replications=replications, n_resamples=n_resamples, rng=rng)
    steps = [("errors", None), *(("coverage", x) for x in methods)]
    steps += [("width", k) for k in plan if width is not None] + [("power", k) for k in plan if shift is not None]
    errors: tuple[EstimatorError, ...] = ()
    cells: list[CoverageCell] = []
    widths: dict[int, float] = {}
    powers: dict[int, float] = {}
    weights = [_step_cost(kind, arg, m, replications, n_resamples) for kind, arg in steps]
    with progress_bar(steps, enabled=progress, label="boontrack: simulating", weights=weights) as bar:
        for kind, arg in bar:
            if kind == "errors":
                errors = estimator_errors(population, m=m, n=budgets, replications=5 * replications, rng=rng)
            elif kind == "coverage":
                cells += coverage(population, m=m, n=budgets, methods=(arg,), **common)
            elif kind == "width":
                (cell,) = coverage(population, m=arg, n=largest, methods=(DEFAULT_CI_METHOD,), **common)
                widths[arg] = cell.median_width
            else:
                rates = comparison_rates(population, m=arg, n=largest, paired=True, shift=shift, **common)
                powers[arg] = rates[0].rejection
    return Study(
        population=population.name,
        m=m,
        errors=errors,
        coverage=tuple(cells),
        width=None if width is None else _runs_needed("median width", largest, width, widths),
        power=None if shift is None else _runs_needed("power", largest, power, powers),
    )


def _step_cost(kind: str, arg: Any, m: int, replications: int, n_resamples: int) -> int:
    """A step's work in resampled runs (sweeps x resamples x runs, two approaches for power): the progress bar's
    weights, so that its time left holds while the steps of 200 runs come after those of 5. ``arg`` is the
    step's method (coverage) or number of runs (width, power); a calibrated interval resamples its resamples
    too."""
    from boontrack._bootstrap.intervals import CALIBRATED_METHOD, INNER_RESAMPLES, calibrating_resamples

    if kind == "errors":
        return replications  # no resampling
    if kind == "coverage":
        resamples = n_resamples
        if arg == CALIBRATED_METHOD:
            resamples += calibrating_resamples(m, 1, n_resamples) * INNER_RESAMPLES
        return replications * resamples * m
    return replications * n_resamples * int(arg) * (2 if kind == "power" else 1)


def format_study(result: Study) -> str:
    """The terminal tables of a :class:`Study`: estimators, intervals, runs needed."""
    nominal = result.coverage[0].confidence_level if result.coverage else 0.95
    replications = result.coverage[0].replications if result.coverage else 0
    scale = max((max(abs(e.truth), math.sqrt(e.mse)) for e in result.errors), default=0.0)
    lines = [
        f"{result.population}: m = {result.m} runs, {replications} simulated sweeps per cell",
        "",
        "Estimators of Boo_n (Dodge et al. 2021, §3)",
        *_aligned(
            [["n", "estimator", "truth", "bias", "sd", "RMSE"]]
            + [
                [
                    str(e.n),
                    e.estimator,
                    f"{_without_dust(e.truth, scale):.4g}",
                    f"{e.bias:+.3g}",
                    f"{math.sqrt(e.variance):.3g}",
                    f"{math.sqrt(e.mse):.3g}",
                ]
                for e in result.errors
            ]
        ),
        "",
        f"Intervals of Boo_n (estimator V), nominal {100 * nominal:g} %",
        *_aligned(
            [["n", "method", "coverage", "median width"]]
            + [
                [str(c.n), c.method, f"{100 * c.coverage:.1f} % ± {100 * c.coverage_se:.1f}", f"{c.median_width:.3g}"]
                for c in result.coverage
            ]
        ),
    ]
    for plan in (result.width, result.power):
        if plan is None:
            continue
        goal = "at most" if plan.quantity == "median width" else "at least"
        what = (
            f"median width of the Boo_{plan.n} interval"
            if plan.quantity == "median width"
            else f"power to tell two approaches apart by ΔBoo_{plan.n} (paired runs)"
        )
        verdict = (
            f"{plan.m_needed} runs" if plan.m_needed is not None else f"more than {max(plan.m)} runs (not reached)"
        )
        lines += ["", f"Runs needed: {what} {goal} {plan.target:g}: {verdict}"]
        lines += _aligned([["m", *map(str, plan.m)], [plan.quantity, *(f"{v:.3g}" for v in plan.value)]])
    return "\n".join(lines)


#: A value smaller than this share of the table's scale is floating-point dust: an integral's 8e-19 for 0.
DUST = 1e-9


def _without_dust(value: float, scale: float) -> float:
    """``value``, or 0.0 when it is below :data:`DUST` times ``scale`` (the largest |truth| or RMSE shown)."""
    return 0.0 if abs(value) <= DUST * scale else value


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def write_study(result: Study, directory: Any, *, plots: bool = True) -> list[str]:
    """Write ``study.csv`` (:meth:`Study.rows`) and, with matplotlib, ``study.png`` into ``directory``.

    The plot shows the coverage of each interval method by budget against the nominal level and, when asked
    for, the runs-needed curves. Returns the paths written.
    """
    import importlib.util
    from pathlib import Path

    import pandas as pd

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "study.csv"]
    pd.DataFrame(result.rows()).to_csv(written[0], index=False)
    if plots and importlib.util.find_spec("matplotlib") is not None:
        from boontrack.plots import figure_png, plot_study

        written.append(out / "study.png")
        written[-1].write_bytes(figure_png(plot_study(result)))
    return [str(p) for p in written]
