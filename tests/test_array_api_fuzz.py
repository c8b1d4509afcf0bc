"""Every public function of ``boontrack.__all__`` that takes arrays, on any input (hypothesis): it gives a finite
answer (within the data's range, where that is the answer's range), or refuses with a ValueError, or says why a
number is missing with one of the package's warnings. Never a silent NaN or inf, never an unrelated exception.

The inputs mix ordinary scores with the corners that broke it once: magnitudes near the largest double,
subnormal numbers, ties, constant scores, complex numbers, NaN and inf.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import boontrack as bt
from boontrack import BoontrackWarning
from boontrack._validation import MAX_MAGNITUDE
from boontrack.across import across_tasks

LARGEST = np.finfo(np.float64).max
SMALLEST_SUBNORMAL = 5e-324

#: A score every function must take: ordinary, tied, at the largest accepted magnitude, or subnormal.
accepted = st.one_of(
    st.floats(-1.0, 1.0),
    st.sampled_from([0.0, 0.5, 0.5, 1.0]),
    st.floats(-MAX_MAGNITUDE, MAX_MAGNITUDE),
    st.floats(SMALLEST_SUBNORMAL, 1e-300).flatmap(lambda x: st.sampled_from([x, -x])),
)
#: A score that must be refused: near the largest double, not finite, or complex.
refused = st.one_of(
    st.floats(0.9 * LARGEST, LARGEST).flatmap(lambda x: st.sampled_from([x, -x])),
    st.sampled_from([np.nan, np.inf, -np.inf]),
    st.complex_numbers(max_magnitude=10.0, allow_nan=False).filter(lambda z: z.imag != 0),
)
#: Half the time every score is accepted, half the time some may not be.
runs = st.one_of(
    st.lists(accepted, min_size=0, max_size=12), st.lists(st.one_of(accepted, refused), min_size=0, max_size=12)
)
budgets = st.one_of(st.integers(1, 6), st.lists(st.integers(1, 6), min_size=1, max_size=3))
rngs = st.integers(0, 2**32 - 1)
FAST = {"n_resamples": 40}


def _as_array(values: list) -> np.ndarray:
    return np.array(values, dtype=complex if any(isinstance(v, complex) for v in values) else float)


#: Result fields that restate an input, not a computed number: the scores' bounds are infinite where there are none.
_GIVEN_FIELDS = frozenset({"bounds"})


def _numbers(result: Any) -> list[float]:
    """Every number a result computed (dataclass fields, arrays, tuples), as floats."""
    if isinstance(result, (bool, np.bool_, str)) or result is None:
        return []
    if dataclasses.is_dataclass(result):
        fields = [f.name for f in dataclasses.fields(result) if f.name not in _GIVEN_FIELDS]
        return [x for name in fields for x in _numbers(getattr(result, name))]
    if isinstance(result, dict):
        return [x for value in result.values() for x in _numbers(value)]
    if isinstance(result, (list, tuple)):
        return [x for item in result for x in _numbers(item)]
    if isinstance(result, np.ndarray):
        return [] if result.dtype.kind not in "fiu" else result.astype(float).ravel().tolist()
    if isinstance(result, (int, float, np.integer, np.floating)):
        return [float(result)]
    return []


def _outcome(call: Callable[[], Any]) -> tuple[Any, list[warnings.WarningMessage]]:
    """The call's result (None when it refused with ValueError) and the warnings it gave; anything else fails."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = call()
        except ValueError:
            return None, list(caught)
    return result, list(caught)


def _said(result: Any, caught: list[warnings.WarningMessage]) -> bool:
    """Whether the call said why a number may be missing: one of the package's warnings, or the result's own
    ``warnings`` or ``skipped`` field (diagnostics and coverage checks carry their reasons)."""
    own = [getattr(result, name, None) for name in ("warnings", "skipped")]
    return any(issubclass(w.category, BoontrackWarning) for w in caught) or any(own)


def _check(call: Callable[[], Any], low: float | None = None, high: float | None = None) -> Any:
    result, caught = _outcome(call)
    dropped = [w for w in caught if issubclass(w.category, np.exceptions.ComplexWarning)]
    assert not dropped, "an imaginary part was dropped"
    if result is None:
        return None
    said = _said(result, caught)
    numbers = _numbers(result)
    assert all(math.isfinite(x) for x in numbers) or said, f"silent non-finite number in {result!r}"
    if low is not None and high is not None:
        estimates = np.atleast_1d(np.asarray(result, dtype=float))
        assert np.all((estimates >= low) & (estimates <= high)), (estimates, low, high)
    return result


def _real(values: list) -> np.ndarray | None:
    """The values as a float array when they are all real numbers of accepted magnitude (inputs that a function
    must take)."""
    if any(isinstance(v, complex) for v in values):
        return None
    array = np.array(values, dtype=float)
    return array if array.size and np.all(np.abs(array) <= MAX_MAGNITUDE) else None


settings_ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings_
@given(runs, runs, budgets, st.sampled_from(["V", "U", "W"]), st.booleans())
@example(val=[0.0, -0.97265625, -0.97265625], test=[-0.97265625], n=6, estimator="V", maximize=False)  # an ulp out
def test_boo_n(val, test, n, estimator, maximize):
    v, t = _as_array(val), _as_array(test[: len(val)] + val[len(test) :])
    real = _real(val) is not None and _real(list(t)) is not None
    bounds = (t.real.min(), t.real.max()) if real else (None, None)
    result = _check(lambda: bt.boo_n(v, t, n=n, estimator=estimator, maximize=maximize), *bounds)
    if real and estimator != "U":
        assert result is not None, "finite real scores refused"


@settings_
@given(runs, st.one_of(st.none(), budgets))
def test_expected_max(scores, n):
    s = _as_array(scores)
    real = _real(scores)
    bounds = (real.min(), real.max()) if real is not None else (None, None)
    result = _check(lambda: bt.expected_max(s, n), *bounds)
    if real is not None:
        assert result is not None, "finite real scores refused"


@settings_
@given(runs, runs, budgets)
@example(val=[0.0, 5e-324], test=[], n=1)  # deviations whose squares underflow: the correlation was 0 / 0
def test_boo_n_gaussian(val, test, n):
    v, t = _as_array(val), _as_array(test[: len(val)] + val[len(test) :])
    _check(lambda: bt.boo_n_gaussian(v, t, n=n))


@settings_
@given(runs, runs, st.integers(1, 4), st.sampled_from(["percentile", "bca", "studentized", "smoothed"]), rngs)
def test_boo_n_ci(val, test, n, method, seed):
    v, t = _as_array(val), _as_array(test[: len(val)] + val[len(test) :])
    result = _check(lambda: bt.boo_n_ci(v, t, n=n, method=method, rng=seed, **FAST))
    if result is not None and all(math.isfinite(x) for x in _numbers(result)):
        assert result.confidence_interval.low <= result.confidence_interval.high


@settings_
@given(runs, st.sampled_from(["percentile", "bca", "studentized"]), rngs)
def test_boo_n_curve_ci(val, method, seed):
    v = _as_array(val)
    _check(lambda: bt.boo_n_curve_ci(v, n=[1, 2, 3], method=method, rng=seed, **FAST))


@settings_
@given(runs, st.sampled_from(["percentile", "bca", "studentized"]), rngs)
def test_mean_ci(scores, method, seed):
    s = _as_array(scores)
    _check(lambda: bt.mean_ci(s, method=method, rng=seed, **FAST))


@settings_
@given(runs, runs, st.booleans(), rngs)
def test_compare_approaches(a, b, paired, seed):
    a_, b_ = _as_array(a), _as_array(b)
    _check(lambda: bt.compare_approaches(a_, b_, n=2, paired=paired, rng=seed, **FAST))


@settings_
@given(runs, st.integers(1, 3), st.sampled_from(["none", "min-max"]), st.booleans(), rngs)
def test_across_tasks(scores, task_count, normalize, maximize, seed):
    """Runs dealt to 1-3 tasks and 2 groups in row order (a group may miss a task: refused)."""
    s = _as_array(scores)
    labels = {"task": [i % task_count for i in range(s.size)], "group": [(i // task_count) % 2 for i in range(s.size)]}
    _check(lambda: across_tasks(s, **labels, maximize=maximize, normalize=normalize, n=2, rng=seed, **FAST))


@settings_
@given(runs, runs, st.booleans(), st.sampled_from(["studentized-u", "studentized", "percentile"]), rngs)
def test_difference_intervals(a, b, paired, method, seed):
    a_, b_ = _as_array(a), _as_array(b)
    _check(lambda: bt.boo_n_difference_ci(a_, b_, n=2, paired=paired, method=method, rng=seed, **FAST))
    _check(lambda: bt.mean_difference_ci(a_, b_, paired=paired, method=method, rng=seed, **FAST))


@settings_
@given(runs, runs, st.sampled_from(["percentile", "studentized"]), rngs)
def test_independent_difference(a, b, method, seed):
    """The difference of two groups' results (from independent generators), each of which may have been refused
    or carry a NaN."""
    a_, b_ = _as_array(a), _as_array(b)
    results = [
        _check(lambda s=s, k=k: bt.mean_ci(s, method=method, rng=seed + k, **FAST)) for k, s in enumerate((a_, b_))
    ]
    if all(result is not None for result in results):
        _check(lambda: bt.independent_difference(*results))


@settings_
@given(runs, st.integers(1, 4), st.integers(1, 3), rngs)
def test_training_curves(values, run_count, step_count, seed):
    """Values spread over a few runs and steps in row order (some runs and steps left out, some cells logged
    twice): a curve per step, or a refusal."""
    v = _as_array(values)
    data = {"run_id": [f"r{i % run_count}" for i in range(v.size)], "step": [i % step_count for i in range(v.size)]}
    _check(lambda: bt.training_curves({**data, "value": v}, min_runs=2, rng=seed, **FAST))


@settings_
@given(st.lists(st.one_of(st.floats(0, 1), st.floats(allow_nan=True, allow_infinity=True), st.complex_numbers())))
def test_adjust_pvalues(pvalues):
    p = _as_array(pvalues)
    _check(lambda: bt.adjust_pvalues(p), 0.0, 1.0)


@settings_
@given(runs, runs, st.one_of(st.none(), st.integers(1, 20)))
def test_diagnose(val, test, n):
    v, t = _as_array(val), _as_array(test[: len(val)] + val[len(test) :])
    _check(lambda: bt.diagnose(v, t, n=n))


# -- the four silent answers found by fuzzing, each pinned --------------------------------------------------------


def test_complex_scores_are_refused_naming_the_parameter():
    with pytest.raises(ValueError, match="`val` must hold real numbers; position 1 is"):
        bt.boo_n([0.5, 0.7 + 0.1j, 0.6], n=2)
    with pytest.raises(ValueError, match="`scores` must hold real numbers"):
        bt.mean_ci(np.array([1, 2, 3], dtype=complex))


@pytest.mark.parametrize("value", [1e308, -1e308, 1.7e308])
def test_scores_near_the_largest_double_are_refused_by_every_function(value):
    scores = [value, value / 2, value / 3, value / 4]
    for call in (
        lambda: bt.boo_n(scores, n=2),
        lambda: bt.expected_max(scores, 2),
        lambda: bt.boo_n_ci(scores, n=2, rng=0, **FAST),
        lambda: bt.mean_ci(scores, rng=0, **FAST),
    ):
        with pytest.raises(ValueError, match=r"`(val|scores)` must lie within ±1e\+?100"):
            call()


def test_the_largest_accepted_magnitude_gives_finite_numbers():
    scores = np.array([1e100, -1e100, 0.5e100, 0.25e100, -0.75e100])
    assert bt.expected_max(scores, 2)[0] == pytest.approx(bt.boo_n(scores, n=2))
    result, _ = _outcome(lambda: bt.boo_n_ci(scores, n=2, rng=0, **FAST))
    assert all(math.isfinite(x) for x in _numbers(result)), result


def test_a_distribution_without_a_mean_is_refused_naming_the_parameter():
    from scipy import stats

    for dist in (stats.cauchy(), stats.t(1), stats.pareto(1)):
        with pytest.raises(ValueError, match=r"`dist` .* has no finite mean"):
            bt.expected_max_of(dist, 1)


def test_a_degenerate_distribution_is_refused():
    from scipy import stats

    for dist in (stats.norm(0, 0), stats.uniform(0, -1), stats.beta(-1, 2)):
        with pytest.raises(ValueError, match=r"`dist` .* invalid parameters"):
            bt.expected_max_of(dist, 3)


def test_a_value_a_subnormal_step_from_a_bound_gives_a_finite_band():
    """Values 5e-324 and 0 (bounds [0, 1]) gave NaN bands: the logit's slope overflowed at 5e-324."""
    data = {"run_id": ["r0", "r1"], "step": [0, 0], "value": np.array([5e-324, 0.0])}
    curves = bt.training_curves(data, min_runs=2, rng=0, **FAST)
    for name in ("low", "high", "simultaneous_low", "simultaneous_high"):
        assert np.isfinite(getattr(curves, name)).all(), curves
