"""Job records: one small JSON file per Hydra job in the sweep directory, and the source that reads them.

With launchers other than the basic one (joblib, submitit, ray) ``on_job_end`` runs in the worker process and
nothing it keeps in memory reaches ``on_multirun_end``. So each job leaves its result on disk, in
``<sweep dir>/.boontrack/jobs/<job num>.json`` (written to a temporary name and renamed: a reader never sees
half a record), and the end of the multirun reads them all. A record holds plain JSON values only::

    {"job": 3, "status": "completed", "overrides": ["model=a", "seed=2"], "params": {"model": "a", "seed": 2},
     "metrics": {"val_acc": 0.91, "test_acc": 0.90}, "error": "", "started_at": "2026-11-23T08:00:00+00:00",
     "duration_s": 1.25, "output_dir": "/.../multirun/2026-11-23/08-00-00/3"}

:class:`HydraSweepSource` (``hydra:SWEEP_DIR`` on the command line, :class:`HydraBackend`) turns the records
into the run frame of :mod:`boontrack.backends` through :func:`boontrack.runframe.build_run_frame`: the job
number is the run id, the overridden keys are the params (``params.model``, ``params.seed``), the numbers the
job returned are the metrics, and ``overrides``, ``error`` and ``output_dir`` are tags. Its sink, when it is given an MLflow tracking URI, is the MLflow integration's
summary run in an experiment of that store (through the MLflow backend, by its scheme: no parent run).

Beside the records, ``<sweep dir>/.boontrack/sweep.json`` says what the multirun's sweeper optimized: with Hydra's
Optuna sweeper, the number each job returns (``val``) and its ``direction``, which is then ``val``'s direction.
"""

from __future__ import annotations

import json
import numbers
import os
import uuid
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from boontrack.integration import (
    Backend,
    Direction,
    InputError,
    MetricRequest,
    RunRecord,
    Sink,
    Source,
    WriteBackWarning,
    build_run_frame,
    check_options,
    describe_error,
    option_name,
    pick_values,
    sink_at,
)

if TYPE_CHECKING:
    import pandas as pd

#: Where the records live, relative to the sweep directory.
JOBS_DIR = Path(".boontrack") / "jobs"
#: What the sweeper optimized, relative to the sweep directory.
SWEEP_RECORD = Path(".boontrack") / "sweep.json"
COMPLETED = "completed"
FAILED = "failed"


def jobs_dir(sweep_dir: Path) -> Path:
    """The directory holding the job records of the sweep in ``sweep_dir``."""
    return sweep_dir / JOBS_DIR


def returned_metrics(value: Any, *, val: str) -> dict[str, float]:
    """The metrics of a job's return value: a number is the validation score (named ``val``); a mapping gives
    each of its entries that is a number. Anything else (None, text, a list) gives none."""
    if isinstance(value, Mapping):
        found = {str(key): _number(item) for key, item in value.items()}
        return {key: number for key, number in found.items() if number is not None}
    number = _number(value)
    return {} if number is None else {val: number}


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a real number (numpy and torch scalars too), else None. Booleans are not
    scores."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a 0-d array or tensor
        try:
            return _number(value.item())
        except (TypeError, ValueError):  # more than one element
            return None
    return None


def override_params(overrides: Sequence[str]) -> dict[str, Any]:
    """The overridden keys and their values, as Hydra parses them (``lr=0.1`` gives 0.1, ``model=a`` gives "a").

    A value that is not a scalar (a list, a dict) is kept as its text.
    """
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = {}
    for override in OverridesParser.create().parse_overrides(list(overrides)):
        value = override.value()
        if not (value is None or isinstance(value, (str, int, float, bool))):
            value = override.get_value_element_as_str()
        params[override.key_or_group] = value
    return params


def write_sweep_record(sweep_dir: Path, record: Mapping[str, Any]) -> Path:
    """Write what the sweeper optimized (``{"sweeper", "objective", "direction"}``) for :meth:`HydraSweepSource.direction`."""
    return _write_json(sweep_dir / SWEEP_RECORD, record)


def write_record(directory: Path, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as ``<directory>/<job>.json``, atomically (a temporary file renamed into place)."""
    return _write_json(directory / f"{record['job']}.json", record)


def _write_json(target: Path, record: Mapping[str, Any]) -> Path:
    """``record`` as JSON at ``target``, atomically (a temporary file renamed into place)."""
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)
    temporary = directory / f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:12]}.tmp"
    try:
        temporary.write_text(json.dumps(record, indent=1), encoding="utf-8")
        os.replace(temporary, target)
    finally:
        temporary.unlink(missing_ok=True)
    return target


def clear_records(directory: Path) -> None:
    """Delete the records a previous multirun left in ``directory`` (only ``<number>.json`` files)."""
    for path in directory.glob("*.json"):
        if path.stem.isdigit():
            path.unlink(missing_ok=True)


def read_records(directory: Path) -> list[dict[str, Any]]:
    """The job records in ``directory``, by job number. A record that cannot be read is left out with a
    :class:`~boontrack.exceptions.WriteBackWarning` naming it."""
    records = []
    for path in sorted(directory.glob("*.json"), key=lambda p: (len(p.stem), p.stem)):
        if not path.stem.isdigit():
            continue
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(record, dict) or record.get("job") != int(path.stem):
                raise ValueError("not a job record")
        except (OSError, ValueError) as exc:
            warnings.warn(f"job record {path} is left out: {describe_error(exc)}", WriteBackWarning, stacklevel=2)
            continue
        records.append(record)
    return records


def run_record(record: Mapping[str, Any]) -> RunRecord:
    """A job record as the shared layer's :class:`~boontrack.runframe.RunRecord`."""
    return RunRecord(
        run_id=str(record["job"]),
        status=record.get("status", ""),
        created_at=record.get("started_at"),
        duration_s=record.get("duration_s"),
        params=record.get("params", {}),
        metrics=record.get("metrics", {}),
        tags={
            "overrides": " ".join(record.get("overrides", [])),
            "error": record.get("error", ""),
            "output_dir": record.get("output_dir", ""),
        },
    )


class HydraSweepSource(Source):
    """The jobs of one Hydra multirun, from the records in its sweep directory (see the module docstring).

    Parameters
    ----------
    sweep_dir
        The sweep directory (``hydra.sweep.dir``); it names the source.
    tracking_uri, experiment
        Where :meth:`sink` writes: an MLflow tracking URI and the name of an experiment there (created when
        missing). Without a URI the sweep cannot be written back to (InputError), only to a directory.
    """

    def __init__(self, sweep_dir: str | Path, *, tracking_uri: str | None = None, experiment: str = "hydra") -> None:
        self.sweep_dir = Path(sweep_dir).absolute()
        self.tracking_uri = tracking_uri
        self.experiment = experiment
        self._records: tuple[dict[str, Any], ...] | None = None

    @property
    def records(self) -> tuple[dict[str, Any], ...]:
        """The job records by job number, read once; InputError when there are none."""
        if self._records is None:
            records = tuple(read_records(jobs_dir(self.sweep_dir)))
            if not records:
                raise InputError(
                    f"no Hydra job records in {jobs_dir(self.sweep_dir)} (a --multirun with the callback "
                    "boontrack.hydra.BoonCallback writes them)"
                )
            self._records = records
        return self._records

    def describe(self) -> str:
        return f"Hydra sweep in {self.sweep_dir}"

    def identity(self) -> str:
        return f"hydra:{self.sweep_dir}"

    def read(self, request: MetricRequest) -> pd.DataFrame:
        frame = build_run_frame([run_record(record) for record in self.records])
        return pick_values(frame, request, None, source="a Hydra job, which returns its final scores,")

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, pd.DataFrame]:
        """Refused: a job returns one value per metric (:func:`no_history` says where curves come from instead)."""
        raise InputError(no_history())

    def direction(self, metric: str) -> Direction | None:
        """The direction of Hydra's Optuna sweeper, for the number each job returned (``val``)."""
        try:
            sweep = json.loads((self.sweep_dir / SWEEP_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # a sweep recorded before this file existed, or by another sweeper
            return None
        return sweeper_direction(sweep, metric)

    def sink(self, key: str) -> Sink:
        if self.tracking_uri is None:
            return super().sink(key)
        return sink_at(f"mlflow:{self.experiment}", key, tracking_uri=self.tracking_uri)


def no_history() -> str:
    """Why a Hydra sweep gives no training curves, and where they come from instead, in one line."""
    return (
        f"a Hydra job returns one value per metric, so a Hydra sweep has no per-step history for "
        f"{option_name('curves')}: log each step from the job to MLflow, W&B or a file of one row per run and step, "
        "and summarize that source"
    )


class HydraBackend(Backend):
    """``hydra:SWEEP_DIR``: the jobs a multirun recorded in its sweep directory, read again (other options, or a
    multirun whose launching process was killed before it could summarize)."""

    name: ClassVar[str] = "hydra"
    local_location: ClassVar[bool] = True
    knows_directions: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {
        "tracking-uri": "MLflow tracking URI that --write-back writes the summary run to",
        "experiment": "MLflow experiment of that summary run (default: hydra)",
    }

    def open_source(self, location: str, **options: Any) -> HydraSweepSource:
        options = check_options(self.name, options, self.options)
        if not location:
            raise InputError("a hydra source needs the sweep directory: hydra:SWEEP_DIR")
        return HydraSweepSource(location, **options)


def sweeper_direction(sweep: Any, metric: str) -> Direction | None:
    """The direction of ``metric`` in a sweep record (:func:`write_sweep_record`): that of Hydra's Optuna sweeper,
    for the number each job returns; None when the record says none."""
    if not isinstance(sweep, dict) or sweep.get("objective") != metric:
        return None
    goal = sweep.get("direction")
    if goal not in ("maximize", "minimize"):
        return None
    return Direction(maximize=goal == "maximize", said_by="the direction of Hydra's Optuna sweeper")
