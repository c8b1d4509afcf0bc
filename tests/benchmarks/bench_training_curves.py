"""Coverage of the training-curve bands (boontrack.training) on simulated training curves with known means.

Each run's curve is a known mean curve plus a run-level random effect and AR(1) noise over the steps; the
shapes cover an accuracy rising in [0, 1] (the bands on the logit scale), one near its ceiling, a decaying loss,
a loss where some runs diverge, and runs that stop at different steps (ragged grids). The true mean at each step
is the mean of 200,000 simulated runs (its standard error is below 1 % of the bands' half-widths). A sweep
covers pointwise at a step when the step's interval holds the true mean, and simultaneously when every step
with at least ``min_runs`` runs does. With ``--curve best-so-far`` the curves are each run's running best (the
highest accuracy, the lowest loss so far) and the truth the mean running best of the simulated runs.

Run by hand (a few minutes on two cores)::

    nice -n 10 python tests/benchmarks/bench_training_curves.py --sweeps 300
    nice -n 10 python tests/benchmarks/bench_training_curves.py --sweeps 300 --curve best-so-far
"""

from __future__ import annotations

import argparse
import functools
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from boontrack.exceptions import FewRunsWarning
from boontrack.training import DEFAULT_MIN_RUNS, training_curves

STEPS = 30
#: AR(1) coefficient of the noise over steps.
PHI = 0.8
TRUTH_RUNS = 200_000


def _ar1(rng: np.random.Generator, runs: int, sd: float) -> np.ndarray:
    """Stationary AR(1) noise with standard deviation ``sd``, shape (runs, STEPS): the first step drawn from the
    stationary law, each next one ``PHI`` times the last plus a shock (a loop over the 30 steps, not the runs)."""
    noise = rng.normal(scale=sd, size=(runs, STEPS))
    noise[:, 1:] *= np.sqrt(1 - PHI**2)
    for step in range(1, STEPS):
        noise[:, step] += PHI * noise[:, step - 1]
    return noise


def _steps() -> np.ndarray:
    return np.arange(1, STEPS + 1, dtype=np.float64)


def rising(rng: np.random.Generator, runs: int) -> np.ndarray:
    """An accuracy rising from 0.4 to 0.9, run effects 0.02, noise 0.015."""
    mean = 0.9 - 0.5 * np.exp(-_steps() / 6)
    return mean + rng.normal(scale=0.02, size=(runs, 1)) + _ar1(rng, runs, 0.015)


def ceiling(rng: np.random.Generator, runs: int) -> np.ndarray:
    """An accuracy rising to about 0.99, on the logit scale (run effects 0.3, noise 0.25): skewed near 1."""
    logit = 1.0 + 3.6 * (1 - np.exp(-_steps() / 6))
    return special.expit(logit + rng.normal(scale=0.3, size=(runs, 1)) + _ar1(rng, runs, 0.25))


def loss(rng: np.random.Generator, runs: int) -> np.ndarray:
    """A loss decaying from 2 to 0.3, with multiplicative run effects (10 %) and noise (5 %)."""
    mean = 0.3 + 2.0 * np.exp(-_steps() / 5)
    return mean * np.exp(rng.normal(scale=0.1, size=(runs, 1)) + _ar1(rng, runs, 0.05))


def diverged(rng: np.random.Generator, runs: int) -> np.ndarray:
    """The loss, where each run diverges with probability 0.1 at a step between 5 and 25, then logs about 5."""
    values = loss(rng, runs)
    start = np.where(rng.random(runs) < 0.1, rng.integers(5, 26, size=runs), STEPS + 1)
    after = _steps()[None, :] >= start[:, None]
    return np.where(after, 5.0 * np.exp(_ar1(rng, runs, 0.05)), values)


def ragged(rng: np.random.Generator, runs: int) -> np.ndarray:
    """The rising accuracy, each run stopping at a step drawn between 10 and 30 (NaN after)."""
    values = rising(rng, runs)
    last = rng.integers(10, STEPS + 1, size=runs)
    return np.where(_steps()[None, :] <= last[:, None], values, np.nan)


SHAPES: dict[str, Callable[[np.random.Generator, int], np.ndarray]] = {
    "rising": rising,
    "ceiling": ceiling,
    "loss": loss,
    "diverged": diverged,
    "ragged": ragged,
}
#: Which way each shape is better, for its best-so-far curve.
MAXIMIZE = {"rising": True, "ceiling": True, "loss": False, "diverged": False, "ragged": True}


def running_best(values: np.ndarray, maximize: bool) -> np.ndarray:
    """Each run's best value so far at each step it logged (NaN after it stopped)."""
    signed = np.where(np.isnan(values), -np.inf, values if maximize else -values)
    best = np.maximum.accumulate(signed, axis=1)
    return np.where(np.isnan(values), np.nan, best if maximize else -best)


@functools.cache
def true_mean(shape: str, runs: int = TRUTH_RUNS, curve: str = "value") -> np.ndarray:
    """The mean curve of ``shape``: the mean of ``runs`` simulated runs (ragged: of the runs still going), or of
    their running bests."""
    values = SHAPES[shape](np.random.default_rng([7, len(shape)]), runs)
    if curve == "best-so-far":
        values = running_best(values, MAXIMIZE[shape])
    return np.nanmean(values, axis=0)


def long_form(values: np.ndarray) -> dict[str, np.ndarray]:
    """The logged points of a (runs, steps) array, NaN meaning not logged."""
    run, step = np.nonzero(~np.isnan(values))
    return {"run_id": run.astype(str), "step": step + 1, "value": values[run, step]}


@dataclass(frozen=True)
class Coverage:
    shape: str
    runs: int
    sweeps: int
    pointwise: float
    simultaneous: float
    width_ratio: float


def coverage(
    shape: str,
    runs: int,
    sweeps: int,
    *,
    n_resamples: int = 999,
    min_runs: int = DEFAULT_MIN_RUNS,
    seed: int = 0,
    truth_runs: int = TRUTH_RUNS,
    curve: str = "value",
) -> Coverage:
    """Pointwise coverage (share of covered steps with enough runs), simultaneous coverage (share of sweeps
    covering every such step) and the simultaneous band's width over the pointwise one (median)."""
    truth = true_mean(shape, truth_runs, curve)
    direction = MAXIMIZE[shape] if curve == "best-so-far" else None
    rng = np.random.default_rng([seed, runs, len(shape)])
    covered_points = points = covered_sweeps = counted = 0
    ratios = []
    for _ in range(sweeps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FewRunsWarning)
            values = long_form(SHAPES[shape](rng, runs))
            curves = training_curves(
                values, curve=curve, maximize=direction, n_resamples=n_resamples, min_runs=min_runs, rng=rng
            )
        enough = curves.enough_runs
        if not enough.any():
            continue
        at = truth[curves.step - 1][enough]
        inside = (curves.low[enough] <= at) & (at <= curves.high[enough])
        covered_points += int(inside.sum())
        points += int(enough.sum())
        held = (curves.simultaneous_low[enough] <= at) & (at <= curves.simultaneous_high[enough])
        covered_sweeps += bool(held.all())
        counted += 1
        width = curves.high[enough] - curves.low[enough]
        wide = width > 0
        ratios.append(np.median((curves.simultaneous_high - curves.simultaneous_low)[enough][wide] / width[wide]))
    return Coverage(shape, runs, counted, covered_points / points, covered_sweeps / counted, float(np.median(ratios)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--runs", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES))
    parser.add_argument("--min-runs", type=int, default=DEFAULT_MIN_RUNS)
    parser.add_argument("--curve", choices=("value", "best-so-far"), default="value")
    args = parser.parse_args()
    print(
        f"{args.curve} curves, {args.sweeps} sweeps per cell, {args.resamples} resamples, {STEPS} steps, min_runs "
        f"{args.min_runs}, 95 %\n"
    )
    print("| shape | runs | pointwise | simultaneous | simultaneous / pointwise width |")
    print("|---|---|---|---|---|")
    for shape in args.shapes:
        for runs in args.runs:
            start = time.perf_counter()
            cell = coverage(
                shape, runs, args.sweeps, n_resamples=args.resamples, min_runs=args.min_runs, curve=args.curve
            )
            print(
                f"| {shape} | {runs} | {100 * cell.pointwise:.1f} % | {100 * cell.simultaneous:.1f} % "
                f"| {cell.width_ratio:.2f} |  <!-- {cell.sweeps} sweeps, {time.perf_counter() - start:.0f} s -->",
                flush=True,
            )


if __name__ == "__main__":
    main()
