"""Comparing the runs of several sources (two CSV files, an MLflow experiment against a W&B sweep, a branch's sweep
against main's), and a gate that turns the comparison into a verdict.

The sources are read once each and joined into one run table whose extra grouping column :data:`SIDE_COLUMN`
holds each source's label; the analysis is then the one :func:`boontrack.analysis.analyze` runs between groups
(Boo_n of each side with intervals, ΔBoo_n and Δmean with theirs, the paired tests where the sides' seeds match,
Holm or Benjamini-Hochberg across the comparisons). The numbers are those of ``summarize`` on the runs of all
sources exported into one file with the label column (same seed).

This module imports nothing heavy at import time, and no tracker: sources are opened through
:func:`boontrack.backends.open_source`.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from boontrack import vocabulary
from boontrack.backends import DEFAULT_PREFIX, MetricRequest, Source
from boontrack.choices import GATE_QUANTITIES
from boontrack.exceptions import InputError
from boontrack.source_comparison import Gate, SourceComparison, comparison_outputs, curve_files, to_markdown
from boontrack.spec import Spec

if TYPE_CHECKING:
    import pandas as pd

    from boontrack.summary import ComparisonSummary, IntervalEstimate, Summary

__all__ = [
    "SIDE_COLUMN",
    "Gate",
    "SourceComparison",
    "compare_sources",
    "curve_files",
    "load_comparison",
    "to_markdown",
    "write_comparison",
]

#: The grouping column that holds each source's label in the joined run table.
SIDE_COLUMN = "source"
#: Claims a gate can require of every source against the first.
REQUIREMENTS = ("better", "not-worse")
#: Spec options that compare_sources decides itself: the first source is the baseline of every comparison.
_DECIDED = ("baseline", "compare")


def compare_sources(
    sources: Sequence[str | os.PathLike[str] | Source],
    *,
    labels: Sequence[str] | None = None,
    options: Sequence[Mapping[str, Any]] | None = None,
    require: Literal["better", "not-worse"] | None = None,
    margin: float = 0.0,
    gate_on: Literal["iqm", "boo-n", "mean", "prob-improvement"] | None = None,
    write_to: str | None = None,
    write_options: Mapping[str, Any] | None = None,
    progress: bool = False,
    threads: int | None = None,
    **spec_options: Any,
) -> SourceComparison:
    """Compare the runs of two or more sources: each against the first, with the statistics of a summary.

    The runs of the sources are joined into one table with a column :data:`SIDE_COLUMN` holding each source's
    label, which groups them (after ``group_by``, whose groups are matched by label across the sources), and
    analyzed as :func:`boontrack.analysis.analyze` analyzes groups: Boo_n per side (Bajgar et al. 2018, eq. 2)
    with intervals, ΔBoo_n and Δmean with studentized intervals, the paired t-test and Wilcoxon signed-rank test
    when the sides' seeds match (``seed_column``), else Welch and Mann-Whitney, and p-values adjusted across the
    comparisons (``correction``). Run ids shared by two sources are qualified as ``LABEL/RUN_ID``.

    Several metrics are compared at once when ``val`` or ``test`` is a sequence: one validation metric ranks the
    runs for each of several test metrics, several validation metrics are each their own metric, or both give
    (val, test) pairs in order. Each metric is analyzed as above, and the p-values are adjusted over the whole
    family, every metric's comparisons together (the t-tests together, the rank tests together).

    Parameters
    ----------
    sources
        Two or more: a file path or ``SCHEME:LOCATION`` (see :func:`boontrack.backends.open_source`), or an open
        :class:`~boontrack.backends.Source`. The first is the baseline.
    labels
        One per source, distinct (default: a file's stem, else the location after ``SCHEME:``).
    options
        One mapping per source: the keyword options of its backend (``parent``, ``tracking_uri``, ``sweep``,
        ``group``, ``study``, ...), for sources given as text.
    require
        A claim of every source against the first: ``"better"`` or ``"not-worse"`` (with ``margin``); the
        verdict is in :attr:`SourceComparison.gate`.
    margin
        How much worse than the baseline ``not-worse`` allows (> 0, in the metric's units).
    gate_on
        With a task column (``task_column``): the difference across the tasks ``require`` decides on, each
        source's approach against the first's: ``"iqm"`` (None: this), ``"boo-n"`` (at the largest budget with an
        interval), ``"mean"`` or ``"prob-improvement"`` (its interval must exclude 0.5; ``"better"`` only).
        Refused without a task column.
    write_to
        ``SCHEME:LOCATION`` of a tracker to write the comparison to, as its own run (:func:`write_comparison`:
        ``mlflow:EXPERIMENT``, ``wandb:ENTITY/PROJECT``); what it found is in :attr:`SourceComparison.written`.
    write_options
        The options of ``write_to``'s backend (MLflow: ``tracking_uri``; W&B: ``timeout``).
    progress, threads
        As for :func:`boontrack.analysis.analyze`.
    **spec_options
        The options of :class:`boontrack.spec.Spec` (``val``, ``test``, ``n``, ``group_by``, ``seed_column``,
        ``maximize``, ``n_resamples``, ``confidence_level``, ``seed``, ...), except ``baseline`` and
        ``compare``; ``val`` and ``test`` may be sequences (several metrics). ``task_column="source"`` makes
        each source one task (its label the task's name): the approaches are then the groups of ``group_by``
        within the sources, compared within each task and across the tasks, not the sources. The direction of each metric is
        the sources' own where they know it, else the caller's, else the rule for names (a loss-like name
        without a direction is refused); the sources must agree on it.

    Returns
    -------
    SourceComparison

    Raises
    ------
    ValueError
        (:class:`~boontrack.exceptions.InputError`) a bad option, naming it; sources that disagree on the
        direction; groups found in some sources only; a ``write_to`` that cannot hold a comparison. Raised
        before any source is read where the options alone show it.
    BackendError
        A source could not be read, or ``write_to`` could not be written.
    """
    specs, names, per_source, destination_options = _compare_sources_iv(
        sources, labels, options, (require, margin, gate_on), (write_to, write_options), spec_options
    )
    from boontrack.analysis import adjusted_across
    from boontrack.backends import open_source
    from boontrack.pipeline import joint_change_token, resolve_direction

    opened = [s if isinstance(s, Source) else open_source(os.fspath(s), **o) for s, o in zip(sources, per_source)]
    # every direction is decided before any run is read
    specs = [_agreed_direction([resolve_direction(source, spec) for source in opened], names) for spec in specs]
    # asked before any run is read, as a summary's is: a change in between is seen by the next run, never hidden
    token = None if write_to is None else joint_change_token([(source, spec) for spec in specs for source in opened])
    described = " vs ".join(f"{name}: {source.describe()}" for name, source in zip(names, opened))
    summaries = adjusted_across(
        [_analyzed(opened, names, spec, described, progress=progress, threads=threads) for spec in specs]
    )
    gate = _gate(summaries, require, margin, gate_on or "iqm") if require is not None else None
    result = SourceComparison(labels=names, summaries=summaries, gate=gate, change_token=token)
    if write_to is None:
        return result
    return dataclasses.replace(result, written=write_comparison(result, write_to, **destination_options))


def _analyzed(
    opened: Sequence[Source], names: Sequence[str], spec: Spec, described: str, *, progress: bool, threads: int | None
) -> Summary:
    """One metric's analysis of the runs of every source, joined and grouped by label."""
    from boontrack.analysis import analyze
    from boontrack.pipeline import read_runs
    from boontrack.runtable import RunTable

    request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.higher_is_better, pick=spec.pick)
    joined = _joined([read_runs(source, request) for source in opened], names, spec)
    if spec.task_column == SIDE_COLUMN:  # each source one task: the groups within are the approaches compared
        table = RunTable.from_frame(joined, spec)
        return analyze(table, spec, progress=progress, source=described, threads=threads)
    joined_spec = dataclasses.replace(spec, group_by=(*(spec.group_by or ()), SIDE_COLUMN))
    table = RunTable.from_frame(joined, joined_spec)
    pairs = _matched_pairs(table, names)
    return analyze(table, joined_spec, progress=progress, source=described, threads=threads, pairs=pairs)


#: Keys of a comparison's config file beside the options of Spec: compare_sources' own keywords.
_COMPARISON_KEYS = ("sources", "labels", "options", "require", "margin", "gate_on", "write_to", "write_options")


def load_comparison(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The keyword arguments of :func:`compare_sources` that a config file (TOML) gives, ``sources`` included.

    The file's top-level keys are those of :func:`compare_sources`, as in Python: ``sources`` (a list; every
    relative path, of a file, a SQLite URI or a local tracker's directory, in ``options`` and ``write_options``
    too, is relative to the file's directory), ``labels``, ``options`` (a list of tables, one per source:
    ``parent``, ``tracking_uri``, ... and any other option of the source's backend), ``require``, ``margin``,
    ``write_to`` and ``write_options`` (a table), and the options of :class:`~boontrack.spec.Spec` (``val``,
    ``test``, ``seed_column``, ``n_resamples``, ...; a ``normalize_with`` file is relative to the config file
    too). For example::

        sources = ["main.csv", "mlflow:"]
        labels = ["main", "branch"]
        options = [{}, {parent = "RUN_ID", tracking_uri = "sqlite:///mlflow.db"}]
        val = "val_acc"
        test = ["test_acc", "test_f1"]
        seed_column = "seed"
        require = "not-worse"
        margin = 0.002
        write_to = "mlflow:comparisons"
        write_options = {tracking_uri = "sqlite:///mlflow.db"}

    Raises
    ------
    ValueError
        (:class:`~boontrack.exceptions.InputError`) the file cannot be read, is not TOML, or has an unknown key
        or a ``sources`` or ``options`` of the wrong shape; the other values are checked by
        :func:`compare_sources`.
    """
    from boontrack.pipeline import SOURCE_OPTIONS, source_options
    from boontrack.reaggregate import SPEC_KEYS, options_relative_to, read_config, relative_to, spec_relative_to

    path = Path(path)
    base = path.parent.absolute()
    document = read_config(path)
    unknown = sorted(set(document) - set(_COMPARISON_KEYS) - SPEC_KEYS)
    if unknown:
        known = ", ".join([*_COMPARISON_KEYS, *sorted(SPEC_KEYS)])
        raise InputError(f"config {path}: unknown key {unknown[0]!r} (known keys: {known})")
    sources = document.get("sources")
    if not isinstance(sources, list) or not all(isinstance(source, str) and source for source in sources):
        raise InputError(f"config {path}: 'sources' must be a list of files or SCHEME:LOCATION texts, got {sources!r}")
    keywords = dict(spec_relative_to(base, document), sources=[relative_to(base, source) for source in sources])
    if isinstance(document.get("write_options"), dict):  # checked with the destination
        keywords["write_options"] = options_relative_to(base, document["write_options"])
    options = document.get("options")
    if options is not None:
        if not isinstance(options, list) or not all(isinstance(each, dict) for each in options):
            raise InputError(f"config {path}: 'options' must be a list of tables, one per source")
        options = [options_relative_to(base, each) for each in options]
        named = [{key: value for key, value in each.items() if key in SOURCE_OPTIONS} for each in options]
        keywords["options"] = [
            source_options(**chosen, options={key: value for key, value in each.items() if key not in chosen})
            for chosen, each in zip(named, options)
        ]
    return keywords


def _compare_sources_iv(
    sources: Any,
    labels: Any,
    options: Any,
    gate: tuple[Any, Any, Any],
    destination: tuple[Any, Any],
    spec_options: dict[str, Any],
) -> tuple[list[Spec], tuple[str, ...], list[dict[str, Any]], dict[str, Any]]:
    """The spec of each metric, the labels, each source's options and the options of the destination (``write_to``
    and ``write_options``); InputError naming the first bad argument."""
    if isinstance(sources, (str, Source)) or not isinstance(sources, Sequence) or len(sources) < 2:
        raise InputError(f"sources must be a sequence of two or more sources, got {sources!r}")
    for source in sources:
        if not isinstance(source, (str, os.PathLike, Source)) or (isinstance(source, str) and not source):
            raise InputError(f"sources must be paths, SCHEME:LOCATION texts or Source objects, got {source!r}")
    decided = [name for name in _DECIDED if name in spec_options]
    if decided:
        raise InputError(f"{vocabulary.name(decided[0])} is not an option here: the first source is the baseline")
    specs = [Spec.from_keywords({**spec_options, **metric}) for metric in _metrics(spec_options)]
    reported = [spec.metric for spec in specs]
    if len(set(reported)) != len(reported):
        raise InputError(f"the metrics compared must be distinct, got {', '.join(reported)}")
    names = _labels(sources, labels)
    if options is None:
        options = [{}] * len(sources)
    if isinstance(options, Mapping) or not isinstance(options, Sequence) or len(options) != len(sources):
        raise InputError(f"options must hold one mapping per source ({len(sources)}), got {options!r}")
    if not all(isinstance(each, Mapping) for each in options):
        raise InputError(f"options must hold one mapping per source, got {options!r}")
    for source, each in zip(sources, options):
        if each and isinstance(source, Source):
            raise InputError(f"options are for sources given as text; {source.describe()!r} is already open")
    _gate_iv(*gate)
    if gate[2] is not None and specs[0].task_column is None:
        raise InputError(
            f"{vocabulary.name('gate_on')} names a difference across tasks: give {vocabulary.name('task_column')}"
        )
    return specs, names, [dict(each) for each in options], check_destination(*destination)


def _metrics(spec_options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``val`` and ``test`` of each metric: one val for each test, each val alone, or (val, test) pairs."""
    given = {key: spec_options.get(key) for key in ("val", "test")}
    several = {}
    for key, value in given.items():
        if isinstance(value, Sequence) and not isinstance(value, str):
            if not value:
                raise InputError(f"{vocabulary.name(key)} must name one or more metrics, got {value!r}")
            several[key] = list(value)
    vals, tests = several.get("val", [given["val"]]), several.get("test", [given["test"]])
    if len(vals) > 1 and len(tests) > 1 and len(vals) != len(tests):
        raise InputError(
            f"give one {vocabulary.name('test')} per {vocabulary.name('val')} ({len(vals)}), or one "
            f"{vocabulary.name('val')} for every {vocabulary.name('test')}, got {len(tests)}"
        )
    if len(vals) > 1 and len(tests) == 1 and tests[0] is not None:
        raise InputError(f"several {vocabulary.name('val')} need one {vocabulary.name('test')} each (or none), got one")
    if len(tests) == 1:
        tests = tests * len(vals)
    if len(vals) == 1:
        vals = vals * len(tests)
    return [{"val": val, "test": test} for val, test in zip(vals, tests)]


def _gate_iv(require: Any, margin: Any, gate_on: Any) -> None:
    if gate_on is not None and gate_on not in GATE_QUANTITIES:
        raise InputError(f"{vocabulary.name('gate_on')} must be one of {', '.join(GATE_QUANTITIES)}, got {gate_on!r}")
    if gate_on == "prob-improvement" and require == "not-worse":
        raise InputError(
            f"{vocabulary.setting('gate_on', gate_on)} decides {vocabulary.setting('require', 'better')} only: a "
            "margin in the metric's units says nothing of a probability"
        )
    if require is not None and require not in REQUIREMENTS:
        raise InputError(f"{vocabulary.name('require')} must be one of {', '.join(REQUIREMENTS)}, got {require!r}")
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin) or margin < 0:
        raise InputError(f"{vocabulary.name('margin')} must be a finite number >= 0, got {margin!r}")
    not_worse = vocabulary.setting("require", "not-worse")
    if require == "not-worse" and margin == 0:
        raise InputError(
            f"{vocabulary.name('margin')} must be > 0 with {not_worse} "
            f"(not worse by 0 is {vocabulary.setting('require', 'better')})"
        )
    if require != "not-worse" and margin != 0:
        raise InputError(f"{vocabulary.name('margin')} is for {not_worse} only, got {margin!r}")


def check_destination(write_to: Any, write_options: Any) -> dict[str, Any]:
    """The options of ``write_to`` (dashes in names as underscores), checked with it before any run is read:
    ``write_to`` names a backend that holds summaries of runs kept elsewhere, and every option given is one it
    declares (:attr:`~boontrack.backends.Backend.sink_options`; a backend that declares none checks them when
    it opens)."""
    from boontrack.backends import Backend, available_backends, load_backend

    if write_options is not None and (
        not isinstance(write_options, Mapping) or not all(isinstance(key, str) for key in write_options)
    ):
        raise InputError(f"{vocabulary.name('write_options')} must map option names to values, got {write_options!r}")
    options = {key.replace("-", "_"): value for key, value in (write_options or {}).items()}
    if write_to is None:
        if options:
            raise InputError(f"{vocabulary.name('write_options')} need {vocabulary.name('write_to')}: where to write")
        return options
    scheme, sep, _ = write_to.partition(":") if isinstance(write_to, str) else ("", "", "")
    backend = load_backend(scheme) if sep and scheme in available_backends() else None
    if backend is None or type(backend).open_sink is Backend.open_sink:
        raise InputError(
            f"{vocabulary.name('write_to')}: expected SCHEME:LOCATION of a tracker that holds summaries of runs kept "
            f"elsewhere (e.g. mlflow:EXPERIMENT, wandb:ENTITY/PROJECT), got {write_to!r}"
        )
    if backend.sink_options is not None:
        known = sorted(name.replace("-", "_") for name in backend.sink_options)
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise InputError(
                f"{vocabulary.name('write_options')}: {scheme} destinations take no option {unknown[0]!r} "
                f"(known: {', '.join(known) or 'none'})"
            )
    return options


def _labels(sources: Sequence[str | os.PathLike[str] | Source], labels: Any) -> tuple[str, ...]:
    """The given labels, checked, or readable defaults (a file's stem, a tracker's location)."""
    if labels is None:
        names = tuple(_default_label(source) for source in sources)
        if len(set(names)) == len(names):
            return names
        raise InputError(f"the sources' default labels repeat ({', '.join(names)}): give {vocabulary.name('labels')}")
    if isinstance(labels, str) or not isinstance(labels, Sequence) or len(labels) != len(sources):
        raise InputError(f"{vocabulary.name('labels')} must hold one label per source ({len(sources)}), got {labels!r}")
    for label in labels:
        # a group label of the joined table is "KEY=VALUE,KEY=VALUE": a label holding either would be ambiguous
        if not isinstance(label, str) or not label.strip() or "," in label or "=" in label:
            raise InputError(f"{vocabulary.name('labels')} must be non-empty texts without ',' or '=', got {label!r}")
    if len(set(labels)) != len(labels):
        raise InputError(f"{vocabulary.name('labels')} must be distinct, got {list(labels)!r}")
    return tuple(labels)


def _default_label(source: str | os.PathLike[str] | Source) -> str:
    from boontrack.backends import available_backends

    if isinstance(source, Source):
        return source.describe()
    source = os.fspath(source)
    scheme, sep, location = source.partition(":")
    if sep and scheme in available_backends():
        return location
    return Path(source).stem


def _agreed_direction(specs: Sequence[Spec], names: Sequence[str]) -> Spec:
    """The first source's resolved spec, when every source resolves the metric's direction alike."""
    directions = {name: spec.higher_is_better for name, spec in zip(names, specs)}
    if len(set(directions.values())) > 1:
        said = ", ".join(f"{name}: {'higher' if up else 'lower'} is better" for name, up in directions.items())
        raise InputError(f"the sources disagree on the direction of {specs[0].val!r} ({said})")
    return specs[0]


def _joined(frames: Sequence[pd.DataFrame], names: Sequence[str], spec: Spec) -> pd.DataFrame:
    """One frame of every source's runs, in source order, with the columns the spec uses under the names it
    gives them (a tracker's ``metrics.val_acc`` beside a file's ``val_acc``) and the label column."""
    import pandas as pd

    parts = [_used_columns(frame, spec).assign(**{SIDE_COLUMN: name}) for frame, name in zip(frames, names)]
    ids = [part["run_id"].dropna().astype(str) for part in parts if "run_id" in part.columns]
    if ids and pd.concat(ids).duplicated().any():  # the same run in two sources (a copy, a shifted export)
        for part, name in zip(parts, names):
            if "run_id" in part.columns:
                ids = part["run_id"]
                part["run_id"] = ids.where(ids.isna(), name + "/" + ids.astype(str))
    from boontrack.runtable import format_value

    for column in (spec.seed_column, spec.task_column):  # a tracker's seed "3" (a param, text) pairs with a file's 3
        if column is not None:
            for part in parts:
                values = part[column]
                part[column] = values.map(format_value).where(values.notna(), None)
    if any("status" in part.columns for part in parts):  # a source without statuses has only runs that count
        parts = [part if "status" in part.columns else part.assign(status="finished") for part in parts]
    return pd.concat(parts, ignore_index=True)


def _used_columns(frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    from boontrack.runtable import resolve_column

    wanted = {spec.val: "metric"}
    if spec.test is not None:
        wanted[spec.test] = "metric"
    if spec.duration is not None:
        wanted[spec.duration] = "metric"
    task = spec.task_column if spec.task_column != SIDE_COLUMN else None  # sources as tasks: the label column
    for name in (spec.seed_column, task, *(spec.group_by or ())):
        if name is not None:
            wanted[name] = "param"
    if SIDE_COLUMN in wanted:
        raise InputError(f"{SIDE_COLUMN!r} names the sources' labels in a comparison; it cannot be a column used")
    columns = [str(c) for c in frame.columns]
    renamed = {resolve_column(columns, name, kind): name for name, kind in wanted.items()}
    kept = [c for c in ("run_id", "status", "duration_s") if c in columns and c not in renamed]
    return frame[[*kept, *renamed]].rename(columns=renamed)


def _matched_pairs(table: Any, names: Sequence[str]) -> list[tuple[str, str]]:
    """(group, baseline) labels: each source's group against the first source's group with the same keys."""
    keys = [column for column in table.group_by if column != SIDE_COLUMN]
    first = table.runs.groupby("group", sort=False)[[*keys, SIDE_COLUMN]].first()
    label_of = {(tuple(row[:-1]), row[-1]): label for label, row in zip(first.index, first.itertuples(index=False))}
    within = sorted({key for key, _ in label_of}, key=str)
    pairs = []
    for key in within:
        missing = [name for name in names if (key, name) not in label_of]
        if missing:
            shown = ", ".join(f"{k}={v}" for k, v in zip(keys, key)) or "all runs"
            have = [name for name in names if name not in missing]
            raise InputError(
                f"group {shown} is in {', '.join(have)} but not in {', '.join(missing)}: groups are matched by label"
            )
        pairs += [(label_of[key, name], label_of[key, names[0]]) for name in names[1:]]
    return pairs


def _gate(summaries: Sequence[Summary], require: Literal["better", "not-worse"], margin: float, gate_on: str) -> Gate:
    """The verdict of ``require`` over every comparison of every metric (with a task column, every comparison
    across the tasks, on ``gate_on``), decided by the comparison closest to failing relative to its interval's
    width (the metrics' units differ)."""
    decisive = []
    for summary in summaries:
        for group, baseline, quantity, interval, up, threshold in _claims(summary, margin, gate_on):
            sign = 1.0 if up else -1.0
            bound = interval.ci_low if up else interval.ci_high
            room = sign * (bound - threshold) if math.isfinite(bound) else -math.inf
            width = interval.ci_high - interval.ci_low
            relative = room / width if width > 0 else math.copysign(math.inf, room if room > 0 else -1.0)
            decisive.append((relative, summary, group, baseline, quantity, interval, up, bound, threshold, room > 0))
    _, summary, group, baseline, quantity, interval, up, bound, threshold, passed = min(
        decisive, key=lambda item: item[0]
    )
    end: Literal["low", "high"] = "low" if up else "high"
    level = summary.spec.confidence_level * 100
    said = "better than" if require == "better" else f"not worse by more than {margin:g} than"
    relation = (">" if up else "<") if passed else ("≤" if up else "≥")
    across = "" if summary.across_tasks is None else f" across {len(summary.across_tasks.tasks)} tasks"
    verdict = (
        f"{'passed' if passed else 'not supported'}: {group} {said} {baseline}{across} in "
        f"{summary.metric} ({'higher' if summary.spec.higher_is_better else 'lower'} is better): the {level:g} % "
        f"interval of {quantity} is [{interval.ci_low:.4g}, {interval.ci_high:.4g}], its {end} end {bound:.4g} "
        f"{relation} {threshold:g}"
    )
    return Gate(
        require=require,
        margin=float(margin),
        passed=passed,
        metric=summary.metric,
        group=group,
        baseline=baseline,
        quantity=quantity,
        end=end,
        bound=bound,
        threshold=threshold,
        verdict=verdict,
    )


def _claims(summary: Summary, margin: float, gate_on: str) -> list[tuple[str, str, str, IntervalEstimate, bool, float]]:
    """What the gate holds each comparison of ``summary`` to: (group, baseline, quantity, its interval, whether
    its interval's low end decides, the threshold). Within a sweep: the headline difference of each comparison;
    across tasks: ``gate_on``'s difference of each comparison of approaches, or the probability of improvement,
    whose low end must pass 0.5."""
    up = summary.spec.higher_is_better
    threshold = (-1.0 if up else 1.0) * margin + 0.0  # never -0
    if summary.across_tasks is None:
        return [(c.group, c.baseline, *_headline_difference(c), up, threshold) for c in summary.comparisons]
    claims: list[tuple[str, str, str, IntervalEstimate, bool, float]] = []
    for c in summary.across_tasks.comparisons:
        if gate_on == "prob-improvement":
            claims.append((c.group, c.baseline, "P(group > baseline)", c.prob_improvement, True, 0.5))
            continue
        if gate_on == "boo-n":
            given = [n for n, interval in c.boo_n_difference.items() if interval.method != "refused"]
            n = max(given or c.boo_n_difference)
            quantity, interval = f"ΔBoo_{n}", c.boo_n_difference[n]
        else:
            quantity = "ΔIQM" if gate_on == "iqm" else "Δmean"
            interval = c.iqm_difference if gate_on == "iqm" else c.mean_difference
        claims.append((c.group, c.baseline, f"{quantity} across tasks", interval, up, threshold))
    return claims


def _headline_difference(comparison: ComparisonSummary) -> tuple[str, IntervalEstimate]:
    """ΔBoo_n at the largest budget both sides report (Δmean when they share none)."""
    if comparison.boo_n_difference:
        n = max(comparison.boo_n_difference)
        return f"ΔBoo_{n}", comparison.boo_n_difference[n]
    return "Δmean", comparison.mean_difference


def write_comparison(
    result: SourceComparison,
    destination: str,
    *,
    prefix: str = DEFAULT_PREFIX,
    force: bool = False,
    **options: Any,
) -> Literal["updated", "unchanged"]:
    """Write a comparison to a tracker as a summary is written: its own run (``"mlflow:EXPERIMENT"``: a run in
    that experiment, created when missing; ``"wandb:ENTITY/PROJECT"``: a run in that project) with every number
    as a metric, the report as an artifact.

    The metrics are those of a summary of the joined runs (``<prefix><metric>/<group>/boo_<n>``,
    ``.../<group>/vs_<base>/boo_<n>``, ..., see :mod:`boontrack.reports`), for each metric compared, and the
    gate's verdict when a claim was required: ``<prefix>gate/passed`` (1 or 0), ``<prefix>gate/bound`` and
    ``<prefix>gate/threshold``. The artifacts are ``report.md`` (:func:`to_markdown` with ``svg=True``), each
    metric's plot of the curves it links (``curves_<metric>.svg``, :func:`curve_files`) and ``comparison.json``
    (the labels, the verdict and each metric's summary). The run is keyed by the sources, labels and options;
    it is rewritten only when its fingerprint (every source's runs and values, the options, the gate, the
    prefix and boontrack's version) changed, or with ``force``. It is written as a summary is
    (:func:`boontrack.pipeline.publish`): the outputs, the sources' change token
    (:attr:`SourceComparison.change_token`, when it was asked), and the fingerprint last, so that a write that
    fails or is killed midway is redone by the next run.

    Parameters
    ----------
    result
        A comparison of :func:`compare_sources`.
    destination
        ``SCHEME:LOCATION`` of a backend that holds summaries of runs kept elsewhere (``mlflow:EXPERIMENT``,
        ``wandb:ENTITY/PROJECT``).
    prefix, force
        As for a summary's write-back.
    **options
        The destination backend's options (MLflow: ``tracking_uri``; W&B: ``timeout``).

    Returns
    -------
    str
        ``"updated"``, or ``"unchanged"`` when the destination held this comparison already (nothing written).

    Raises
    ------
    ValueError
        (:class:`~boontrack.exceptions.InputError`) a destination that cannot hold it, or a bad option.
    BackendError
        The tracker failed.
    """
    from boontrack.backends import sink_at
    from boontrack.pipeline import publish

    options = check_destination(destination, options)
    key, fp = _comparison_identity(result, prefix)
    sink = sink_at(destination, key, **options)
    # the one write protocol of summaries: fingerprint, write, change token, fingerprint last
    (done,) = publish(
        [sink],
        fp,
        lambda: comparison_outputs(result, prefix),
        token=result.change_token,
        force=force,
        raise_on_error=True,
    )
    assert done.status != "write-failed"  # raised instead
    return done.status


def _comparison_identity(result: SourceComparison, prefix: str) -> tuple[str, str]:
    """The key naming a comparison (its sources, labels and options) and the fingerprint of what it holds."""
    import hashlib
    import json

    from boontrack.pipeline import fingerprint, summary_key

    gate = None if result.gate is None else [result.gate.require, result.gate.margin]
    where = [summary_key(summary.source or "", summary.spec) for summary in result.summaries]
    key = hashlib.sha256(json.dumps([where, list(result.labels), gate]).encode()).hexdigest()[:32]
    prints = []
    for summary in result.summaries:
        assert summary.table is not None  # an analysis of compare_sources keeps its runs
        prints.append(fingerprint(summary.table, summary.spec, source_identity=summary.source or "", prefix=prefix))
    return key, hashlib.sha256(json.dumps([key, prints, gate]).encode()).hexdigest()
