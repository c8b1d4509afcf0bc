"""Populations whose Boo_n is known exactly, and what the estimators and intervals do on them.

Experimental: the toolkit behind ``boontrack simulate`` and the docs' measured tables; its names may change in a
minor release (said in the changelog).

- :mod:`~boontrack.simulate.populations`: named populations, kernel fits of runs;
- :mod:`~boontrack.simulate.coverage`: the coverage of interval methods and the error rates of comparisons;
- :mod:`~boontrack.simulate.study`: the study of Dodge et al. (2021), §3-4, as ``boontrack simulate`` runs it.
"""

from boontrack.simulate.coverage import (
    BandCoverage,
    ComparisonRate,
    CoverageCell,
    SweepIntervals,
    band_coverage,
    comparison_rates,
    coverage,
    sample_comparison,
    sweep_intervals,
)
from boontrack.simulate.populations import POPULATIONS, Population, finite_population, kernel_fit, population
from boontrack.simulate.study import (
    EstimatorError,
    RunsNeeded,
    Study,
    estimator_errors,
    format_study,
    study,
    write_study,
)

__all__ = [
    "POPULATIONS",
    "BandCoverage",
    "ComparisonRate",
    "CoverageCell",
    "EstimatorError",
    "Population",
    "RunsNeeded",
    "Study",
    "SweepIntervals",
    "band_coverage",
    "comparison_rates",
    "coverage",
    "estimator_errors",
    "finite_population",
    "format_study",
    "kernel_fit",
    "population",
    "sample_comparison",
    "study",
    "sweep_intervals",
    "write_study",
]
