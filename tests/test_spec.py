"""make_spec: a Spec from the option names of the command line and the config file."""

from __future__ import annotations

import pytest

from boontrack.exceptions import InputError
from boontrack.spec import make_spec


def test_make_spec_maps_user_options_to_the_spec():
    spec = make_spec(val="v", minimize=True, seed_column="s", resamples=10, seed=4, pick="best-val-step", n=[2])
    assert (spec.maximize, spec.seed_column, spec.n_resamples, spec.seed, spec.pick, spec.n) == (
        False,
        "s",
        10,
        4,
        "best_val_step",
        (2,),
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"val": 3}, "val must be a non-empty name, got 3"),
        ({"val": "v", "seed_column": 7}, "seed_column must be a non-empty name, got 7"),
        ({"val": "v", "n": [0, 5]}, "n must be a list of integers >= 1"),
        ({"val": "v", "n": "5"}, "n must be a list"),
        ({"val": "v", "estimator": "X"}, "estimator must be one of V, U, W"),
        ({"val": "v", "minimize": "yes"}, "minimize must be true or false, got 'yes'"),
        ({"val": "v", "group_by": "model"}, "group_by must be a list"),
        ({"val": "v", "confidence": 95}, "confidence must be a number between 0 and 1"),
        ({"val": "v", "resamples": 0}, "resamples must be an integer >= 1"),
        ({"val": "v", "seed": -1}, "seed must be an integer >= 0"),
        ({"val": "v", "pick": "best"}, "pick must be one of"),
    ],
)
def test_make_spec_names_the_bad_option(options, message):
    with pytest.raises(InputError, match=message):
        make_spec(**options)
