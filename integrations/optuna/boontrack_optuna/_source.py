"""``optuna:STORAGE_URL`` sources: the trials of one Optuna study, read through Optuna's storage API."""

from __future__ import annotations

import contextlib
import datetime
import fnmatch
import numbers
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from boontrack.integration import (
    POINT_COLUMNS,
    Backend,
    BackendError,
    Direction,
    Discovered,
    InputError,
    MetricRequest,
    RunRecord,
    Sink,
    Source,
    build_run_frame,
    check_options,
    describe_error,
    discovery_key,
    import_optional,
    option_name,
    pick_values,
    redact,
    sink_at,
)

#: Run frame status of each Optuna trial state (by the state's name): the spellings the other trackers use, so
#: that a dropped trial reads "status 'pruned'", "status 'failed'" or "status 'running'".
STATUS = {"COMPLETE": "finished", "PRUNED": "pruned", "FAIL": "failed", "RUNNING": "running", "WAITING": "waiting"}
#: The one sampler whose trials are i.i.d. draws from the search space.
RANDOM_SAMPLER = "RandomSampler"
#: Tables every Optuna RDB storage has; a database without them is not one (and is never given them).
STORAGE_TABLES = frozenset({"studies", "trials", "version_info", "alembic_version"})
_LISTED_STUDIES = 10


def import_optuna() -> Any:
    return import_optional("optuna", extra="optuna", needed_for="reading Optuna studies")


class OptunaBackend(Backend):
    """``optuna:STORAGE``: a database URL (``optuna:sqlite:///optuna.db``, ``optuna:postgresql://host/db``) or the
    path of a journal file (``optuna:./optuna-journal.log``)."""

    name: ClassVar[str] = "optuna"
    local_location: ClassVar[bool] = True
    knows_directions: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {
        "study": "study name (may be left out when the storage holds one study)",
        "mlflow-experiment": "with --write-back: the MLflow experiment that receives the summary run",
        "tracking-uri": "with mlflow-experiment: the MLflow tracking URI (default: MLFLOW_TRACKING_URI)",
    }

    discover_options: ClassVar[dict[str, str]] = {
        "studies": "study names to summarize, a glob (study-*); default: every study of the storage",
    }

    def open_source(self, location: str, **options: Any) -> OptunaSource:
        options = check_options(self.name, options, self.options)
        _check_location(location)
        study = load_study(open_storage(location), options.get("study"), location)
        return OptunaSource(
            study,
            storage_url=location,
            mlflow_experiment=options.get("mlflow_experiment"),
            tracking_uri=options.get("tracking_uri"),
        )

    def discover(self, location: str, select: Mapping[str, Any], **options: Any) -> list[Discovered]:
        """Every study of the storage (those whose name matches the ``studies`` glob of ``select``), in name
        order: ``optuna:STORAGE`` with option ``study``, as one writes a study's job by hand."""
        options = check_options(self.name, options, self.options)
        if "study" in options:
            raise InputError("optuna: discover finds the studies itself; give no study")
        pattern = select.get("studies", "*")
        if not isinstance(pattern, str) or not pattern:
            raise InputError(f"optuna: discover 'studies' must be a non-empty glob, got {pattern!r}")
        _check_location(location)
        storage = open_storage(location)
        with storage_errors(location):
            names = sorted(study.study_name for study in storage.get_all_studies())
        return [
            Discovered(key=discovery_key(name), label=f"study {name}", location=location, options={"study": name})
            for name in names
            if fnmatch.fnmatchcase(name, pattern)
        ]


def _check_location(location: str) -> None:
    if not location:
        raise InputError("an optuna source needs a storage, e.g. optuna:sqlite:///optuna.db or optuna:JOURNAL_FILE")


def open_storage(location: str) -> Any:
    """Optuna's storage at ``location``, a database URL or the path of a journal file, opened read-only."""
    return _open_database(location) if "://" in location else _open_journal(location)


def _open_journal(path: str) -> Any:
    """A ``JournalStorage`` on an existing journal file (``JournalFileBackend``), which only reading replays."""
    optuna = import_optuna()
    if not os.path.isfile(path):
        raise InputError(
            f"no Optuna storage at {path!r}: expected a database URL (e.g. sqlite:///optuna.db) or an existing "
            "Optuna journal file"
        )
    with open(path, "rb") as handle:
        if handle.read(16).startswith(b"SQLite format 3"):
            raise InputError(f"{path} is a SQLite database: read it as optuna:sqlite:///{path}")
    try:
        return optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(path))
    except (ValueError, KeyError, TypeError) as exc:  # lines that are not Optuna's journal records
        raise InputError(f"{path} is not an Optuna journal file: {describe_error(exc)}") from None


def _open_database(url: str) -> Any:
    """Optuna's ``RDBStorage`` on an existing Optuna database, opened so that nothing is created.

    Optuna creates its tables (and an empty sqlite file) in any database it is pointed at; this refuses a
    sqlite file that does not exist and a database without Optuna's tables before Optuna sees either, and opens
    the storage with ``skip_table_creation``: on an Optuna database, the storage then only reads.
    """
    optuna = import_optuna()
    import sqlalchemy

    try:
        parsed = sqlalchemy.engine.make_url(url)
    except sqlalchemy.exc.ArgumentError:
        raise InputError(f"{redact(url)!r} is not a storage URL (expected e.g. sqlite:///optuna.db)") from None
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise InputError(f"{redact(url)} is an in-memory database: it holds no study")
        if not os.path.isfile(parsed.database):
            raise InputError(f"no Optuna storage at {redact(url)}: the file {parsed.database} does not exist")
    with storage_errors(url):
        engine = sqlalchemy.create_engine(url)
        try:
            tables = set(sqlalchemy.inspect(engine).get_table_names())
        finally:
            engine.dispose()
    if not STORAGE_TABLES <= tables:
        raise InputError(
            f"{redact(url)} is not an Optuna storage (it has no {', '.join(sorted(STORAGE_TABLES - tables))} table)"
        )
    with storage_errors(url):
        try:
            return optuna.storages.RDBStorage(url, skip_table_creation=True)
        except RuntimeError as exc:  # a schema of another Optuna version: reading it would need an upgrade
            raise InputError(f"cannot read the Optuna storage at {redact(url)}: {describe_error(exc)}") from None


def load_study(storage: Any, name: str | None, url: str) -> Any:
    """The study ``name`` in ``storage`` (the only one when ``name`` is None); InputError naming what is there."""
    optuna = import_optuna()
    with storage_errors(url):
        names = sorted(study.study_name for study in storage.get_all_studies())
    listed = ", ".join(repr(n) for n in names[:_LISTED_STUDIES]) + (" ..." if len(names) > _LISTED_STUDIES else "")
    if not names:
        raise InputError(f"the Optuna storage at {redact(url)} holds no study")
    if name is None:
        if len(names) > 1:
            raise InputError(
                f"the Optuna storage at {redact(url)} holds {len(names)} studies ({listed}): name one with "
                f"{option_name('study')}"
            )
        name = names[0]
    elif name not in names:
        raise InputError(f"no Optuna study named {name!r} at {redact(url)} (studies: {listed})")
    with storage_errors(url):
        return optuna.load_study(study_name=name, storage=storage)


@contextlib.contextmanager
def storage_errors(url: str) -> Iterator[None]:
    """A database that cannot be reached or read, as one BackendError line naming the storage."""
    import sqlalchemy

    try:
        yield
    except sqlalchemy.exc.SQLAlchemyError as exc:
        raise BackendError(f"cannot read the Optuna storage at {redact(url)}: {describe_error(exc)}") from None
    except ImportError as exc:  # the database's driver (psycopg2, pymysql, ...) is not installed
        raise InputError(f"cannot open the Optuna storage at {redact(url)}: {describe_error(exc)}") from None


def objective_names(study: Any) -> list[str]:
    """The run frame's names of the study's objective values: the study's metric names when it has them, else
    ``value`` (one objective) or ``values_0``, ``values_1``, ... (as in ``Study.trials_dataframe``)."""
    names = study.metric_names
    if names:
        return [str(name) for name in names]
    count = len(study.directions)
    return ["value"] if count == 1 else [f"values_{i}" for i in range(count)]


class OptunaSource(Source):
    """The trials of one Optuna study: one run per trial, numbered by the trial's number.

    Parameters
    ----------
    study
        The ``optuna.Study`` (from the storage, or the one being optimized).
    storage_url
        The storage's URL or journal file, for descriptions (None for a study in memory).
    sampler
        The class name of the study's sampler when known (the storage does not record it); any sampler but
        ``RandomSampler`` makes :meth:`describe` say how to read Boo_n of the study.
    mlflow_experiment, tracking_uri
        Where :meth:`sink` writes the summary: a summary run in this MLflow experiment (e.g. the one
        optuna-integration's ``MLflowCallback`` logs the trials to). None: the study cannot be written back to.
    """

    def __init__(
        self,
        study: Any,
        *,
        storage_url: str | None = None,
        sampler: str | None = None,
        mlflow_experiment: str | None = None,
        tracking_uri: str | None = None,
    ) -> None:
        if tracking_uri is not None and mlflow_experiment is None:
            raise InputError(
                f"{option_name('tracking_uri')} of an optuna source says where {option_name('mlflow_experiment')} "
                "is: give both"
            )
        self._study = study
        self._storage_url = storage_url
        self._sampler = sampler
        self._mlflow_experiment = mlflow_experiment
        self._tracking_uri = tracking_uri

    def describe(self) -> str:
        where = f" at {redact(self._storage_url)}" if self._storage_url else ""
        return f"Optuna study {self._study.study_name!r}{where}{self._sampling_note()}"

    def identity(self) -> str:
        # The study, not the spelling of its storage's URL: the callback (which has the study object) and the
        # command line (which has the URL) find each other's summary up to date.
        return f"optuna:study={self._study.study_name}"

    def read(self, request: MetricRequest) -> Any:
        names = objective_names(self._study)
        with storage_errors(self._storage_url or "memory"):
            trials = self._study.get_trials(deepcopy=False)
        frame = build_run_frame([_record(trial, names) for trial in trials])
        # The intermediate values (trial.report) are the per-step history of the one objective, of nothing else.
        histories = (lambda: _objective_history(trials, request.val)) if names == [request.val] else None
        return pick_values(frame, request, histories, source=f"{request.val!r}, not the study's one objective,")

    def read_histories(self, metrics: Sequence[str], run_ids: Sequence[str]) -> dict[str, Any]:
        """The objective's intermediate values (``trial.report(value, step)``) of the trials ``run_ids`` (their
        numbers), step = the step reported: the training curves of a single-objective study's objective, under
        its name (``value``, or the study's metric name). Optuna records no per-step value of anything else (a
        user attribute holds one value), and none at all in a study of several objectives (``trial.report`` is
        for one objective only): a curve of either is an :class:`InputError`."""
        names = objective_names(self._study)
        study = f"Optuna study {self._study.study_name!r}"
        if len(names) > 1:
            raise InputError(
                f"{study} has {len(names)} objectives and Optuna records intermediate values (trial.report) only "
                f"for one: its trials have no per-step history for {option_name('curves')}"
            )
        for metric in metrics:
            if metric != names[0]:
                raise InputError(
                    f"{study} has no per-step history of {metric!r}: Optuna records per step only the intermediate "
                    f"values of the objective ({names[0]!r}, by trial.report)"
                )
        with storage_errors(self._storage_url or "memory"):
            trials = self._study.get_trials(deepcopy=False)
        wanted = set(run_ids)
        return _objective_history([trial for trial in trials if str(trial.number) in wanted], names[0])

    def direction(self, metric: str) -> Direction | None:
        """The study's direction of ``metric`` when it is an objective the study maximizes or minimizes."""
        names = objective_names(self._study)
        if metric not in names:
            return None
        direction = self._study.directions[names.index(metric)].name  # MAXIMIZE, MINIMIZE or NOT_SET
        if direction not in ("MAXIMIZE", "MINIMIZE"):
            return None
        return Direction(maximize=direction == "MAXIMIZE", said_by=f"the Optuna study {self._study.study_name!r}")

    def sink(self, key: str) -> Sink:
        if self._mlflow_experiment is None:
            raise InputError(
                f"Optuna study {self._study.study_name!r} cannot be written back to: write the summary to a "
                f"directory with {option_name('out')}, or name the MLflow experiment that tracks the study "
                f"({option_name('mlflow_experiment')})"
            )
        options = {} if self._tracking_uri is None else {"tracking_uri": self._tracking_uri}
        return sink_at(f"mlflow:{self._mlflow_experiment}", key, **options)

    # -- helpers -------------------------------------------------------------------------------------------
    def _sampling_note(self) -> str:
        if self._sampler == RANDOM_SAMPLER:
            return ""
        reading = (
            "Boo_n and the curve describe n trials drawn from the trials this study made, not a fresh run of "
            "the sampler"
        )
        if self._sampler is None:
            return f" (the storage does not record the sampler: unless it was {RANDOM_SAMPLER}, its trials are not i.i.d. and {reading})"
        return f" (sampler {self._sampler}: not i.i.d. random search, so {reading})"


def _record(trial: Any, names: Sequence[str]) -> RunRecord:
    """One trial as a run: objective values and numeric user attributes as metrics, other attributes as tags."""
    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    for name, value in sorted(trial.user_attrs.items()):
        if name in names:  # the objective holds the metric name; the attribute stays readable as tags.<name>
            tags[name] = str(value)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            metrics[name] = float(value)
        else:
            tags[name] = str(value)
    if trial.values is not None:
        metrics.update(zip(names, map(float, trial.values)))
    return RunRecord(
        run_id=str(trial.number),
        status=STATUS.get(trial.state.name, trial.state.name.lower()),
        created_at=_utc(trial.datetime_start),
        duration_s=None if trial.duration is None else trial.duration.total_seconds(),
        params=dict(trial.params),
        metrics=metrics,
        tags=tags,
    )


def _utc(moment: datetime.datetime | None) -> datetime.datetime | None:
    """Optuna's trial times are naive local times: as UTC."""
    return None if moment is None else moment.astimezone(datetime.timezone.utc)


def _objective_history(trials: Sequence[Any], metric: str) -> dict[str, Any]:
    """The objective's per-step points (``trial.report(value, step)``) of every trial, under its name. Optuna
    has no per-step history of anything else: a test score (a user attribute set once) is the single value
    that describes the model the trial kept."""
    import pandas as pd

    points = [(str(t.number), step, value) for t in trials for step, value in sorted(t.intermediate_values.items())]
    return {metric: pd.DataFrame(points, columns=list(POINT_COLUMNS))}
