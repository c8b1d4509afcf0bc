"""The Tune callback: summarize the experiment's trials when it ends, without ever raising into Tune."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boontrack.integration import (
    Direction,
    JobResult,
    MetricRequest,
    Source,
    Spec,
    after_sweep,
    callback_options,
    history_metrics,
    import_optional,
    mlflow_destination,
    summarize_source,
)
from boontrack_ray._source import experiment_direction
from boontrack_ray._trials import build_frame, flatten, history_row, trial_histories

if TYPE_CHECKING:
    import pandas as pd

#: Tune's callback class, the base of ours (imported here: the error names the extra to install).
_TuneCallback: Any = import_optional("ray.tune", extra="ray", needed_for="boontrack.ray.BoonCallback").Callback

#: Where the summary goes in a local experiment directory when no ``out`` is given.
DEFAULT_SUBDIRECTORY = "boontrack"


class BoonCallback(_TuneCallback):
    """Summarize a Tune experiment when it ends: Boo_n, expected-validation curves, intervals, comparisons.

    ``tune.RunConfig(callbacks=[BoonCallback(val="val_acc", test="test_acc")])``. In ``on_experiment_end`` the
    trials are summarized from their last results (``pick="last"``) or from the results of each trial's best
    validation iteration (``pick="best_val_step"``, each trial's per-iteration results as its history), exactly
    as the ``ray-tune:PATH`` source reads the finished experiment directory. Errored trials are dropped (status
    ``failed``, their error's last line in ``runs.csv``'s ``tags.error``). The keywords are those of every
    callback (see :mod:`boontrack.integration`).

    Parameters
    ----------
    val, test
        Names of the reported validation and (optional) test metrics (nested keys joined with ``/``).
    n
        Budgets for Boo_n. None (default): 1, 5 and 10, each where a group has at least that many trials.
    group_by
        Config keys to group by. None: the config keys that vary across the trials except the seed.
    seed_column
        The config key holding the seed (default ``"seed"``; ignored when no trial's config has it). Without
        ``group_by``, the trials are grouped by the config keys that vary across them except this one, so a
        search over ``model`` x ``seed`` gives one group per model; without a seed, all trials form one group.
    task_column
        The config key naming each trial's task (a dataset of a benchmark): each task is summarized on its own,
        and the groups compared across the tasks; never a group key. None: one task.
    pick
        ``"last"`` or ``"best_val_step"``.
    maximize
        The direction of ``val``. None (default): the ``mode`` of ``tune.TuneConfig`` when its ``metric`` is
        ``val`` (a direction given that contradicts it is refused); else higher, except for a metric named
        like a loss or an error.
    n_resamples, confidence_level, seed
        As the fields of :class:`boontrack.spec.Spec`.
    tracking_uri, mlflow_experiment
        Also write the summary to MLflow, as a summary run in this experiment (name), e.g. the one
        ``MLflowLoggerCallback`` logs the trials to; the URI defaults to ``MLFLOW_TRACKING_URI``.
    out
        Directory to write the summary to (:class:`~boontrack.directory.DirectorySink`). Default: ``boontrack/``
        in the experiment directory when that is local; with remote storage and no ``out`` (and no MLflow), the
        summary is only computed (``result``).
    plots
        Render the PNG plots.
    raise_on_error
        False (default): nothing raises into Tune; a summary that cannot be computed or written warns
        :class:`~boontrack.exceptions.WriteBackWarning` and ``result`` says so. True: the error propagates.
    **spec_options
        Any other field of :class:`boontrack.spec.Spec` (``estimator``, ``ci_method``, ``baseline``, ...).

    Attributes
    ----------
    result : JobResult or None
        What the summary did, once the experiment has ended.

    Raises
    ------
    InputError
        Invalid options, when the callback is created (a mistake in the call, before Tune runs).
    """

    def __init__(
        self,
        *,
        val: str,
        test: str | None = None,
        n: int | Sequence[int] | None = None,
        group_by: str | Sequence[str] | None = None,
        seed_column: str | None = "seed",
        task_column: str | None = None,
        pick: str = "last",
        maximize: bool | None = None,
        n_resamples: int | str = "auto",
        confidence_level: float = 0.95,
        seed: int = 0,
        tracking_uri: str | None = None,
        out: str | Path | None = None,
        plots: bool = True,
        raise_on_error: bool = False,
        mlflow_experiment: str | None = None,
        **spec_options: Any,
    ) -> None:
        self.options = callback_options(type(self).__init__, locals())
        self._also = mlflow_destination(mlflow_experiment, self.options.tracking_uri)
        self.result: JobResult | None = None
        self._histories: dict[str, list[dict[str, Any]]] = {}
        # What each result gives the history: val and test (for the pick) and the training curves' metrics.
        spec = self.options.spec
        self._kept_keys = tuple(dict.fromkeys([*filter(None, (spec.val, spec.test)), *history_metrics(spec)]))

    @property
    def spec(self) -> Spec:
        """The spec the summary is made with (its grouping and seed adjusted to the trials when they end)."""
        return self.options.spec

    def on_trial_result(self, iteration: int, trials: list, trial: Any, result: dict, **info: Any) -> None:
        self._histories.setdefault(trial.trial_id, []).append(history_row(result, self._kept_keys))

    def on_experiment_end(self, trials: list, **info: Any) -> None:
        summarize = lambda: self._summarize(trials)  # noqa: E731 - one line, under the one failure rule
        self.result = after_sweep(
            "summarizing the Tune experiment", summarize, raise_on_error=self.options.raise_on_error
        )

    def _summarize(self, trials: list) -> JobResult:
        local, location = _experiment_location(trials)
        spec = self.spec
        if spec.seed_column is not None and not _in_some_config(spec.seed_column, trials):
            spec = dataclasses.replace(spec, seed_column=None)
        out = self.options.out
        if out is None and local:
            out = Path(location) / DEFAULT_SUBDIRECTORY
        source = _TrialsSource(trials, self._histories, location)
        return summarize_source(
            source,
            spec,
            out=out,
            write_back=False,
            also=self._also,
            plots=self.options.plots,
            raise_on_write_error=self.options.raise_on_error,
        )


def _in_some_config(name: str, trials: Sequence[Any]) -> bool:
    """Whether some trial's config has the key ``name`` (``params.`` prefix or not, ``a/b`` for nested keys)."""
    key = name.removeprefix("params.")
    return any(key in flatten(trial.config or {}) for trial in trials)


def _experiment_location(trials: Sequence[Any]) -> tuple[bool, str]:
    """(local?, the experiment directory as the ``ray-tune:`` source names it: an absolute local path or a URI)."""
    if not trials:
        return False, "(no trials)"
    storage = trials[0].storage
    if storage.storage_filesystem.type_name == "local":
        return True, str(Path(storage.experiment_fs_path).resolve())
    return False, f"{str(storage.storage_path).rstrip('/')}/{storage.experiment_dir_name}"


class _TrialsSource(Source):
    """The trials of a running experiment as a source: the same frame as ``ray-tune:PATH`` reads afterwards, with
    the same identity (so the fingerprints agree)."""

    def __init__(self, trials: Sequence[Any], histories: Mapping[str, list[dict[str, Any]]], location: str) -> None:
        self.trials = list(trials)
        self.histories = histories
        self.location = location

    def describe(self) -> str:
        return f"Ray Tune experiment {self.location}"

    def identity(self) -> str:
        return f"ray-tune:{self.location}"

    def direction(self, metric: str) -> Direction | None:
        return experiment_direction(self.location, metric)

    def read(self, request: MetricRequest) -> pd.DataFrame:
        return build_frame(self.trials, request, self._tables)

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """The training curves' metrics in the results the callback saw, step = ``training_iteration``, as
        ``ray-tune:PATH`` reads them from the experiment directory."""
        return trial_histories(self._tables(), metrics, run_ids)

    def _tables(self) -> dict[str, pd.DataFrame]:
        """Each trial's per-iteration table of the results the callback saw."""
        import pandas as pd

        return {trial: pd.DataFrame(rows) for trial, rows in self.histories.items()}
