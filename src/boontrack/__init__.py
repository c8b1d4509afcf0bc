"""boontrack: honest numbers from ML sweeps.

Boo_n (the expected test score of the best-validation model out of n; Bajgar et al., ICML 2018),
expected-validation-performance curves with the V, U and W estimators (Dodge et al. 2019, 2021), bootstrap
intervals and comparisons of score distributions (Reimers & Gurevych 2018), for runs tracked in MLflow or
Weights & Biases.

The public functions are imported lazily, so ``import boontrack`` and the ``boontrack`` command start fast.

The stable API is the names of ``boontrack.__all__``, of :mod:`boontrack.integration`'s ``__all__`` (for
backends) and of each integration package's ``__all__`` (``boontrack.mlflow``, ``boontrack_mlflow``, ...),
imported from there: they change only through a deprecation (docs/api/index.md, "Stability"). The modules that
define them (``boontrack.compare``, ``boontrack.resampling``, ...) and their other names are internal, underscore
or not: they import one another's names, so only names used within one module carry an underscore.
:mod:`boontrack.simulate`, :mod:`boontrack.testing` and :mod:`boontrack.across` are experimental.
"""

from __future__ import annotations

from boontrack._lazy import lazy_exports
from boontrack.exceptions import (
    AccuracyWarning,
    BackendError,
    BoontrackWarning,
    ConstantScoresWarning,
    ExtrapolationWarning,
    FewRunsWarning,
    InputError,
    MissingExtraError,
    WriteBackWarning,
)

__version__ = "0.3.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "boo_n": "boontrack.estimators",
    "expected_max": "boontrack.estimators",
    "boo_n_gaussian": "boontrack.estimators",
    "expected_max_of": "boontrack.estimators",
    "ConfidenceInterval": "boontrack.resampling",
    "BootstrapResult": "boontrack.resampling",
    "CurveBand": "boontrack.resampling",
    "boo_n_ci": "boontrack.resampling",
    "boo_n_curve_ci": "boontrack.resampling",
    "mean_ci": "boontrack.resampling",
    "Comparison": "boontrack.compare",
    "compare_approaches": "boontrack.compare",
    "adjust_pvalues": "boontrack.compare",
    "boo_n_difference_ci": "boontrack.compare",
    "mean_difference_ci": "boontrack.compare",
    "independent_difference": "boontrack.compare",
    "WelchResult": "boontrack.compare",
    "PairedTResult": "boontrack.compare",
    "MannWhitneyResult": "boontrack.compare",
    "WilcoxonResult": "boontrack.compare",
    "compare_sources": "boontrack.sources",
    "SourceComparison": "boontrack.sources",
    "Gate": "boontrack.sources",
    "load_comparison": "boontrack.sources",
    "write_comparison": "boontrack.sources",
    "Diagnostics": "boontrack.diagnostics",
    "diagnose": "boontrack.diagnostics",
    "RunTable": "boontrack.runtable",
    "Spec": "boontrack.spec",
    "Summary": "boontrack.summary",
    "analyze": "boontrack.analysis",
    "run_job": "boontrack.pipeline",
    "open_source": "boontrack.backends",
    "format_table": "boontrack.reports",
    "TrainingCurves": "boontrack.training",
    "training_curves": "boontrack.training",
    "write_training_curves": "boontrack.training_output",
}

__all__ = [
    "AccuracyWarning",
    "BackendError",
    "BoontrackWarning",
    "ConstantScoresWarning",
    "ExtrapolationWarning",
    "FewRunsWarning",
    "InputError",
    "MissingExtraError",
    "WriteBackWarning",
    "__version__",
    *_LAZY,
]


__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
