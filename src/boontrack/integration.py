"""The public integration layer: everything a backend or a callback needs, and the one contract they keep.

A backend (a tracker such as MLflow or W&B, a sweep framework such as Optuna, Ray Tune or Hydra; built in under
``integrations/`` or published by a third party under the entry-point group ``boontrack.backends``) imports from
here and from :mod:`boontrack.exceptions` only: what it needs of :mod:`boontrack.backends`,
:mod:`boontrack.runframe`, :mod:`boontrack.pipeline`, :mod:`boontrack.spec`, the vocabulary and the renderers is
served here, never a private ``boontrack._*`` module and never another integration. The built-in ones hold to
exactly this (``tests/test_import_rules.py`` checks it), and a backend written against this module alone passes
the conformance suite that :mod:`boontrack.testing` ships (``examples/third_party_backend``).

What a backend uses:

- the run frame: :class:`RunRecord` values typed by :func:`build_run_frame` (or :func:`build_run_frame_long`
  for column-wise reads), and :func:`pick_values`, the one place where ``pick`` is applied (or refused by a
  source that holds one value per run); boontrack's own runs recognised by :func:`is_summary_run`;
- its options checked by :func:`check_options`, waits bounded by :func:`seconds_from_environment`;
- artifacts written under a directory by :func:`write_artifacts`, each path checked by :func:`artifact_path`;
- optional SDKs imported by :func:`import_optional` (its error names what to install: a third party passes its
  own distribution, ``distribution="boontrack-ledger"``), public names
  served lazily by :func:`lazy_exports`, credentials masked by :func:`redact` and :func:`describe_error`;
- a process that an integration starts ended with its parent, however the parent ends: :func:`end_with_parent`;
- another tracker written to by scheme, never imported: :func:`~boontrack.backends.sink_at`;
- options named in messages as the caller typed them: :func:`option_name`, :func:`option_setting`;
- the metrics whose per-step histories a spec's training curves read (:meth:`Source.read_histories`):
  :func:`history_metrics`, for a callback that keeps the histories it sees;
- what a sink or a callback shows of a summary, from the renderers: :func:`format_table` (the terminal table),
  :func:`markdown_literal` (text shown as itself in Markdown), :func:`training_path` (where a training-curve
  file goes), :func:`x_scale` (the axis scale the plots choose); and for a reaggregate engine
  (entry-point group ``boontrack.engines``), :class:`Job` and :func:`run_job_line`. These are imported on first
  use, so that importing this module stays cheap;
- the vocabulary a framework's options are spoken in: :func:`speaking` with :data:`HYDRA` (Hydra's keys).

The callback contract: every callback and ``summarize_*`` function takes the keywords of
:data:`CALLBACK_KEYWORDS`, with the same meaning everywhere (the docs' page "On a table of runs"
(``docs/guide/files.md``), section "One vocabulary for Python, the config file, Hydra and the command line",
lists them per function; ``tests/test_callback_contract.py`` checks the signatures against it), and the other
fields of :class:`~boontrack.spec.Spec` as ``**spec_options``. :func:`callback_options` turns them into a
checked spec and the destinations, once, when the callback is made: a bad option raises there. After the
sweep, the summary runs under :func:`after_sweep`, the one failure rule (nothing raises into the user's sweep
unless ``raise_on_error``), reading the runs once and analyzing them once for every destination
(:func:`summarize_after_sweep`, :func:`run_job`), each destination's failure reported on its own.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from boontrack import vocabulary
from boontrack._lazy import lazy_exports
from boontrack._optional import import_optional
from boontrack._redact import describe_error, redact
from boontrack._signals import end_with_parent
from boontrack.backends import (
    DEFAULT_PREFIX,
    Backend,
    CurveSeries,
    Direction,
    Discovered,
    Sink,
    Source,
    SummaryOutputs,
    discovery_key,
    sink_at,
)
from boontrack.exceptions import BackendError, InputError, MissingExtraError, WriteBackWarning
from boontrack.pipeline import (
    JobResult,
    after_sweep,
    open_sinks,
    resolve_direction,
    run_job,
    source_options,
    summarize_after_sweep,
    summarize_source,
    summary_key,
)
from boontrack.runframe import (
    GROUP_CURVE_ROLE,
    POINT_COLUMNS,
    SUMMARY_ROLE,
    SUMMARY_ROLE_TAG,
    MetricRequest,
    RunRecord,
    artifact_path,
    build_run_frame,
    build_run_frame_long,
    check_options,
    is_summary_run,
    pick_values,
    seconds_from_environment,
    write_artifacts,
)
from boontrack.spec import Spec
from boontrack.training_runs import history_metrics
from boontrack.vocabulary import HYDRA, speaking

if TYPE_CHECKING:  # served on first use (_LAZY): the renderers import numpy, the reaggregate job its machinery
    from boontrack.plots import x_scale
    from boontrack.reaggregate import Job, run_job_line
    from boontrack.reports import format_table, markdown_literal
    from boontrack.training_output import training_path

#: Names served on first use, by the module that defines them.
_LAZY = {
    "format_table": "boontrack.reports",
    "markdown_literal": "boontrack.reports",
    "training_path": "boontrack.training_output",
    "x_scale": "boontrack.plots",
    "Job": "boontrack.reaggregate",
    "run_job_line": "boontrack.reaggregate",
}

__all__ = [
    "CALLBACK_KEYWORDS",
    "DEFAULT_PREFIX",
    "GROUP_CURVE_ROLE",
    "HYDRA",
    "POINT_COLUMNS",
    "SUMMARY_ROLE",
    "SUMMARY_ROLE_TAG",
    "Backend",
    "BackendError",
    "CallbackOptions",
    "CurveSeries",
    "Direction",
    "Discovered",
    "InputError",
    "Job",
    "JobResult",
    "MetricRequest",
    "MissingExtraError",
    "RunRecord",
    "Sink",
    "Source",
    "Spec",
    "SummaryOutputs",
    "WriteBackWarning",
    "after_sweep",
    "artifact_path",
    "build_run_frame",
    "build_run_frame_long",
    "callback_options",
    "check_options",
    "describe_error",
    "discovery_key",
    "end_with_parent",
    "format_table",
    "history_metrics",
    "import_optional",
    "is_summary_run",
    "lazy_exports",
    "markdown_literal",
    "mlflow_destination",
    "open_sinks",
    "option_name",
    "option_setting",
    "pick_values",
    "redact",
    "resolve_direction",
    "run_job",
    "run_job_line",
    "seconds_from_environment",
    "sink_at",
    "source_options",
    "speaking",
    "summarize_after_sweep",
    "summarize_source",
    "summary_key",
    "training_path",
    "write_artifacts",
    "x_scale",
]

__getattr__, __dir__ = lazy_exports(globals(), _LAZY)

option_name = vocabulary.name
option_setting = vocabulary.setting

_SPEC_DEFAULTS = {f.name: f.default for f in fields(Spec)}
#: The keywords of every callback and ``summarize_*`` function, each meaning the same everywhere, with their
#: usual defaults (a function may default ``seed_column`` to the key its framework names the seed by).
#: ``val`` is required. The README's table of callbacks lists them.
CALLBACK_KEYWORDS: Mapping[str, Any] = {
    "val": inspect.Parameter.empty,
    **{
        name: _SPEC_DEFAULTS[name]
        for name in ("test", "n", "group_by", "seed_column", "task_column", "pick", "maximize")
    },
    **{name: _SPEC_DEFAULTS[name] for name in ("n_resamples", "confidence_level", "seed")},
    "tracking_uri": None,
    "out": None,
    "plots": True,
    "raise_on_error": False,
}
#: The keywords of :data:`CALLBACK_KEYWORDS` that are not fields of the spec.
_DESTINATION_KEYWORDS = ("tracking_uri", "out", "plots", "raise_on_error")


@dataclass(frozen=True)
class CallbackOptions:
    """What a callback was asked for, checked: the spec, and where the summary goes.

    ``tracking_uri``: the MLflow tracking URI the summary run is written to (the store of an MLflow sweep; for
    the other integrations, with their MLflow experiment, a second destination); ``out``: a directory;
    ``plots``: render the PNG plots; ``raise_on_error``: raise what goes wrong after the sweep instead of
    warning (:func:`after_sweep`).
    """

    spec: Spec
    tracking_uri: str | None
    out: Path | None
    plots: bool
    raise_on_error: bool


def mlflow_destination(experiment: str | None, tracking_uri: str | None = None) -> dict[str, dict[str, Any]]:
    """The ``also`` of :func:`summarize_source` that writes a summary run into the MLflow ``experiment`` (at
    ``tracking_uri``, else the process's), through the MLflow backend by its scheme; empty without an experiment.

    A ``tracking_uri`` without an experiment is a mistake in the call (:class:`InputError`): it says where an
    experiment is.
    """
    if experiment is None:
        if tracking_uri is not None:
            raise InputError(
                f"{option_name('tracking_uri')} says where {option_name('mlflow_experiment')} is: give both"
            )
        return {}
    return {f"mlflow:{experiment}": {} if tracking_uri is None else {"tracking_uri": tracking_uri}}


def callback_options(
    function: Callable[..., Any],
    arguments: Mapping[str, Any],
    *,
    spoken: vocabulary.Vocabulary = vocabulary.PYTHON,
) -> CallbackOptions:
    """The checked options of a call of ``function`` (a callback's ``__init__`` or a ``summarize_*`` function),
    from its arguments (``locals()`` at the top of the function): the keywords of :data:`CALLBACK_KEYWORDS` and
    ``**spec_options``.

    Earlier spellings in ``spec_options`` (``minimize``, ``resamples``, ``confidence``, ``bootstrap_seed``,
    ``seed_key``, ``mlflow_tracking_uri``) are accepted for one release with a :class:`DeprecationWarning`. A bad
    value or an unknown option raises :class:`InputError` naming it as the caller (``spoken``) typed it. A
    keyword of :data:`CALLBACK_KEYWORDS` the function does not take (a callback written before ``task_column``
    joined them) arrives through ``**spec_options``, or takes its default.
    """
    keywords = {name: arguments[name] for name in CALLBACK_KEYWORDS if name in arguments}
    spec_options = arguments.get("spec_options", {})
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    given, typed = vocabulary.modernize({**keywords, **spec_options}, defaults=defaults)
    with vocabulary.speaking(spoken.knowing(typed)):
        tracking_uri, out, plots, raise_on_error = (given.pop(name, None) for name in _DESTINATION_KEYWORDS)
        for name, value in (("plots", plots), ("raise_on_error", raise_on_error)):
            if not isinstance(value, bool):
                raise InputError(f"{vocabulary.name(name)} must be true or false, got {value!r}")
        if out is not None and not (isinstance(out, (str, Path)) and str(out)):
            raise InputError(f"{vocabulary.name('out')} must be a directory, got {out!r}")
        if tracking_uri is not None:
            source_options(tracking_uri=str(tracking_uri))  # InputError for what is not a tracking URI
        spec = Spec.from_keywords(given, spoken=spoken.knowing(typed))
    return CallbackOptions(
        spec=spec,
        tracking_uri=None if tracking_uri is None else str(tracking_uri),
        out=None if out is None else Path(out),
        plots=bool(plots),
        raise_on_error=bool(raise_on_error),
    )
