"""Coverage of the training-curve bands (boontrack.training) on simulated training curves with known means.

Each run's curve is a known mean curve plus a run-level random effect and AR(1) noise over the steps; the
shapes cover an accuracy rising in [0, 1] (the bands on the logit scale), one near its ceiling, a decaying loss,
a loss where some runs diverge, and runs that stop at different steps (ragged grids). The true mean at each step
is the mean of 200,000 simulated runs (its standard error is below 1 % of the bands' half-widths). A sweep
covers pointwise at a step when the step's interval holds the true mean, and simultaneously when every step
with at least ``min_runs`` runs does. With ``--curve best-so-far`` the curves are each run's running best (the
highest accuracy, the lowest loss so far) and the truth the mean running best of the simulated runs.

With ``--steps N`` the curves have N steps, the same shapes on a finer grid (each AR(1) step's coefficient
``0.8 ** (30 / N)``, so that the noise is as correlated over a share of the curve; ``--phi`` sets it): beyond
:data:`boontrack.training.BAND_STEPS` steps the bands are computed at that many of them, and coverage is counted
at those (the other steps have none).

``--cost`` measures instead what ``--curves`` costs on long histories: ``boontrack summarize FILE --curves
val_loss`` on a file of 6 runs of ``--steps`` steps (default 1,000,000), whole processes taken in turn, against
the same summary without ``--curves`` and against pandas reading the file and taking each step's mean and
standard deviation (``read_csv``, then ``groupby([model, step]).agg([mean, std])``).

Run by hand (a few minutes on two cores)::

    nice -n 10 python tests/benchmarks/bench_training_curves.py --sweeps 300
    nice -n 10 python tests/benchmarks/bench_training_curves.py --sweeps 300 --curve best-so-far
    nice -n 10 python tests/benchmarks/bench_training_curves.py --sweeps 300 --steps 3000
    python tests/benchmarks/bench_training_curves.py --cost [--steps 1000000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import functools
import resource
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from bench_summarize import boontrack, measured
from scipy import signal, special

from boontrack import training
from boontrack.exceptions import FewRunsWarning
from boontrack.training import DEFAULT_MIN_RUNS, training_curves

#: The steps of a curve (``--steps``); the shapes are written for 30.
STEPS = 30
#: AR(1) coefficient of the noise from one step to the next (``--phi``; by default 0.8 ** (30 / STEPS)).
PHI = 0.8
TRUTH_RUNS = 200_000
#: Runs x steps simulated at once for the true mean (one piece at 30 steps).
TRUTH_ELEMENTS = 1 << 23


def _ar1(rng: np.random.Generator, runs: int, sd: float) -> np.ndarray:
    """Stationary AR(1) noise with standard deviation ``sd``, shape (runs, STEPS): the first step drawn from the
    stationary law, each next one ``PHI`` times the last plus a shock (a recursive filter along the steps)."""
    noise = rng.normal(scale=sd, size=(runs, STEPS))
    noise[:, 1:] *= np.sqrt(1 - PHI**2)
    return signal.lfilter([1.0], [1.0, -PHI], noise, axis=1)


def _steps() -> np.ndarray:
    """Each step's time on the scale of 30 steps the shapes are written on."""
    return np.arange(1, STEPS + 1, dtype=np.float64) * (30 / STEPS)


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
    start = np.where(rng.random(runs) < 0.1, rng.integers(STEPS // 6, STEPS * 5 // 6 + 1, size=runs), STEPS + 1)
    after = np.arange(1, STEPS + 1)[None, :] >= start[:, None]
    return np.where(after, 5.0 * np.exp(_ar1(rng, runs, 0.05)), values)


def ragged(rng: np.random.Generator, runs: int) -> np.ndarray:
    """The rising accuracy, each run stopping at a step drawn between 10 and 30 (NaN after)."""
    values = rising(rng, runs)
    last = rng.integers(STEPS // 3, STEPS + 1, size=runs)
    return np.where(np.arange(1, STEPS + 1)[None, :] <= last[:, None], values, np.nan)


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
    their running bests; simulated :data:`TRUTH_ELEMENTS` at a time."""
    rng = np.random.default_rng([7, len(shape)])
    total, count = np.zeros(STEPS), np.zeros(STEPS)
    step = max(1, TRUTH_ELEMENTS // STEPS)
    for start in range(0, runs, step):
        values = SHAPES[shape](rng, min(step, runs - start))
        if curve == "best-so-far":
            values = running_best(values, MAXIMIZE[shape])
        total += np.nansum(values, axis=0)
        count += np.count_nonzero(~np.isnan(values), axis=0)
    return total / count


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
        enough = curves.enough_runs & np.isfinite(curves.low)  # steps with enough runs and a band
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


#: The comparison of ``--cost``: pandas reading the histories and taking each step's mean and standard deviation.
GROUPBY = (
    "import sys, pandas as pd; pd.read_csv(sys.argv[1]).groupby(['model', 'step'])['val_loss'].agg(['mean', 'std'])"
)


def history_file(path: Path, runs: int) -> None:
    """A file of ``runs`` runs of STEPS steps, one row per run and step: the loss and the rising accuracy. Written a
    run at a time, so that this process stays smaller than those it measures: a child's peak memory counts its
    parent's at the fork (Linux keeps the larger)."""
    rng = np.random.default_rng(0)
    for run in range(runs):
        pd.DataFrame(
            {
                "run_id": f"run-{run}",
                "model": "mlp",
                "seed": run,
                "step": np.arange(1, STEPS + 1),
                "val_loss": loss(rng, 1)[0].round(6),
                "val_acc": rising(rng, 1)[0].round(6),
            }
        ).to_csv(path, mode="a", header=run == 0, index=False)


def cost(runs: int, repeat: int) -> None:
    """Median CPU (and range) and peak memory of whole processes, taken in turn ``repeat`` times."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "histories.csv"
        history_file(path, runs)
        summary = ["summarize", str(path), "--val", "val_acc", "--group-by", "model", "--seed-column", "seed"]
        commands: dict[str, Callable[[], tuple]] = {
            "`boontrack summarize FILE --curves val_loss`": lambda: boontrack(*summary, "--curves", "val_loss"),
            "the same without `--curves`": lambda: boontrack(*summary),
            "pandas: `read_csv`, then `groupby([model, step]).agg([mean, std])`": lambda: measured(
                [sys.executable, "-c", GROUPBY, str(path)]
            ),
        }
        taken: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(repeat):
            for name, run in commands.items():
                _, peak, _, cpu = run()
                taken[name].append((cpu, peak))
    floor = statistics.median(cpu for cpu, _ in taken[list(commands)[-1]])
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{runs} runs x {STEPS:,} steps, medians of {repeat} processes taken in turn; a peak below this process's "
        f"own ({own:.0f} MiB) shows as it (Linux counts a child's peak from its fork)\n"
    )
    print("| process | CPU (s) | / pandas | peak RSS (MiB) |")
    print("|---|---|---|---|")
    for name, measures in taken.items():
        cpus, peaks = [cpu for cpu, _ in measures], [peak for _, peak in measures]
        spread = f"{statistics.median(cpus):.2f} ({min(cpus):.2f}-{max(cpus):.2f})"
        print(f"| {name} | {spread} | {statistics.median(cpus) / floor:.2f} | {statistics.median(peaks):.0f} |")


def main() -> None:
    global STEPS, PHI
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--runs", type=int, nargs="+", default=[5, 10, 20])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES))
    parser.add_argument("--min-runs", type=int, default=DEFAULT_MIN_RUNS)
    parser.add_argument("--curve", choices=("value", "best-so-far"), default="value")
    parser.add_argument("--steps", type=int, help="steps of a curve [default: 30; with --cost 1,000,000]")
    parser.add_argument("--phi", type=float, help="AR(1) coefficient from one step to the next")
    parser.add_argument("--band-steps", type=int, help="steps a band is computed at, at most [default: BAND_STEPS]")
    parser.add_argument("--cost", action="store_true", help="measure the cost of --curves on long histories")
    parser.add_argument("--repeat", type=int, default=3, help="with --cost: processes of each kind")
    args = parser.parse_args()
    STEPS = args.steps or (1_000_000 if args.cost else 30)
    PHI = args.phi if args.phi is not None else 0.8 ** (30 / STEPS)
    if args.band_steps is not None:
        training.BAND_STEPS = args.band_steps
    if args.cost:
        cost(6, args.repeat)
        return
    print(
        f"{args.curve} curves, {args.sweeps} sweeps per cell, {args.resamples} resamples, {STEPS} steps (AR(1) "
        f"{PHI:.4g}), bands at {training.BAND_STEPS} steps at most, min_runs {args.min_runs}, 95 %\n"
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
