"""``ray-tune:PATH``: the trials of a finished Ray Tune experiment, read from its directory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boontrack.integration import Direction, InputError, MetricRequest, Source, import_optional
from boontrack_ray._trials import build_frame, trial_histories
from boontrack_ray._tuner import tune_goal

if TYPE_CHECKING:
    import pandas as pd


class RayTuneSource(Source):
    """The trials of one Tune experiment directory (``storage_path/name``, holding ``experiment_state-*.json``),
    local or at a URI that Ray's storage reads (``s3://...``, ``gs://...``).

    Read with ``tune.ExperimentAnalysis``: the trials' status, config and last result, and each trial's
    per-iteration results (``result.json``) when the values asked for need them (see
    :func:`boontrack_ray._trials.build_frame`), or for training curves (:meth:`read_histories`).
    """

    def __init__(self, location: str | Path) -> None:
        self.location = experiment_location(str(location))
        self._snapshot: Any = None  # the ExperimentAnalysis of the last read

    def describe(self) -> str:
        return f"Ray Tune experiment {self.location}"

    def identity(self) -> str:
        return f"ray-tune:{self.location}"

    def direction(self, metric: str) -> Direction | None:
        return experiment_direction(self.location, metric)

    def read(self, request: MetricRequest) -> pd.DataFrame:
        analysis = self._snapshot = self._analysis()
        return build_frame(analysis.trials, request, lambda: analysis.trial_dataframes)

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Each of ``metrics`` (nested keys as ``a/b``) in every per-iteration result of the trials ``run_ids``,
        step = ``training_iteration``: Tune's count of the trial's reports (1, 2, ...), never a step or epoch key
        the trainable reports itself, so every trial is on the same grid. A NaN reported, like a key not
        reported, is no point (a result table cannot tell them apart).

        The results are those the last :meth:`read` loaded with the experiment state, not read again: the
        trials a summary keeps were finished in that state, and Tune writes and flushes each result before it
        records a trial as finished, so no file still being written is read.
        """
        analysis = self._snapshot if self._snapshot is not None else self._analysis()
        return trial_histories(analysis.trial_dataframes, metrics, run_ids)

    def _analysis(self) -> Any:
        tune = import_optional("ray.tune", extra="ray", needed_for="reading a Ray Tune experiment")
        try:
            return tune.ExperimentAnalysis(self.location)
        except (ValueError, OSError) as exc:  # no experiment_state-*.json there, or unreadable
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise InputError(f"ray-tune: {self.location} is not a Tune experiment directory ({first})") from None


def experiment_direction(location: str, metric: str) -> Direction | None:
    """The ``mode`` of the experiment at ``location`` (a local directory) for ``metric``, when its
    ``TuneConfig`` names that metric (see :mod:`boontrack_ray._tuner`); None otherwise (a URI: not read)."""
    goal = None if "://" in location else tune_goal(location)
    if goal is None or goal[0] != metric:
        return None
    return Direction(maximize=goal[1] == "max", said_by=f"the mode of the Tune experiment {Path(location).name!r}")


def experiment_location(location: str) -> str:
    """A local experiment directory as an absolute path (one identity however it is spelled), a URI as given;
    InputError for an empty location or a local path that is not a directory."""
    if not location:
        raise InputError("ray-tune: give the experiment directory, e.g. ray-tune:~/ray_results/my_experiment")
    if "://" in location:
        return location
    path = Path(location).expanduser()
    if not path.is_dir():
        raise InputError(f"ray-tune: {location} is not a directory (expected a Tune experiment directory)")
    return str(path.resolve())
