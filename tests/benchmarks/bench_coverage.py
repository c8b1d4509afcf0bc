"""Benchmark: actual coverage of 95 % intervals of Boo_n on a suite of populations whose Boo_n is known exactly.

Run by hand (not collected by pytest; about an hour on two busy cores, run it under ``nice``)::

    python tests/benchmarks/bench_coverage.py [--replications 1000] [--resamples 999] [--seed 0] [--only TEXT]
        [--no-bands | --bands-only | --doubts-only | --flags-only] [--populations START:STOP] [--runs 10,20,50,100]
        [--budgets 1,5,10] [--candidate METHOD] [--held-out | --fresh]

Prints the Markdown tables of the "Honest intervals" page of the docs (docs/statistics/intervals.md):

1. For each population, m = 10, 20, 50, 100 runs and budget n in 1, 5, 10 with n <= m/2: the share of simulated
   sweeps whose interval contains the true Boo_n (estimator V), for the default method and for the percentile
   method on the same resamples, and the default's median width ÷ that of the narrowest method covering at least
   93 % in the cell (of the default, ``studentized-u`` and ``percentile`` on the same resamples, and
   ``studentized-u-k-of-m`` on its own), then a line for each of these methods: the median coverage, the cells
   below 93 % and above 97.5 %, and its width ratios to that narrowest method. Scores whose every value lies in [0, 1]
   get the bounds [0, 1], as a summary gives them. The populations: normal with validation-test correlation
   0.1, 0.5 and 0.95; the validation curve (test = validation); left-skewed below a ceiling; 10 % and 20 %
   diverged runs; accuracies on 200 examples (ties); two long tails (log-normal, and left-skewed with skewness
   -6.2); and every published table of ``../shared/data`` as a finite population, its runs drawn with
   replacement (:func:`boontrack.simulate.finite_population`).
2. For the diverged runs: the coverage among the sweeps that hold no diverged run and among those that hold
   one, and how many sweeps hold none: what no resampling can see.
3. For the published tables whose default falls below 93 %: the coverage among the sweeps that hold the
   table's best run by validation score and among those that do not; the same for its worst 5 % of runs by test
   score; and, for each such cell with n > 1, the same for the table's two decisive runs at that n (the two whose
   leaving out moves its Boo_n most), with the coverage, in the sweeps that hold neither, of the Boo_n of the
   table without them: the population those sweeps are drawn from as far as they can tell.
4. How often the pointwise and the simultaneous band of the default method hold the whole true curve over
   n = 1..m/2 (and the percentile method's, for the validation curve).
5. The doubts a summary marks: fewer than 8 runs (m = 4, 6, 8) and budgets above m/2 (the validation curve at
   n = m/2 + 1 .. m), where the warnings quote these figures.

``--flags-only`` measures instead whether a per-sweep doubt predicts misses: test scores with a long tail on the
better side (sample skewness above ``LONG_TAIL_SKEWNESS``), a rule summaries applied until this measurement
showed it did not (see :mod:`boontrack._bootstrap.doubts`). Per population and pooled over the suite: the share of
sweeps it flags and the default's coverage among the flagged and the other sweeps (every budget of every cell
counted once).

``--only TEXT`` keeps the populations whose label contains TEXT (a quick look at a few cells); ``--populations
START:STOP`` runs a slice of the suite (to share a run out between processes: each cell keeps its seed);
``--runs`` and ``--budgets`` set the numbers of runs m and the budgets n (n <= m/2 are kept; each cell keeps its
seed).

``--held-out`` measures populations the methods were not chosen on instead of the suite (other correlations,
tails, ties and failure rates; run it with another ``--seed``): the check of whether the suite's figures carry over.
``--fresh`` measures families neither uses (:mod:`fresh_populations`: heavy tails on both sides, bounded uniform
scores, several configurations, validation that overfits, heavier ties, rarer failures); run it with other
``--runs``, ``--budgets`` and ``--seed`` too.

``--candidate METHOD`` prints, instead of the tables, one row per cell comparing an interval method with the
default on the same sweeps (and the same resamples where the candidate's resampling gives the default's:
:func:`boontrack.simulate.sweep_intervals`): coverage with its binomial standard error and median width of each,
the candidate's width ÷ the default's, then the percentile method's coverage. With ``--bands-only`` it adds the
candidate's bands to table 4.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the published tables' loaders

from fresh_populations import fresh  # noqa: E402
from published_runs import SHARED_DATA, load_all  # noqa: E402

from boontrack import boo_n  # noqa: E402
from boontrack.simulate import band_coverage, finite_population, population, sweep_intervals  # noqa: E402
from boontrack.spec import DEFAULT_CI_METHOD  # noqa: E402

RUNS = (10, 20, 50, 100)
BUDGETS = (1, 5, 10)
#: Diverged runs of the suite fall this many standard deviations below the others (a sweep holds one when a score
#: lies half as far below).
GAP = 20.0


def synthetic() -> list[tuple[str, object]]:
    return [
        ("normal, val/test correlation 0.1", population("normal", rho=0.1)),
        ("normal, val/test correlation 0.5", population("normal", rho=0.5)),
        ("normal, val/test correlation 0.95", population("normal", rho=0.95)),
        ("validation curve (normal, test = validation)", population("normal", rho=1.0)),
        ("left-skewed below a ceiling (accuracy ≤ 1)", population("left_skewed", sigma=0.5, ceiling=1, scale=0.03)),
        ("10 % diverged runs", population("diverged", share=0.10, gap=GAP)),
        ("20 % diverged runs", population("diverged", share=0.20, gap=GAP)),
        ("accuracy on 200 examples (beta-binomial, ties)", population("beta_binomial", trials=200)),
        ("long right tail (log-normal)", population("lognormal")),
        ("long left tail (skewness -6.2)", population("left_skewed")),
    ]


def held_out() -> list[tuple[str, object]]:
    """Populations the interval methods were not chosen on (``--held-out``, with a seed other than the suite's):
    other correlations, a milder and a steeper tail, other grids of ties, rarer and commoner failures."""
    return [
        ("normal, val/test correlation 0.3", population("normal", rho=0.3)),
        ("normal, val/test correlation 0.8", population("normal", rho=0.8)),
        ("mild right tail (log-normal, sigma 0.5)", population("lognormal", sigma=0.5)),
        (
            "left-skewed below a ceiling, correlation 0.8",
            population("left_skewed", sigma=0.7, rho=0.8, ceiling=1, scale=0.05),
        ),
        ("accuracy on 100 examples (beta-binomial 8, 2)", population("beta_binomial", a=8, b=2, trials=100)),
        ("5 % diverged runs, 10 sd below", population("diverged", share=0.05, gap=10)),
        ("30 % diverged runs, 5 sd below", population("diverged", share=0.30, gap=5)),
    ]


def published() -> list[tuple[str, object]]:
    if not SHARED_DATA.is_dir():
        print(f"published tables not found at {SHARED_DATA}: left out", file=sys.stderr)
        return []
    return [
        (
            f"{label} ({runs.val.size} runs{'' if runs.val is not runs.test else ', validation'})",
            finite_population(runs.val, runs.test),
        )
        for label, runs in load_all().items()
    ]


def percent(x: float) -> str:
    return f"{100 * x:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="keep the populations whose label contains this")
    parser.add_argument("--no-bands", action="store_true", help="leave out the bands (table 4)")
    parser.add_argument("--bands-only", action="store_true", help="measure the bands (table 4) alone")
    parser.add_argument("--doubts-only", action="store_true", help="measure the doubts (table 5) alone")
    parser.add_argument("--flags-only", action="store_true", help="whether the long-tail doubt predicts misses")
    parser.add_argument("--runs", default=",".join(map(str, RUNS)), help="numbers of runs m, comma-separated")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="budgets n, comma-separated")
    parser.add_argument("--candidate", default="", help="compare this interval method with the default, cell by cell")
    parser.add_argument(
        "--held-out", action="store_true", help="the held-out populations instead of the suite (use another --seed)"
    )
    parser.add_argument("--fresh", action="store_true", help="families neither the suite nor --held-out uses")
    parser.add_argument(
        "--populations", default=":", help="START:STOP, a slice of the suite (each keeps the seeds of the whole run)"
    )
    options = parser.parse_args()
    kept = slice(*(int(end) if end else None for end in options.populations.split(":")))
    chosen = held_out() if options.held_out else fresh() if options.fresh else synthetic() + published()
    indexed = list(enumerate(chosen))[kept]
    populations = [(index, label, pop) for index, (label, pop) in indexed if options.only in label]
    options.runs = tuple(int(m) for m in options.runs.split(","))
    options.budgets = tuple(int(n) for n in options.budgets.split(","))
    if options.bands_only:
        bands(populations, options)
        return
    if options.candidate:
        candidate(populations, options)
        return
    if options.doubts_only:
        doubts(options)
        return
    if options.flags_only:
        flags(populations, options)
        return
    start = time.perf_counter()

    print(f"| population | m | n = {' | n = '.join(map(str, options.budgets))} |")
    print("|---|---|" + "---|" * len(options.budgets))
    low, absent_rows, best_rows, worst_rows, decisive_rows = [], [], [], [], []
    measured = (DEFAULT_CI_METHOD, *NARROWER)
    coverages: dict[str, list[float]] = {method: [] for method in measured}
    ratios: dict[str, list[float]] = {method: [] for method in measured}
    for label, pop, m, budgets, sweeps in suite_sweeps(populations, options, measured):
        cells = {(c.method, c.n): c for c in sweeps.cells()}
        row = []
        for n in budgets:
            default, plain = cells[DEFAULT_CI_METHOD, n], cells["percentile", n]
            narrowest = narrowest_covering([cells[method, n] for method in measured])
            for method in measured:
                coverages[method].append(cells[method, n].coverage)
                ratios[method].append(cells[method, n].median_width / narrowest)
            ratio = default.median_width / narrowest
            row.append(f"{percent(default.coverage)} / {percent(plain.coverage)} ({ratio:.2f}×)")
            if default.coverage < 0.93:
                low.append(f"{label}, m = {m}, n = {n}: {percent(default.coverage)} %")
        row += ["—"] * (len(options.budgets) - len(budgets))
        print(f"| {label} | {m} | {' | '.join(row)} |", flush=True)
        if pop.name == "diverged":
            diverged = sweeps.val < -pop.parameters["gap"] / 2  # the failures sit gap sd below the runs
            absent_rows.append(split_row(label, m, sweeps, ~diverged.any(axis=1)))
        if pop.name == "finite" and min(c.coverage for c in cells.values() if c.method == DEFAULT_CI_METHOD) < 0.93:
            best_rows.append(split_row(label, m, sweeps, without_best_run(sweeps, pop)))
            worst_rows.append(split_row(label, m, sweeps, without_worst_runs(sweeps, pop)))
            decisive_rows += [
                decisive_row(label, m, n, sweeps, pop)
                for n in budgets
                if n > 1 and cells[DEFAULT_CI_METHOD, n].coverage < 0.93 and pop._runs[0].size <= DECISIVE_TABLE
            ]
    main_time = time.perf_counter() - start
    print(
        f"\nCells: default / percentile coverage in % (median width of the default ÷ that of the narrowest method "
        f"covering at least 93 % there, of {', '.join(('the default', *NARROWER))}); "
        f"{options.replications} sweeps per cell, {options.resamples} resamples per interval, nominal 95 %, "
        f"estimator V; a coverage's standard error is about "
        f"{100 * (0.05 * 0.95 / options.replications) ** 0.5:.1f} points ({main_time / 60:.0f} min)."
    )
    for method in measured:
        print(f"\n{method}: " + summary_line(np.array(coverages[method]), np.array(ratios[method])))
    print("\nDefault below 93 %: " + ("; ".join(low) if low else "none") + ".")
    print_splits(options.budgets, absent_rows, best_rows, worst_rows, decisive_rows)
    if not options.no_bands:
        bands(populations, options)
    if not options.only and options.populations == ":" and not (options.held_out or options.fresh):
        doubts(options)
    print(f"\nTotal: {(time.perf_counter() - start) / 60:.0f} min.")


#: The methods whose widths the default's is held against, each measured on the same sweeps: the narrowest of
#: them (the default included) that covers at least 93 % in a cell sets the width the default is worth there.
NARROWER = ("studentized-u", "studentized-u-k-of-m", "percentile")


def narrowest_covering(cells: list) -> float:
    """The median width of the narrowest of these cells' methods covering at least 93 % (NaN if none does)."""
    widths = [cell.median_width for cell in cells if cell.coverage >= 0.93]
    return min(widths) if widths else float("nan")


def summary_line(coverages: np.ndarray, ratios: np.ndarray) -> str:
    """The table's cells in a line: the median coverage, how many fall outside 93-97.5 %, and the widths."""
    return (
        f"{coverages.size} cells: median coverage {percent(float(np.median(coverages)))} %; "
        f"{int((coverages < 0.93).sum())} below 93 % ({int((coverages < 0.90).sum())} below 90 %), "
        f"{int((coverages > 0.975).sum())} above 97.5 %; width ÷ the narrowest covering at least 93 %: median "
        f"{np.nanmedian(ratios):.2f}, above 1.25 in {int((ratios > 1.25).sum())}, at most {np.nanmax(ratios):.2f}."
    )


def print_splits(budgets, absent_rows: list, best_rows: list, worst_rows: list, decisive_rows: list) -> None:
    """The tables that split a cell's sweeps by whether they hold a kind of run (see the module's docstring)."""
    coverage = f"default coverage there, n = {' / '.join(map(str, budgets))}"
    split = "|---|---|---|---|---|"
    if absent_rows:
        print(f"\n| population | m | sweeps without a diverged run | {coverage} | in the sweeps with one |\n{split}")
        print("\n".join(absent_rows))
    if best_rows:
        print(f"\n| table | m | sweeps without the table's best run | {coverage} | in the sweeps with it |\n{split}")
        print("\n".join(best_rows))
        worst = f"sweeps without the table's worst {100 * WORST_SHARE:.0f} % of runs"
        print(f"\n| table | m | {worst} | {coverage} | in the sweeps with one |\n{split}")
        print("\n".join(worst_rows))
    if decisive_rows:
        print(
            "\n| table | m | n | its two decisive runs: rank by validation, test score (Boo_n moves by) | sweeps "
            "without either | default coverage there | in the sweeps with one | Boo_n without them | its coverage "
            "there | distance ÷ median width there |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|")
        print("\n".join(decisive_rows))


def suite_sweeps(populations: list, options: argparse.Namespace, methods=(DEFAULT_CI_METHOD, "percentile")):
    """The sweeps of each cell, population by population and m by m: (label, population, m, budgets, sweeps).
    Each cell keeps its seed, [seed, the population's place in the suite, m]."""
    for index, label, pop in populations:
        for m in options.runs:
            budgets = [n for n in options.budgets if n <= m / 2]
            sweeps = sweep_intervals(
                pop,
                m=m,
                n=budgets,
                methods=methods,
                replications=options.replications,
                n_resamples=options.resamples,
                rng=np.random.default_rng([options.seed, index, m]),
            )
            yield label, pop, m, budgets, sweeps


def candidate(populations: list, options: argparse.Namespace) -> None:
    """One row per cell: the default and ``options.candidate`` on the same sweeps (see the module's docstring)."""
    start = time.perf_counter()
    method = options.candidate
    print(
        f"| population | m | n | default coverage % | default width | {method} coverage % | its width "
        "| width ÷ default | percentile % |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, _, m, budgets, sweeps in suite_sweeps(populations, options, (DEFAULT_CI_METHOD, method, "percentile")):
        cells = {(c.method, c.n): c for c in sweeps.cells()}
        for n in budgets:
            default, tried, plain = cells[DEFAULT_CI_METHOD, n], cells[method, n], cells["percentile", n]
            print(
                f"| {label} | {m} | {n} | {percent(default.coverage)} ± {percent(default.coverage_se)} "
                f"| {default.median_width:.4g} | {percent(tried.coverage)} ± {percent(tried.coverage_se)} "
                f"| {tried.median_width:.4g} | {tried.median_width / default.median_width:.2f} "
                f"| {percent(plain.coverage)} |",
                flush=True,
            )
    print(
        f"\n{options.replications} sweeps per cell, {options.resamples} resamples per interval, nominal 95 %, "
        f"estimator V; ± one binomial standard error ({(time.perf_counter() - start) / 60:.0f} min)."
    )


#: The share of a published table's worst runs (by test score) that stands for its failure mode.
WORST_SHARE = 0.05


def split_row(label: str, m: int, sweeps, absent: np.ndarray) -> str:
    """The default's coverage among the sweeps where a kind of run is ``absent`` and among the others."""
    parts = []
    for chosen in (absent, ~absent):
        cells = [c for c in sweeps.cells(chosen) if c.method == DEFAULT_CI_METHOD]
        parts.append(" / ".join(percent(c.coverage) if c.replications else "—" for c in cells))
    return f"| {label} | {m} | {percent(absent.mean())} % | {parts[0]} | {parts[1]} |"


def without_best_run(sweeps, pop) -> np.ndarray:
    """The sweeps that do not hold the table's best run by validation score."""
    return ~(sweeps.val == pop._runs[0].max()).any(axis=1)


def without_worst_runs(sweeps, pop) -> np.ndarray:
    """The sweeps that hold none of the table's worst WORST_SHARE of runs by test score (its failures)."""
    test = pop._runs[1]
    return ~(sweeps.test <= np.quantile(test, WORST_SHARE, method="inverted_cdf")).any(axis=1)


#: How many of a table's runs a decisive-run row names: the two whose leaving out moves its Boo_n most.
DECISIVE_RUNS = 2
#: The largest table whose decisive runs are looked for: leaving out each run in turn costs runs squared (the
#: published tables hold 50-370 runs; the fresh families' tables of 200,000 draws have no decisive run).
DECISIVE_TABLE = 10_000


def decisive_runs(pop, n: int) -> tuple[np.ndarray, np.ndarray, float]:
    """The table's DECISIVE_RUNS runs whose leaving out moves its Boo_n at ``n`` most (indices), how far leaving
    each out moves it (Boo_n minus Boo_n without the run), and the Boo_n of the table without them all."""
    val, test = pop._runs
    truth = boo_n(val, test, n=n)
    moves = np.array([truth - boo_n(np.delete(val, i), np.delete(test, i), n=n) for i in range(val.size)])
    decisive = np.argsort(-np.abs(moves), kind="stable")[:DECISIVE_RUNS]
    return decisive, moves[decisive], float(boo_n(np.delete(val, decisive), np.delete(test, decisive), n=n))


def decisive_row(label: str, m: int, n: int, sweeps, pop) -> str:
    """The default's coverage at ``n`` among the sweeps that hold none of the table's decisive runs and among the
    others, and how it covers there the Boo_n of the table without them."""
    val, test = pop._runs
    decisive, moves, without = decisive_runs(pop, n)
    held = np.zeros(sweeps.val.shape[0], bool)
    for i in decisive:  # a run is known by its pair of scores
        held |= ((sweeps.val == val[i]) & (sweeps.test == test[i])).any(axis=1)
    column = int(np.flatnonzero(sweeps.budgets == n)[0])
    low, high = sweeps.low[DEFAULT_CI_METHOD][:, column], sweeps.high[DEFAULT_CI_METHOD][:, column]
    truth = sweeps.truth[column]
    covered, covered_without = (low <= truth) & (truth <= high), (low <= without) & (without <= high)
    rank = np.argsort(np.argsort(-val, kind="stable"), kind="stable") + 1
    runs = "; ".join(f"{rank[i]}, {test[i]:.4g} ({move:+.2g})" for i, move in zip(decisive, moves))
    if not (~held).any():
        return f"| {label} | {m} | {n} | {runs} | 0.0 % | — | {percent(covered.mean())} % | {without:.4g} | — | — |"
    distance = (truth - without) / np.median((high - low)[~held])
    return (
        f"| {label} | {m} | {n} | {runs} | {percent((~held).mean())} % | {percent(covered[~held].mean())} % "
        f"| {percent(covered[held].mean()) if held.any() else '—'} % | {without:.4g} "
        f"| {percent(covered_without[~held].mean())} % | {distance:+.2f} |"
    )


def doubts(options: argparse.Namespace) -> None:
    """The figures the FewRunsWarning quotes: few runs, and budgets above m/2."""
    start = time.perf_counter()
    print("\n| population | m | n | default | percentile | width default / percentile |")
    print("|---|---|---|---|---|---|")
    few = [
        ("normal, val/test correlation 0.5", population("normal")),
        ("accuracy on 200 examples", population("beta_binomial", trials=200)),
    ]
    for index, (label, pop) in enumerate(few):
        for m in (4, 6, 8):
            budgets = [n for n in (1, 2, 3, 4) if n <= m / 2]
            rows(label, m, budgets, pop, options, [options.seed, 100 + index, m], options.replications)
    above = population("normal", rho=1.0)
    for m in (10, 20, 50):
        budgets = list(range(m // 2 + 1, m + 1))
        rows("validation curve, n > m/2", m, budgets, above, options, [options.seed, 200, m], options.replications // 3)
    print(
        f"\n({(time.perf_counter() - start) / 60:.0f} min; the rows above m/2 summarise n = m/2 + 1 .. m: "
        f"the range of the coverages and of the width ratios, {options.replications // 3} sweeps.)"
    )


#: Sample skewness (biased, g1) of a sweep's test scores above which ``--flags-only`` flags it.
LONG_TAIL_SKEWNESS = 1.0


def flags(populations: list, options: argparse.Namespace) -> None:
    """Whether sweeps flagged with a long tail on the better side miss more often than the others (see the module's
    docstring): per population, pooled over its cells, then over the suite."""
    start = time.perf_counter()
    print("| population | sweeps flagged | default coverage, flagged | the others | misses, flagged ÷ others |")
    print("|---|---|---|---|---|")
    total = np.zeros(4)
    for label, counts in flag_counts(populations, options):
        print(flag_row(label, counts), flush=True)
        total += counts
    print(flag_row("**the suite, pooled**", total))
    print(
        f"\n{options.replications} sweeps per cell, m = {', '.join(map(str, options.runs))}, n = 1, 5, 10 with "
        f"n <= m/2; coverage over (sweep, budget) pairs ({(time.perf_counter() - start) / 60:.0f} min)."
    )


def flag_counts(populations: list, options: argparse.Namespace):
    """(label, [flagged pairs, their misses, other pairs, their misses]) per population."""
    current, counts = None, np.zeros(4)
    for label, _, _, budgets, sweeps in suite_sweeps(populations, options, (DEFAULT_CI_METHOD,)):
        if label != current and current is not None:
            yield current, counts
            counts = np.zeros(4)
        current = label
        flagged = skewness(sweeps.test) > LONG_TAIL_SKEWNESS
        missed = ~sweeps.covered(DEFAULT_CI_METHOD)
        counts += [
            flagged.sum() * len(budgets),
            missed[flagged].sum(),
            (~flagged).sum() * len(budgets),
            missed[~flagged].sum(),
        ]
    if current is not None:
        yield current, counts


def skewness(scores: np.ndarray) -> np.ndarray:
    """Sample skewness (biased, g1) of each row; 0 for a constant row."""
    centred = scores - scores.mean(axis=1, keepdims=True)
    spread = np.mean(centred**2, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(spread > 0, np.mean(centred**3, axis=1) / spread**1.5, 0.0)


def flag_row(label: str, counts: np.ndarray) -> str:
    flagged, flagged_misses, others, other_misses = counts
    share = flagged / (flagged + others)
    cover = [
        f"{percent(1 - misses / pairs)} %" if pairs else "—"
        for pairs, misses in ((flagged, flagged_misses), (others, other_misses))
    ]
    if flagged and others and other_misses:
        ratio = f"{(flagged_misses / flagged) / (other_misses / others):.1f}"
    else:
        ratio = "—"
    return f"| {label} | {percent(share)} % | {cover[0]} | {cover[1]} | {ratio} |"


def rows(label: str, m: int, budgets: list[int], pop, options, seed, replications: int) -> None:
    sweeps = sweep_intervals(
        pop, m=m, n=budgets, replications=replications, n_resamples=options.resamples, rng=np.random.default_rng(seed)
    )
    cells = {(c.method, c.n): c for c in sweeps.cells()}
    if len(budgets) <= 4:
        for n in budgets:
            default, plain = cells[DEFAULT_CI_METHOD, n], cells["percentile", n]
            print(
                f"| {label} | {m} | {n} | {percent(default.coverage)} % | {percent(plain.coverage)} % "
                f"| {default.median_width / plain.median_width:.2f} |",
                flush=True,
            )
        return
    default = [cells[DEFAULT_CI_METHOD, n].coverage for n in budgets]
    plain = [cells["percentile", n].coverage for n in budgets]
    ratio = [cells[DEFAULT_CI_METHOD, n].median_width / cells["percentile", n].median_width for n in budgets]
    print(
        f"| {label} | {m} | {budgets[0]}-{budgets[-1]} | {percent(min(default))}-{percent(max(default))} % "
        f"| {percent(min(plain))}-{percent(max(plain))} % | {min(ratio):.1f}-{max(ratio):.1f} |",
        flush=True,
    )


#: Populations whose bands are measured (labels as above), and the numbers of runs.
BAND_POPULATIONS = (
    "validation curve (normal, test = validation)",
    "normal, val/test correlation 0.95",
    "accuracy on 200 examples (beta-binomial, ties)",
    "CIFAR-100 ResNet",
    "SciTail simple_overlap",
)
BAND_RUNS = (20, 50)


def bands(populations: list, options: argparse.Namespace) -> None:
    start = time.perf_counter()
    print("\n| curve | m | method | pointwise band | simultaneous band | width simultaneous / pointwise |")
    print("|---|---|---|---|---|---|")
    for index, label, pop in populations:
        if not any(label.startswith(name) for name in BAND_POPULATIONS):
            continue
        methods = (DEFAULT_CI_METHOD, "percentile") if label.startswith("validation curve") else (DEFAULT_CI_METHOD,)
        methods += (options.candidate,) if options.candidate else ()
        for m in BAND_RUNS:
            for method in methods:
                band = band_coverage(
                    pop,
                    m=m,
                    method=method,
                    replications=options.replications,
                    n_resamples=options.resamples,
                    rng=np.random.default_rng([options.seed, index, m, 1]),
                )
                print(
                    f"| {label} | {m} | {method} | {percent(band.pointwise)} % | {percent(band.simultaneous)} % "
                    f"| {band.width_ratio:.2f} |",
                    flush=True,
                )
    print(
        f"\n{options.replications} sweeps per row, jointly over n = 1..m/2, {options.resamples} resamples "
        f"({(time.perf_counter() - start) / 60:.0f} min)."
    )


if __name__ == "__main__":
    main()
