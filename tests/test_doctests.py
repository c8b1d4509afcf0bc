"""The examples in the docstrings run, and give what they show: every module of the core and the integrations,
imported under the names users import them by."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from boontrack.exceptions import MissingExtraError

PACKAGES = ("boontrack", "boontrack_mlflow", "boontrack_wandb", "boontrack_optuna", "boontrack_hydra", "boontrack_ray")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        path = importlib.import_module(package).__path__
        names += [package, *(module.name for module in pkgutil.walk_packages(path, f"{package}."))]
    return names


def _examples(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except MissingExtraError as exc:  # a module that subclasses an SDK's class needs that SDK
        pytest.skip(str(exc))
    return [test for test in doctest.DocTestFinder().find(module, name) if test.examples]


@pytest.mark.parametrize("name", _modules())
def test_the_docstring_examples_run(name):
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in _examples(name):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_the_examples_are_found():
    found = {
        test.name: len(test.examples) for name in ("boontrack.estimators", "boontrack.spec") for test in _examples(name)
    }
    assert found["boontrack.estimators.expected_max_of"] >= 4 and found["boontrack.spec.loss_word"] == 1
