"""The aggregate W&B run that holds a summary: one per (source, spec), with an id derived from the key.

It is written with ``wandb.init(id=..., resume="allow", job_type="boontrack")`` and carries
``boontrack.role=summary`` in its config, so boontrack never reads it back as input. The user's runs are only
read. A new write into an existing aggregate run first rewinds it to its first step, so its
history holds only the current curve. The fingerprint is stored in the aggregate run's summary last, through
the public API, after the run has finished; a crash before that leaves no fingerprint and the next call writes
again. A change token goes into the same summary update (``boontrack/change_token``: the token and the
fingerprint it was stored for), and is trusted only beside that fingerprint.

The curves of all groups are drawn with their bootstrap bands by a custom chart preset whose Vega-Lite spec
ships with the package (``assets/boon_curve.vega.json``). The preset is registered once per entity under a
name derived from the spec's content (``boontrack-curve-<hash>``), so a changed spec gets a new preset and
never overwrites one a user edited. Where presets cannot be created (a server without custom charts, no
permission), the curves are logged as W&B's built-in line-series chart, without bands, and a
:class:`~boontrack.exceptions.WriteBackWarning` says so; the write itself goes on.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from boontrack.exceptions import BackendError, WriteBackWarning
from boontrack.integration import (
    SUMMARY_ROLE_TAG,
    CurveSeries,
    Sink,
    SummaryOutputs,
    artifact_path,
    redact,
    write_artifacts,
)
from boontrack_wandb._client import Place, import_wandb, make_api, translate_errors
from boontrack_wandb._frame import AGGREGATE_JOB_TYPE, SUMMARY_ROLE

#: Summary key of the input fingerprint in the aggregate run.
FINGERPRINT_KEY = "boontrack/fingerprint"
#: Summary key of the change token stored with it (JSON ``{"token", "fingerprint"}``).
CHANGE_TOKEN_KEY = "boontrack/change_token"
#: History key of the budget n: the step metric of every curve.
STEP_KEY = "boon/n"
#: History key of the training step: the step metric of every training-curve series (``Spec.curves``).
TRAINING_STEP_KEY = "boon/train/step"
#: History keys of the training-curve table and of each metric's chart (``.../<metric>``).
TRAINING_TABLE_KEY = "boontrack/training_table"
TRAINING_CHART_KEY = "boontrack/training_chart"
#: Columns of the training table that fill the preset's fields: the pointwise band shaded.
TRAINING_FIELDS = {"x": "step", "y": "mean", "low": "ci_low", "high": "ci_high", "group": "group"}
#: History keys of the curve table and the line-series chart of all groups.
TABLE_KEY = "boontrack/curves_table"
CHART_KEY = "boontrack/curves_chart"
#: History key of ``report.html`` as an HTML panel (passed through unchanged: W&B's injected style sheet is remote).
REPORT_KEY = "boontrack/report"
ARTIFACT_TYPE = "boontrack-summary"
#: The chart preset's Vega-Lite spec, in the package (a user can also import it by hand in the W&B UI).
CHART_SPEC_FILE = "boon_curve.vega.json"
#: Columns of the curve table that fill the preset's fields.
CHART_FIELDS = {"x": "n", "y": "estimate", "low": "ci_low", "high": "ci_high", "group": "group"}
_CUSTOM_CHART = """
query CustomChart($id: ID!) {
  customChart(id: $id) { id name type }
}
"""
_REWIND_RUN = """
mutation RewindRun($runName: String!, $entity: String, $project: String, $metricName: String!, $metricValue: Float!) {
  rewindRun(input: {runName: $runName, entityName: $entity, projectName: $project,
                    metricName: $metricName, metricValue: $metricValue}) {
    rewoundRun { id }
  }
}
"""


def aggregate_run_id(key: str) -> str:
    """The aggregate run's id: deterministic in the (source, spec) key."""
    return f"boon-{key[:16]}"


def curve_chart_spec() -> str:
    """The Vega-Lite spec of the curve chart preset, as shipped in the package."""
    return resources.files(__package__).joinpath("assets").joinpath(CHART_SPEC_FILE).read_text(encoding="utf-8")


def chart_preset_name(spec: str) -> str:
    """The preset's name: derived from the spec's content, so each version of the spec is its own preset."""
    return f"boontrack-curve-{hashlib.sha256(spec.encode()).hexdigest()[:12]}"


def curve_rows(curves: Sequence[CurveSeries], step_key: str = STEP_KEY) -> list[dict[str, float]]:
    """One history row per step (budget n, or training step), holding the value of every curve defined there; a
    value that is not finite (a band undefined at a step with one run) is left out."""
    rows: dict[int, dict[str, float]] = {}
    for curve in curves:
        for n, value in zip(curve.n.tolist(), curve.values.tolist()):
            row = rows.setdefault(int(n), {step_key: int(n)})
            if math.isfinite(value):
                row[curve.key] = float(value)
    return [rows[n] for n in sorted(rows)]


@dataclass  # not frozen: a Place has settable attributes, as a source has
class ProjectDestination:
    """A project that holds a summary of runs kept elsewhere (a comparison of sources): the sink's place, with no
    sweep or group of its own."""

    entity: str
    project: str
    timeout_s: float
    sweep: str | None = None
    group: str | None = None

    @property
    def path(self) -> str:
        return f"{self.entity}/{self.project}"

    def identity(self) -> str:
        return "runs kept elsewhere"


class WandbSink(Sink):
    """Writes a :class:`SummaryOutputs` into the aggregate run next to ``source``'s runs (or, for a
    :class:`ProjectDestination`, into that project)."""

    def __init__(self, source: Place, key: str) -> None:
        self.source = source
        self.key = key
        self.run_id = aggregate_run_id(key)
        self._pending_token: str | None = None  # stored with the fingerprint of the write under way
        self._writing = False

    def _what(self) -> str:
        return f"aggregate run {self.source.path}/{self.run_id}"

    def _public_run(self, api: Any | None = None) -> Any | None:
        """The aggregate run through the public API, or None when it does not exist yet."""
        wandb = import_wandb()
        api = api or make_api(self.source.entity, self.source.timeout_s)
        with translate_errors(self._what(), self.source.timeout_s):
            try:
                return api.run(f"{self.source.path}/{self.run_id}")
            except wandb.errors.CommError as exc:
                if "could not find run" in str(exc).lower():
                    return None
                raise

    def read_fingerprint(self) -> str | None:
        run = self._public_run()
        value = None if run is None else run.summary_metrics.get(FINGERPRINT_KEY)
        return value if isinstance(value, str) else None

    def read_change_token(self) -> tuple[str, str] | None:
        run = self._public_run()
        if run is None:
            return None
        fingerprint, stored = run.summary_metrics.get(FINGERPRINT_KEY), run.summary_metrics.get(CHANGE_TOKEN_KEY)
        try:
            stored = json.loads(stored) if isinstance(stored, str) else None
        except ValueError:
            return None
        if not isinstance(fingerprint, str) or not isinstance(stored, dict) or not isinstance(stored.get("token"), str):
            return None
        return (stored["token"], fingerprint) if stored.get("fingerprint") == fingerprint else None

    def write_change_token(self, token: str, fingerprint: str) -> None:
        """With the fingerprint of the write under way, else into the summary of the run holding
        ``fingerprint``."""
        value = json.dumps({"token": token, "fingerprint": fingerprint}, sort_keys=True)
        if self._writing:
            self._pending_token = value
            return
        run = self._public_run()
        if run is None or run.summary_metrics.get(FINGERPRINT_KEY) != fingerprint:
            return
        with translate_errors(self._what(), self.source.timeout_s):
            run.summary.update({CHANGE_TOKEN_KEY: value})

    def write(self, outputs: SummaryOutputs) -> None:
        wandb = import_wandb()
        for relative in outputs.artifacts:  # before the run is touched (the SDK's errors would wrap this one)
            artifact_path(relative)
        api = make_api(self.source.entity, self.source.timeout_s)
        self._writing, self._pending_token = True, None
        existing = self._public_run(api)
        if existing is not None and (existing.history_line_count or 0) > 0:
            self._rewind(existing)
        preset = self._chart_preset(api) if outputs.curves and "curves" in outputs.tables else None
        with translate_errors(self._what(), self.source.timeout_s), tempfile.TemporaryDirectory() as tmp:
            run = wandb.init(
                entity=self.source.entity,
                project=self.source.project,
                id=self.run_id,
                resume="allow",
                job_type=AGGREGATE_JOB_TYPE,
                name=f"boontrack {self.source.sweep or self.source.group or self.source.project}",
                notes=outputs.description,
                group=self.source.group,
                config={
                    SUMMARY_ROLE_TAG: SUMMARY_ROLE,
                    "boontrack.source": self.source.identity(),
                    "boontrack.key": self.key,
                },
                dir=tmp,
                reinit="create_new",  # never touch a run the user has open in this process
                settings=wandb.Settings(
                    # The API's base URL, also when wandb was set up in this process before it was exported.
                    **({"base_url": os.environ["WANDB_BASE_URL"]} if os.environ.get("WANDB_BASE_URL") else {}),
                    console="off",
                    silent=True,
                    x_disable_stats=True,
                    disable_git=True,
                    save_code=False,
                    disable_job_creation=True,
                    x_save_requirements=False,
                ),
            )
            try:
                self._log(wandb, run, outputs, Path(tmp), preset)
            except BaseException:
                run.finish(exit_code=1)
                raise
            run.finish()

    def _rewind(self, public_run: Any) -> None:
        """Cut the aggregate run's history back to its start, so that no stale curve points remain.

        W&B's run rewind (what ``wandb.init(resume_from="<id>?_step=0")`` sends). Sent before ``wandb.init``
        because a failed rewinding ``init`` keeps the run id busy in wandb's service process. A server without
        rewind gets a warning: the history then keeps the old curve points beside the new ones.
        """
        variables = {
            "runName": self.run_id,
            "entity": self.source.entity,
            "project": self.source.project,
            "metricName": "_step",
            "metricValue": 0.0,
        }
        try:
            public_run._service_api.execute_graphql(_REWIND_RUN, variables)  # the pinned client's request path
        except Exception as exc:  # noqa: BLE001 - any failure only costs the stale points, never the write
            warnings.warn(
                f"{self._what()}: W&B could not rewind the run ({redact(str(exc).strip())}); its history keeps "
                "the previous curve points beside the new ones (summary, table, chart and artifact are current)",
                WriteBackWarning,
                stacklevel=3,
            )

    def _chart_preset(self, api: Any) -> str | None:
        """The id (``entity/name``) of the curve chart preset, registered if the entity lacks it; None (with a
        warning) when W&B refuses it, so that the curves fall back to the built-in line-series chart."""
        spec = curve_chart_spec()
        name = chart_preset_name(spec)
        preset = f"{self.source.entity}/{name}"
        try:
            # The public API has no lookup of a preset; the query goes the way the client sends its own.
            found = api._service_api.execute_graphql(_CUSTOM_CHART, {"id": preset})
            if (found or {}).get("customChart") is None:
                # Panels name a preset "entity/name", which is also what the lookup takes.
                api.create_custom_chart(
                    entity=self.source.entity,
                    name=name,
                    display_name="boontrack: expected best score out of n",
                    spec_type="vega2",
                    access="private",
                    spec=spec,
                )
        except Exception as exc:  # noqa: BLE001 - any failure only costs the band in the chart, never the write
            warnings.warn(
                f"{self._what()}: W&B could not register the chart preset {preset} ({redact(str(exc).strip())}); "
                "the curves are logged as a line-series chart without their bands (the band is in curves.png "
                "and the table)",
                WriteBackWarning,
                stacklevel=4,
            )
            return None
        return preset

    def _curve_chart(self, wandb: Any, outputs: SummaryOutputs, table: Any, preset: str | None) -> Any:
        """The chart of all curves: the preset with the band when there is one, else W&B's line series."""
        if preset is not None:
            from boontrack.integration import x_scale

            return wandb.plot_table(
                preset,
                table,
                dict(CHART_FIELDS),
                string_fields={
                    "title": "Expected score of the best-validation run out of n, with its bootstrap band",
                    "xname": "budget n (runs)",
                    "yname": "expected score",
                    "xscale": x_scale([n for curve in outputs.curves for n in curve.n.tolist()]),
                },
            )
        return wandb.plot.line_series(
            xs=[c.n.tolist() for c in outputs.curves],
            ys=[c.values.tolist() for c in outputs.curves],
            keys=[c.key for c in outputs.curves],
            title="Expected validation performance",
            xname="n",
        )

    def _log(self, wandb: Any, run: Any, outputs: SummaryOutputs, tmp: Path, preset: str | None) -> None:
        # The run is boontrack's own: whatever the previous write left that this one does not write goes
        # (groups or budgets no longer there, the old fingerprint, which is written again last).
        current = {*outputs.metrics, *(c.key for c in outputs.curves), STEP_KEY, TABLE_KEY, CHART_KEY, REPORT_KEY}
        current.add(f"{CHART_KEY}_table")  # the table wandb logs beside a chart (the preset or the line series)
        current.update(self._training_keys(outputs))
        for key in [k for k in run.summary.keys() if k not in current and not k.startswith("_")]:
            del run.summary[key]
        run.define_metric(STEP_KEY)
        for curve in outputs.curves:
            run.define_metric(curve.key, step_metric=STEP_KEY)
        for row in curve_rows(outputs.curves):
            run.log(row)
        table = None
        if "curves" in outputs.tables:
            columns, rows = outputs.tables["curves"]
            table = wandb.Table(columns=list(columns), data=[list(r) for r in rows])
            run.log({TABLE_KEY: table})
        if outputs.curves:
            run.log({CHART_KEY: self._curve_chart(wandb, outputs, table, preset)})
        if outputs.training:
            self._log_training(wandb, run, outputs, preset)
        if "report.html" in outputs.artifacts:
            run.log({REPORT_KEY: wandb.Html(outputs.artifacts["report.html"].decode(), inject=False)})
        run.summary.update(dict(outputs.metrics))
        self._log_artifact(wandb, run, outputs, tmp)

    def _log_training(self, wandb: Any, run: Any, outputs: SummaryOutputs, preset: str | None) -> None:
        """The training curves: their series (step metric :data:`TRAINING_STEP_KEY`), their table, and per metric
        a chart of the groups' means with the pointwise band shaded (the curve preset; none without it: the
        series then draw as W&B's own line charts)."""
        run.define_metric(TRAINING_STEP_KEY)
        for series in outputs.training:
            run.define_metric(series.key, step_metric=TRAINING_STEP_KEY)
        for row in curve_rows(outputs.training, TRAINING_STEP_KEY):
            run.log(row)
        columns, rows = outputs.tables["training_curves"]
        run.log({TRAINING_TABLE_KEY: wandb.Table(columns=list(columns), data=[list(r) for r in rows])})
        if preset is None:
            return
        metric_column = list(columns).index("metric")
        for metric in dict.fromkeys(row[metric_column] for row in rows):
            table = wandb.Table(columns=list(columns), data=[list(r) for r in rows if r[metric_column] == metric])
            chart = wandb.plot_table(
                preset,
                table,
                dict(TRAINING_FIELDS),
                string_fields={
                    "title": f"Mean {metric} across runs, with its pointwise bootstrap band",
                    "xname": "step",
                    "yname": f"mean {metric}",
                    "xscale": "linear",
                },
            )
            run.log({f"{TRAINING_CHART_KEY}/{metric}": chart})

    @staticmethod
    def _training_keys(outputs: SummaryOutputs) -> set[str]:
        """The history and summary keys of the training curves this write logs."""
        if not outputs.training:
            return set()
        columns, rows = outputs.tables["training_curves"]
        metric_column = list(columns).index("metric")
        charts = {f"{TRAINING_CHART_KEY}/{row[metric_column]}" for row in rows}
        return {
            *(series.key for series in outputs.training),
            TRAINING_STEP_KEY,
            TRAINING_TABLE_KEY,
            *charts,
            *(f"{chart}_table" for chart in charts),
        }

    def _log_artifact(self, wandb: Any, run: Any, outputs: SummaryOutputs, tmp: Path) -> None:
        artifact = wandb.Artifact(f"boontrack-{self.key[:16]}", type=ARTIFACT_TYPE, description=outputs.description)
        written = write_artifacts(tmp / "artifact", outputs.artifacts)
        for relative, target in zip(outputs.artifacts, written):
            artifact.add_file(str(target), name=relative)
        run.log_artifact(artifact)

    def write_fingerprint(self, fingerprint: str) -> None:
        run = self._public_run()
        if run is None:
            raise BackendError(f"{self._what()} was not found after writing it")
        stamp = {FINGERPRINT_KEY: fingerprint}
        if self._pending_token is not None:
            stamp[CHANGE_TOKEN_KEY] = self._pending_token
        with translate_errors(self._what(), self.source.timeout_s):
            run.summary.update(stamp)
        self._writing, self._pending_token = False, None

    def location(self) -> str:
        # The app lives where the API does, minus the "api." host prefix of W&B cloud; never any credential.
        base = os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai").rstrip("/").replace("://api.", "://", 1)
        return f"{base}/{self.source.path}/runs/{self.run_id}"
