"""Ray Tune integration: summarize a Tune experiment when it ends, or read a finished one.

``pip install ".[ray]"``. Importing this package imports neither ray nor numpy or pandas: its names are
loaded on first use.

Reading (``ray-tune:PATH``, :class:`RayTuneBackend`, :class:`RayTuneSource`)
    PATH is a Tune experiment directory (``storage_path/name``, the one holding ``experiment_state-*.json``),
    local or a URI Ray's storage reads. One run per trial: ``run_id`` the trial id, status ``finished``
    (``TERMINATED``, also when a scheduler stopped the trial early), ``failed`` (``ERROR``, the error's last line
    in ``tags.error``; the RunTable drops such trials) or the lower-cased Tune status; the config as
    ``params.*`` and the last result's numbers as ``metrics.*`` (nested keys joined with ``/``, as Ray does);
    ``duration_s`` the trial's ``time_total_s``. With ``pick="best_val_step"``, and for training curves
    (``curves``) of any reported metric, the per-iteration results are the history (step =
    ``training_iteration``).

Callback (:class:`BoonCallback`, also as ``boontrack.ray.BoonCallback``)
    ``tune.RunConfig(callbacks=[BoonCallback(val=..., test=...)])`` summarizes the trials in
    ``on_experiment_end`` and writes the summary to a directory (default: ``boontrack/`` in the experiment
    directory) and, when asked, to MLflow. It never raises into Tune (unless ``raise_on_error``).

Direction
    The ``mode`` of ``tune.TuneConfig(metric=..., mode=...)`` is the direction of that metric, read from the
    experiment's ``tuner.pkl`` without running its code (:mod:`._tuner`); a local experiment directory only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from boontrack.integration import Backend, check_options, lazy_exports

__all__ = ["BoonCallback", "RayTuneBackend", "RayTuneSource"]

__getattr__, __dir__ = lazy_exports(
    globals(), {"BoonCallback": "boontrack_ray._callback", "RayTuneSource": "boontrack_ray._source"}
)


class RayTuneBackend(Backend):
    """``ray-tune:PATH``."""

    name: ClassVar[str] = "ray-tune"
    knows_directions: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {}

    def open_source(self, location: str, **options: Any):
        from boontrack_ray._source import RayTuneSource

        check_options(self.name, options, self.options)
        return RayTuneSource(location)
