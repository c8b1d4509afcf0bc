"""Benchmark: how often the 95 % intervals of :func:`boontrack.across.across_tasks` that
``bench_across_coverage.py`` leaves out cover: the differences between two groups, the probability of improvement,
the optimality gap, the median over tasks and the performance profile.

Run by hand (not collected by pytest)::

    python tests/benchmarks/bench_across_pairs.py [--replications 300] [--resamples 999] [--seed 0]
        [--families normal,beta,skewnorm] [--runs 3,5,10] [--tasks 5,20] [--n 2] [--shift 0]

The benchmarks are ``bench_across_coverage.py``'s (:class:`bench_across_coverage.Benchmark`). Group A's runs are
drawn from one; group B's from the same, each score plus ``--shift`` (the validation score too, so Boo_n's pick
does not change), independently of A's. The truths, A against B:

- ``Δmean``, ``ΔIQM``, ``ΔBoo_n``: ``-shift`` (each is equivariant under a shift of every score);
- ``P(A > B)``: the mean over tasks of ``P(X - Y > shift)`` for X and Y independent draws of the task's
  distribution: 0.5 at no shift; for the normal family ``Phi(-shift / (sigma_t sqrt 2))``, for the others by
  quadrature of ``int f(x) F(x - shift) dx``;

and of group A alone:

- the optimality gap (gamma = 1): the mean over tasks of ``E[max(1 - X, 0)]`` (normal: ``(1 - mu) Phi(z) + sigma
  phi(z)``, z = (1 - mu) / sigma; beta: 1 - mean; skew-normal: by quadrature);
- the median over tasks of the per-task means: the median of the tasks' true means (the estimator's target; its
  expectation differs at few tasks, which the bias column shows);
- the profile at tau = the mixture's median (truth 0.5: the share of the pooled runs above it).

Each row: coverage with its Monte Carlo standard error, mean width and bias (as ``bench_across_coverage.py``),
each interval as :func:`~boontrack.across.across_tasks` gives it (its ``method``: studentized, or percentile
where none is studentized).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from bench_across_coverage import RHO, Benchmark, cell, print_row  # this folder is on sys.path when run as a script
from scipy import integrate, optimize, special, stats

from boontrack.across import across_tasks
from boontrack.exceptions import ExtrapolationWarning, FewRunsWarning

GAMMA = 1.0


def _task_distributions(bench: Benchmark) -> list:
    if bench.family == "normal":
        return [stats.norm(mu, sigma) for mu, sigma in zip(bench.mu, bench.sigma)]
    if bench.family == "beta":
        return [stats.beta(a, b) for a, b in zip(bench.a, bench.b)]
    return bench.dists


def prob_improvement(bench: Benchmark, shift: float) -> float:
    """The mean over tasks of P(X > Y + shift), X and Y independent draws of the task's distribution."""
    if shift == 0:
        return 0.5
    if bench.family == "normal":
        return float(np.mean(special.ndtr(-shift / (bench.sigma * np.sqrt(2.0)))))
    out = []
    for d in _task_distributions(bench):
        low, high = d.ppf(1e-12), d.ppf(1 - 1e-12)
        out.append(integrate.quad(lambda x, d=d: d.pdf(x) * d.cdf(x - shift), low, high, limit=200)[0])
    return float(np.mean(out))


def optimality_gap(bench: Benchmark) -> float:
    """The mean over tasks of E[max(GAMMA - X, 0)]."""
    if bench.family == "normal":
        z = (GAMMA - bench.mu) / bench.sigma
        return float(np.mean((GAMMA - bench.mu) * special.ndtr(z) + bench.sigma * stats.norm.pdf(z)))
    if bench.family == "beta":
        return GAMMA - bench.mean
    return float(np.mean([d.expect(lambda y: GAMMA - y, ub=GAMMA) for d in bench.dists]))


def task_means(bench: Benchmark) -> np.ndarray:
    return np.array([d.mean() for d in _task_distributions(bench)])


def mixture_median(bench: Benchmark) -> float:
    low, high = (-10.0, 10.0) if bench.family == "normal" else (0.0, 1.0)
    return optimize.brentq(lambda x: bench._cdf(x) - 0.5, low, high, xtol=1e-15)


def seed_sharing(bench: Benchmark, m: int, share: float, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """The normal family's runs of A and B where run i of each task has seed i in both, a seed's effect holding
    ``share`` of each score's variance (the marginals unchanged): test and validation scores of A, of B, and the
    task labels."""
    if bench.family != "normal":
        raise SystemExit("--seed-share draws the normal family only")
    task = np.repeat(np.arange(bench.tasks), m)
    common = rng.standard_normal(task.size)
    drawn = []
    for _ in range(2):
        z1 = np.sqrt(share) * common + np.sqrt(1 - share) * rng.standard_normal(task.size)
        z2 = rng.standard_normal(task.size)
        test = bench.mu[task] + bench.sigma[task] * z1
        val = bench.mu[task] + bench.sigma[task] * (RHO * z1 + np.sqrt(1 - RHO**2) * z2)
        drawn += [test, val]
    return (*drawn, task)


NAMES = ["Δmean", "ΔIQM", "ΔBoo_n", "P(A > B)", "gap", "median", "profile"]


def measure(bench: Benchmark, m: int, args, rng: np.random.Generator) -> dict[str, tuple[list[float], str]]:
    tau = mixture_median(bench)
    truths = {
        "Δmean": -args.shift,
        "ΔIQM": -args.shift,
        "ΔBoo_n": -args.shift,
        "P(A > B)": prob_improvement(bench, args.shift),
        "gap": optimality_gap(bench),
        "median": float(np.median(task_means(bench))),
        "profile": 0.5,
    }
    hits = dict.fromkeys(NAMES, 0)
    refused = dict.fromkeys(NAMES, 0)
    widths: dict[str, list[float]] = {name: [] for name in NAMES}
    estimates: dict[str, list[float]] = {name: [] for name in NAMES}
    methods: dict[str, str] = {}
    for _ in range(args.replications):
        if args.seed_share > 0:
            test_a, val_a, test_b, val_b, task = seed_sharing(bench, m, args.seed_share, rng)
        else:
            (test_a, val_a, task), (test_b, val_b, _) = bench.draw(m, rng), bench.draw(m, rng)
        test = np.r_[test_a, test_b + args.shift]
        val = None if val_a is None else np.r_[val_a, val_b + args.shift]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ExtrapolationWarning)
            warnings.simplefilter("ignore", FewRunsWarning)
            res = across_tasks(
                test,
                task=np.r_[task, task],
                group=np.repeat(["A", "B"], task.size),
                validation=val,
                maximize=True,
                n=args.n,
                tau=[tau],
                n_resamples=args.resamples,
                rng=rng,
                seed=np.tile(np.arange(m), 2 * bench.tasks) if args.paired else None,
            )
        a, pair = res.aggregates["A"], res.compare("A", "B")
        results = {
            "Δmean": pair.mean_difference,
            "ΔIQM": pair.iqm_difference,
            "ΔBoo_n": pair.boo_n_difference[args.n],
            "P(A > B)": pair.prob_improvement,
            "gap": a.optimality_gap,
            "median": a.median,
        }
        intervals = {name: (r.confidence_interval.low, r.confidence_interval.high) for name, r in results.items()}
        points = {name: r.estimate for name, r in results.items()}
        methods.update({name: r.method for name, r in results.items()})
        intervals["profile"] = (a.profile.low[0], a.profile.high[0])
        points["profile"] = a.profile.share[0]
        methods["profile"] = "percentile"
        for name in NAMES:
            low, high = intervals[name]
            if np.isnan(low):
                refused[name] += 1
                continue
            hits[name] += low <= truths[name] <= high
            widths[name].append(high - low)
            estimates[name].append(points[name])
    rows = {}
    for name in NAMES:
        entry = cell(hits[name], args.replications - refused[name], widths[name], estimates[name], truths[name])
        rows[name] = (entry, methods.get(name, ""))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replications", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--families", default="normal,beta,skewnorm")
    parser.add_argument("--runs", default="3,5,10")
    parser.add_argument("--tasks", default="5,20")
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--shift", type=float, default=0.0)
    parser.add_argument("--paired", action="store_true", help="give across_tasks the seeds: run i is seed i")
    parser.add_argument("--seed-share", type=float, default=0.0, help="normal family: the seed's share of variance")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"95 % intervals of across_tasks, {args.replications} replications per cell, {args.resamples} resamples, "
        f"B = A + {args.shift:g}, Boo_{args.n}, seed {args.seed}, seeds' share of variance {args.seed_share:g}, "
        f"{'paired' if args.paired else 'drawn apart'}; coverage ± its Monte Carlo standard error, mean "
        "width, bias / s.d. of the estimates; the method under each name\n"
    )
    started = time.perf_counter()
    first = True
    for family in args.families.split(","):
        for tasks in (int(t) for t in args.tasks.split(",")):
            bench = Benchmark(family, tasks, np.random.default_rng([args.seed, tasks]), (args.n,))
            for m in (int(r) for r in args.runs.split(",")):
                columns = {"family": family, "tasks": tasks, "runs per task": m}
                print_row(columns, measure(bench, m, args, rng), args.replications, first)
                first = False
    print(f"\n{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
