"""boontrack: honest numbers from ML sweeps.

Boo_n (the expected test score of the best-validation model out of n; Bajgar et al., ICML 2018),
expected-validation-performance curves with the V, U and W estimators (Dodge et al. 2019, 2021), bootstrap
intervals and comparisons of score distributions (Reimers & Gurevych 2018), for runs tracked in MLflow or
Weights & Biases.

The public functions are imported lazily, so ``import boontrack`` and the ``boontrack`` command start fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from boontrack.exceptions import (
    AccuracyWarning,
    BackendError,
    BoontrackWarning,
    ConstantScoresWarning,
    CoverageWarning,
    ExtrapolationWarning,
    FewRunsWarning,
    InputError,
    WriteBackWarning,
)

__version__ = "0.2.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "boo_n": "estimators",
    "expected_max": "estimators",
    "boo_n_gaussian": "estimators",
    "expected_max_of": "estimators",
    "ConfidenceInterval": "resampling",
    "BootstrapResult": "resampling",
    "CurveBand": "resampling",
    "boo_n_ci": "resampling",
    "boo_n_curve_ci": "resampling",
    "mean_ci": "resampling",
    "coverage_check": "simulate",
    "Comparison": "compare",
    "compare_approaches": "compare",
    "adjust_pvalues": "compare",
    "Diagnostics": "diagnostics",
    "diagnose": "diagnostics",
    "RunTable": "runtable",
    "Spec": "spec",
    "Summary": "analysis",
    "analyze": "analysis",
    "run_job": "pipeline",
    "open_source": "backends",
}

__all__ = [
    "AccuracyWarning",
    "BackendError",
    "BoontrackWarning",
    "ConstantScoresWarning",
    "CoverageWarning",
    "ExtrapolationWarning",
    "FewRunsWarning",
    "InputError",
    "WriteBackWarning",
    "__version__",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"boontrack.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'boontrack' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
