"""Benchmark: how often the 95 % stratified-bootstrap intervals of :func:`boontrack.across.across_tasks` cover.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_across_coverage.py [--replications 200] [--resamples 999] [--seed 0]
        [--families normal,beta,skewnorm] [--runs 3,5,10] [--tasks 5,20,50] [--n 2,5] [--estimator V]
        [--tails equal-tailed]

Synthetic benchmarks whose aggregates are known exactly. A benchmark of T tasks is drawn once per family and
size (its tasks' parameters from ``--seed``); each replication draws m runs per task from it, computes the
aggregates of one group with their 95 % intervals, and counts whether each interval holds the
benchmark's true aggregate:

- ``normal``: on task t, (validation, test) is bivariate normal with means ``mu_t`` ~ U(0.5, 0.9), standard
  deviations ``sigma_t`` ~ U(0.01, 0.05) and correlation 0.5. True mean: the mean of ``mu_t``; true Boo_n: the
  mean of ``mu_t + 0.5 sigma_t E[max of n N(0, 1)]`` (Bajgar et al. 2018, eq. 6, exact for this model).
- ``beta``: test scores on task t are Beta(a_t, b_t), ``a_t`` ~ U(5, 20), ``b_t`` ~ U(1.5, 4): skewed towards the
  ceiling, as accuracies; no validation scores, so Boo_n is the expected best of n test scores,
  :func:`boontrack.expected_max_of` of the beta distribution. True mean: the mean of ``a / (a + b)``.
- ``skewnorm`` (held out: not used to choose the methods): test scores on task t are skew-normal with shape
  ~ U(-8, -2), location ~ U(0.7, 0.95) and scale ~ U(0.02, 0.08), a long lower tail; no validation scores.

The true IQM is the interquartile mean of the population the pooled runs come from, the equal mixture of the T
tasks' distributions: ``2 E[X; q_1 < X < q_3]`` with the mixture's quartiles (found by root finding), each task's
partial expectation in closed form (normal: ``mu (Phi(b) - Phi(a)) + sigma (phi(a) - phi(b))``; beta:
``a / (a + b) I_x(a + 1, b)``; skew-normal: by quadrature). The sample IQM keeps ``N - 2 int(N / 4)`` of N pooled runs (60 % at N = 15), so
at small N it estimates a slightly different quantity: the ``bias`` column says how far the estimates' mean is
from the truth, in units of their standard deviation over replications.

Columns: across_tasks' own intervals (``mean`` and ``iqm`` studentized, ``boo_n`` studentized-u, "refused" where
it refuses them), and beside them, measured here only, rliable's percentile interval of the same resamples
(``... percentile``) and the Welch t interval of the mean (``mean welch``). ``--tails`` picks the studentized
intervals' ends (the default, equal-tailed, was chosen on seed 0 over symmetric: the same coverage within 1 %,
slightly narrower). The module docstring of :mod:`boontrack.across` holds the table these runs gave (seeds 0 and 1,
500 replications, ``--n 2,3,5``).

Each row: coverage (share of replications whose interval holds the truth, with its Monte Carlo standard error),
the mean width of the interval, and the bias. A percentile interval of a cell of m runs resamples with the
variance ``(m - 1) / m`` of the cell's own, so at m = 3 the percentile intervals are expected near 89 % for a mean
(``P(|Z| < 1.96 sqrt(2/3))``), 92 % at m = 5 and 94 % at m = 10, whatever the number of tasks.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import optimize, special, stats

from boontrack import across, expected_max_of
from boontrack._bootstrap import percentile_interval
from boontrack.across import across_tasks
from boontrack.exceptions import ExtrapolationWarning, FewRunsWarning

RHO = 0.5


class Benchmark:
    """T tasks' distributions and their true aggregates."""

    def __init__(self, family: str, tasks: int, rng: np.random.Generator, budgets: tuple[int, ...]):
        self.family, self.tasks = family, tasks
        if family == "normal":
            self.mu = rng.uniform(0.5, 0.9, tasks)
            self.sigma = rng.uniform(0.01, 0.05, tasks)
            self.mean = float(self.mu.mean())
            top = {n: expected_max_of(stats.norm(0, 1), n) for n in budgets}
            self.boo_n = {n: float(np.mean(self.mu + RHO * self.sigma * top[n])) for n in budgets}
        elif family == "beta":
            self.a = rng.uniform(5, 20, tasks)
            self.b = rng.uniform(1.5, 4, tasks)
            self.mean = float(np.mean(self.a / (self.a + self.b)))
            self.boo_n = {
                n: float(np.mean([expected_max_of(stats.beta(a, b), n) for a, b in zip(self.a, self.b)]))
                for n in budgets
            }
        elif family == "skewnorm":
            # held out (not used to choose the methods): skewed towards the ceiling with a long lower tail, as
            # accuracies with a failed seed now and then; no validation scores
            self.shape = rng.uniform(-8, -2, tasks)
            self.loc = rng.uniform(0.7, 0.95, tasks)
            self.scale = rng.uniform(0.02, 0.08, tasks)
            self.dists = [stats.skewnorm(a, loc, sc) for a, loc, sc in zip(self.shape, self.loc, self.scale)]
            self.mean = float(np.mean([d.mean() for d in self.dists]))
            self.boo_n = {n: float(np.mean([expected_max_of(d, n) for d in self.dists])) for n in budgets}
        else:
            raise ValueError(f"unknown family {family!r}")
        self.iqm = self._iqm()

    def _cdf(self, x: float) -> float:
        if self.family == "skewnorm":
            return float(np.mean([d.cdf(x) for d in self.dists]))
        if self.family == "normal":
            return float(np.mean(special.ndtr((x - self.mu) / self.sigma)))
        return float(np.mean(special.betainc(self.a, self.b, x)))

    def _partial(self, x: float) -> float:
        """E[X; X < x] under the mixture."""
        if self.family == "skewnorm":
            return float(np.mean([d.expect(lambda y: y, lb=-np.inf, ub=x) for d in self.dists]))
        if self.family == "normal":
            z = (x - self.mu) / self.sigma
            return float(np.mean(self.mu * special.ndtr(z) - self.sigma * stats.norm.pdf(z)))
        return float(np.mean(self.a / (self.a + self.b) * special.betainc(self.a + 1, self.b, x)))

    def _iqm(self) -> float:
        low, high = (-10.0, 10.0) if self.family == "normal" else (0.0, 1.0)
        q1 = optimize.brentq(lambda x: self._cdf(x) - 0.25, low, high, xtol=1e-15)
        q3 = optimize.brentq(lambda x: self._cdf(x) - 0.75, low, high, xtol=1e-15)
        return 2.0 * (self._partial(q3) - self._partial(q1))

    def draw(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """m runs per task: test scores, validation scores (None for beta), task labels."""
        task = np.repeat(np.arange(self.tasks), m)
        if self.family == "normal":
            z1, z2 = rng.standard_normal((2, self.tasks * m))
            test = self.mu[task] + self.sigma[task] * z1
            val = self.mu[task] + self.sigma[task] * (RHO * z1 + np.sqrt(1 - RHO**2) * z2)
            return test, val, task
        if self.family == "skewnorm":
            return stats.skewnorm.rvs(self.shape[task], self.loc[task], self.scale[task], random_state=rng), None, task
        return rng.beta(self.a[task], self.b[task]), None, task


def _names(args) -> list[str]:
    return [
        "mean",
        "mean percentile",
        "mean welch",
        "iqm",
        "iqm percentile",
        *(f"boo_{n}" for n in args.n),
        *(f"boo_{n} percentile" for n in args.n),
    ]


def _welch(test: np.ndarray, task: np.ndarray) -> tuple[float, float]:
    """A candidate, measured here only: the t interval of the mean over tasks, ``mean +- t_df se`` with ``se^2 =
    sum_t s_t^2 / m_t / T^2`` and Welch-Satterthwaite's degrees of freedom."""
    labels = np.unique(task)
    means = np.array([test[task == t].mean() for t in labels])
    parts = np.array([test[task == t].var(ddof=1) / np.sum(task == t) for t in labels])
    sizes = np.array([np.sum(task == t) for t in labels])
    se = np.sqrt(parts.sum()) / labels.size
    df = parts.sum() ** 2 / np.sum(parts**2 / (sizes - 1))
    q = stats.t.ppf(0.975, df)
    return float(means.mean() - q * se), float(means.mean() + q * se)


def measure(bench: Benchmark, m: int, args, rng: np.random.Generator) -> dict[str, list[float]]:
    names = _names(args)
    truths = {"mean": bench.mean, "iqm": bench.iqm, **{f"boo_{n}": bench.boo_n[n] for n in args.n}}
    truths.update({f"{name} percentile": truths[name] for name in list(truths)})
    truths["mean welch"] = bench.mean
    hits = {name: 0 for name in names}
    refused = {name: 0 for name in names}
    widths: dict[str, list[float]] = {name: [] for name in names}
    estimates: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(args.replications):
        test, val, task = bench.draw(m, rng)
        with warnings.catch_warnings():
            # what they say is what this script measures: n above m (V extrapolates), few runs, the aggregate Boo_n
            warnings.simplefilter("ignore", ExtrapolationWarning)
            warnings.simplefilter("ignore", FewRunsWarning)
            res = across_tasks(
                test,
                task=task,
                group=np.zeros(task.size, dtype=int),
                validation=val,
                maximize=True,
                n=list(args.n),
                estimator=args.estimator,
                tau=[0.5],
                n_resamples=args.resamples,
                rng=rng,
            )
        agg = res.aggregates[0]
        results = {"mean": agg.mean, "iqm": agg.iqm, **{f"boo_{n}": agg.boo_n[n] for n in args.n}}
        intervals = {name: (r.confidence_interval.low, r.confidence_interval.high) for name, r in results.items()}
        for name in list(results):
            intervals[f"{name} percentile"] = percentile_interval(results[name].bootstrap_distribution, 0.95)
            results[f"{name} percentile"] = results[name]
        intervals["mean welch"] = _welch(test, task)
        results["mean welch"] = agg.mean
        for name, result in results.items():
            low, high = intervals[name]
            if np.isnan(low):
                refused[name] += 1
                continue
            hits[name] += low <= truths[name] <= high
            widths[name].append(high - low)
            estimates[name].append(result.estimate)
    return {
        name: cell(hits[name], args.replications - refused[name], widths[name], estimates[name], truths[name])
        for name in names
    }


def cell(hits: int, given: int, widths: list[float], estimates: list[float], truth: float) -> list[float]:
    """One interval's row entry: coverage over the ``given`` intervals (not refused), their mean width, and the
    bias of the estimates in units of their standard deviation; NaN where none was given."""
    if not given:
        return [float("nan"), float("nan"), float("nan"), given]
    spread = float(np.std(estimates, ddof=1))
    bias = (float(np.mean(estimates)) - truth) / spread if spread > 0 else float("nan")
    return [hits / given, float(np.mean(widths)), bias, given]


def cell_text(coverage: float, width: float, bias: float, given: int, replications: int) -> str:
    """A cell as the tables print it: coverage with its Monte Carlo standard error, width and bias."""
    if not given:
        return "refused"
    error = 100 * np.sqrt(coverage * (1 - coverage) / replications)
    return f"{100 * coverage:.1f} ± {error:.1f} % (w {width:.3g}, bias {bias:+.2f})"


def print_row(columns: dict[str, object], row: dict[str, tuple[list[float], str]], replications: int, first: bool):
    """One table row of the labelled ``columns`` and the intervals of ``row`` (name -> (:func:`cell`, method)),
    under a header naming each interval with its method when ``first``."""
    if first:
        named = [f"{name} ({method})" for name, (_, method) in row.items()]
        print("| " + " | ".join([*columns, *named]) + " |")
        print("|" + "---|" * (len(columns) + len(row)))
    cells = [cell_text(*entry, replications) for entry, _ in row.values()]
    print("| " + " | ".join([*map(str, columns.values()), *cells]) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", default="normal,beta")
    parser.add_argument("--runs", default="3,5,10")
    parser.add_argument("--tasks", default="5,20,50")
    parser.add_argument("--n", default="2,5")
    parser.add_argument("--estimator", default="V", choices=["V", "U", "W"])
    parser.add_argument("--tails", default=across.TAILS, choices=["equal-tailed", "symmetric", "farther"])
    args = parser.parse_args()
    across.TAILS = args.tails
    args.n = tuple(int(k) for k in args.n.split(","))
    rng = np.random.default_rng(args.seed)
    print(
        f"95 % intervals of across_tasks ({args.tails} studentized) and candidates, {args.replications} replications"
        f" per cell, {args.resamples} resamples, estimator {args.estimator}, seed {args.seed}; coverage ± its Monte Carlo "
        "standard error, mean width, bias / s.d. of the estimates\n"
    )
    names = _names(args)
    print("| family | tasks | runs per task | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    started = time.perf_counter()
    for family in args.families.split(","):
        for tasks in (int(t) for t in args.tasks.split(",")):
            bench = Benchmark(family, tasks, np.random.default_rng([args.seed, tasks]), args.n)
            for m in (int(r) for r in args.runs.split(",")):
                row = measure(bench, m, args, rng)
                cells = [cell_text(*entry, args.replications) for entry in row.values()]
                print(f"| {family} | {tasks} | {m} | " + " | ".join(cells) + " |", flush=True)
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
