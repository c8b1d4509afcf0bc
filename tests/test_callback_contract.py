"""One callback contract: every callback and ``summarize_*`` function takes the keywords of the docs' table
(docs/guide/files.md), with the defaults it lists, and its own keywords besides; the table of keywords is the
integration layer's."""

from __future__ import annotations

import importlib
import inspect

import pytest

from boontrack.integration import CALLBACK_KEYWORDS

from readme_tables import quoted, tables_after

KEYWORDS, FUNCTIONS = tables_after("callback keywords:")
#: The SDK each function's module imports (its test is skipped without it).
NEEDS = {"ray": "ray", "hydra": "hydra", "optuna": "optuna", "mlflow": "mlflow", "wandb": "wandb"}


def test_the_readme_lists_the_keywords_of_the_integration_layer():
    listed = {quoted(name)[0]: default for name, default, _ in KEYWORDS}
    assert list(listed) == list(CALLBACK_KEYWORDS)
    for name, default in CALLBACK_KEYWORDS.items():
        shown = "required" if default is inspect.Parameter.empty else f"`{default!r}`".replace("'", '"')
        assert listed[name] == shown, name


def _function(dotted: str):
    module, _, name = dotted.rpartition(".")
    pytest.importorskip(NEEDS[module.split(".")[1]])
    return getattr(importlib.import_module(module), name)


def _defaults(cell: str) -> dict:
    """``name=value`` pairs quoted in a cell, the values as Python reads them."""
    pairs = [text.split("=", 1) for text in quoted(cell)]
    return {name: eval(value) for name, value in pairs}  # noqa: S307 - literals written in our own docs


@pytest.mark.parametrize(("dotted", "first", "differ", "own"), FUNCTIONS, ids=[row[0] for row in FUNCTIONS])
def test_every_callback_takes_the_same_keywords(dotted, first, differ, own):
    function = _function(quoted(dotted)[0])
    parameters = inspect.signature(function).parameters
    positional = [p.name for p in parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    assert positional == quoted(first)
    keyword_only = {p.name: p.default for p in parameters.values() if p.kind is p.KEYWORD_ONLY}
    expected = {**CALLBACK_KEYWORDS, **_defaults(differ)}
    assert {name: keyword_only[name] for name in expected if name in keyword_only} == expected
    assert set(keyword_only) - set(CALLBACK_KEYWORDS) == set(quoted(own))
    assert [p.name for p in parameters.values() if p.kind is p.VAR_KEYWORD] == ["spec_options"]


def test_the_table_lists_every_callback_of_the_integrations():
    listed = {quoted(row[0])[0] for row in FUNCTIONS}
    assert listed == {
        "boontrack.mlflow.summarize_sweep",
        "boontrack.mlflow.sweep",
        "boontrack.wandb.summarize_sweep",
        "boontrack.optuna.summarize_study",
        "boontrack.optuna.BoonCallback",
        "boontrack.ray.BoonCallback",
        "boontrack.hydra.BoonCallback",
    }


def test_a_callback_written_before_a_keyword_joined_the_table_takes_it_through_spec_options():
    """A third party's callback without ``task_column`` in its signature (it joined the table in issue 51) keeps
    working, and its callers give the new keyword through ``**spec_options``."""
    from boontrack.integration import callback_options

    def older(*, val, test=None, n=None, group_by=None, seed_column=None, pick="last", maximize=None,
              n_resamples="auto", confidence_level=0.95, seed=0, tracking_uri=None, out=None, plots=True,
              raise_on_error=False, **spec_options):  # fmt: skip
        return callback_options(older, locals())

    assert older(val="acc").spec.task_column is None
    assert older(val="acc", task_column="task").spec.task_column == "task"
