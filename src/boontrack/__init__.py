"""boontrack: honest numbers from ML sweeps.

Boo_n (the expected test score of the best-validation model out of n; Bajgar et al., ICML 2018),
expected-validation-performance curves with the V, U and W estimators (Dodge et al. 2019, 2021), bootstrap
intervals and comparisons of score distributions (Reimers & Gurevych 2018), for runs tracked in MLflow or
Weights & Biases.

The public functions are imported lazily, so ``import boontrack`` and the ``boontrack`` command start fast.
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
    WriteBackWarning,
)

__version__ = "0.2.0"

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
    "compare_sources": "boontrack.sources",
    "SourceComparison": "boontrack.sources",
    "Diagnostics": "boontrack.diagnostics",
    "diagnose": "boontrack.diagnostics",
    "RunTable": "boontrack.runtable",
    "Spec": "boontrack.spec",
    "Summary": "boontrack.summary",
    "analyze": "boontrack.analysis",
    "run_job": "boontrack.pipeline",
    "open_source": "boontrack.backends",
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
    "WriteBackWarning",
    "__version__",
    *_LAZY,
]


__getattr__, __dir__ = lazy_exports(globals(), _LAZY)
