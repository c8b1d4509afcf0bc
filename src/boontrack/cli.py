"""The ``boontrack`` command: ``summarize`` a sweep, ``reaggregate`` the jobs of a config file, ``simulate`` the
estimators and intervals on a population.

Start-up stays fast: this module imports click and boontrack's light modules only; numpy, pandas and the
tracker SDKs are imported inside the commands that need them.

Exit status: 0 success, 1 a tracker failed or a result could not be written (:class:`BackendError`), 2 bad
input (:class:`InputError`: data, columns, options or config), 130 or 143 when SIGINT or SIGTERM stopped the
command (between two batches of the bootstrap: :func:`boontrack._signals.stop_on_signals`). Errors are one line
on stderr; ``--verbose`` shows the traceback.

Options are named by the one table of :mod:`boontrack.vocabulary` (``--resamples`` is ``n_resamples`` in Python
and the config file), and messages name them as this command's caller typed them.

Commands defined elsewhere (``boontrack demo``, a plugin's) are registered under the entry-point group
``boontrack.commands`` (name -> ``"module:attribute"``, a :class:`click.Command`); their module is imported only
when the command runs or its help is shown. Engines of ``reaggregate --engine`` (Ray) are registered under
``boontrack.engines``. This module imports no integration.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import importlib
import sys
import traceback
import warnings
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Literal

import click

from boontrack import __version__, vocabulary
from boontrack._redact import redact
from boontrack._signals import Stopped, stop_on_signals
from boontrack.backends import DEFAULT_PREFIX
from boontrack.choices import (
    CI_METHODS,
    COMPARE_MODES,
    CORRECTIONS,
    DEFAULT_BUDGETS,
    ESTIMATORS,
    GATE_QUANTITIES,
    NORMALIZATIONS,
    PICK_SPELLINGS,
    STUDY_CI_METHODS,
)
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.spec import Spec
from boontrack.vocabulary import COMPARE_FLAGS, FLAGS, SIMULATE_FLAGS

__all__ = ["COMMANDS_GROUP", "ENGINES_GROUP", "lazy_commands", "main"]

#: Entry-point groups: subcommands defined elsewhere (name -> a click.Command), and reaggregate's engines
#: (name -> a class taking ``(slots, *, address)``, see :class:`boontrack.reaggregate.Engine`).
COMMANDS_GROUP = "boontrack.commands"
ENGINES_GROUP = "boontrack.engines"

#: Exit status per error class; the first match wins (InputError is a ValueError).
EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = ((BackendError, 1), (ValueError, 2))

_SPEC_DEFAULTS = {f.name: f.default for f in dataclasses.fields(Spec)}


class _Resamples(click.ParamType):
    """A number of resamples, or ``auto``."""

    name = "N|auto"

    def convert(self, value: Any, param: Any, ctx: Any) -> int | str:
        if value == "auto" or isinstance(value, int):
            return value
        try:
            return int(value)
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor 'auto'", param, ctx)


_RESAMPLES = _Resamples()
_VERBOSE = "boontrack.verbose"


@functools.lru_cache(maxsize=1)
def lazy_commands() -> dict[str, str]:
    """Subcommands registered under :data:`COMMANDS_GROUP`, imported on use: name -> ``"module:attribute"``."""
    return {ep.name: ep.value for ep in entry_points(group=COMMANDS_GROUP)}


def _engines() -> dict[str, Any]:
    """Engines registered under :data:`ENGINES_GROUP`: name -> entry point (loaded when chosen)."""
    return {ep.name: ep for ep in entry_points(group=ENGINES_GROUP)}


class _BoontrackGroup(click.Group):
    """A click group that loads the registered commands on use and turns boontrack errors into exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *lazy_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        registered = lazy_commands()
        if cmd_name in registered and cmd_name not in self.commands:
            module, _, attribute = registered[cmd_name].partition(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, cmd_name)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Click's entry point, with its usage errors on one line (click prints usage, hint and error on four)."""
        run: Callable[..., Any] = super().main  # click's overloads do not cover a forwarded call
        if not standalone_mode:
            return run(*args, standalone_mode=False, **kwargs)
        try:
            with stop_on_signals():
                code = run(*args, standalone_mode=False, **kwargs)
        except Stopped as stopped:  # a signal after the command's own handling
            code = _stopped(stopped, verbose=False)
        except click.exceptions.ClickException as exc:
            click.echo(f"Error: {_usage_line(exc)}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except Stopped as stopped:  # before click takes it for a Ctrl-C of its own ("Aborted!", exit 1)
            ctx.exit(_stopped(stopped, verbose=bool(ctx.meta.get(_VERBOSE))))
        except Exception as exc:
            verbose = bool(ctx.meta.get(_VERBOSE))
            if verbose:
                click.echo(redact(traceback.format_exc()), err=True, nl=False)
            code = next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), None)
            click.echo(f"Error: {_one_line(exc, expected=code is not None, verbose=verbose)}", err=True)
            ctx.exit(code or 1)


def _stopped(stopped: Stopped, *, verbose: bool) -> int:
    """One line for work stopped by a signal (the traceback before it with ``--verbose``), and the exit status
    of a process ended by that signal: 128 + its number (130 for SIGINT, 143 for SIGTERM)."""
    if verbose:
        click.echo(redact(traceback.format_exc()), err=True, nl=False)
    click.echo(f"Error: {stopped}", err=True)
    return 128 + stopped.signum


def _one_line(exc: BaseException, *, expected: bool, verbose: bool = False) -> str:
    text = redact(" ".join(str(exc).split()))
    if expected:
        return text
    hint = "" if verbose else " (run with --verbose for the traceback)"
    return f"unexpected {type(exc).__name__}: {text}{hint}"


def _usage_line(exc: click.exceptions.ClickException) -> str:
    """A click error on one line, with the command's help hint for usage errors."""
    text = redact(" ".join(exc.format_message().split()))
    context = getattr(exc, "ctx", None)
    if isinstance(exc, click.exceptions.UsageError) and context is not None:
        text += f" (see '{context.command_path} --help')"
    return text


def _show_warning(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
    """Warnings as one line on stderr (never on stdout, which may carry JSON)."""
    click.echo(f"Warning: {redact(' '.join(str(message).split()))}", err=True)


@click.group(cls=_BoontrackGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--verbose", "-v", is_flag=True, help="Show tracebacks of errors, and the INFO lines of MLflow, Ray and others."
)
@click.version_option(__version__, "--version", "-V", prog_name="boontrack")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Honest numbers from ML sweeps: Boo_n, expected-validation curves, intervals and comparisons.

    SOURCE is a file of runs (CSV, TSV, JSON lines, Parquet) or SCHEME:LOCATION for a tracker backend,
    e.g. mlflow:EXPERIMENT, wandb:ENTITY/PROJECT, wandb-offline:DIR, optuna:STORAGE_URL.
    """
    ctx.meta[_VERBOSE] = verbose
    warnings.showwarning = _show_warning
    if not verbose:
        _quiet_third_party_logs()


#: Loggers of the libraries the commands drive, whose INFO lines (MLflow's table creation, Ray's start-up) would
#: land between boontrack's own lines on stderr. Only the command line quiets them: a library caller's logging
#: configuration is its own.
THIRD_PARTY_LOGGERS = ("mlflow", "alembic", "ray", "urllib3", "optuna", "hydra", "wandb", "git", "filelock")


def _quiet_third_party_logs() -> None:
    """Third-party loggers at WARNING, levels a user set (a level other than NOTSET) kept."""
    import logging
    import os

    # MLflow sets its logger's level when imported, from this variable: its INFO default would undo the below.
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")
    for name in THIRD_PARTY_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)


def _parse_budgets(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, ...] | None:
    if value is None:
        return None  # not given: the default budgets, each where a group has enough runs
    try:
        budgets = tuple(int(part) for part in value.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers like 1,5,10, got {value!r}") from None
    if any(k < 1 for k in budgets):
        raise click.BadParameter(f"budgets must be >= 1, got {value!r}")
    return budgets


def _parse_options(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> dict[str, str]:
    options = {}
    for item in value:
        key, sep, val = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}")
        options[key] = val
    return options


def _option(name: str, **kwargs: Any) -> Callable[[Any], Any]:
    """A click option under its flag from the one table (:data:`boontrack.vocabulary.FLAGS`); the parameter
    keeps the option's Python name, so that the command hands Spec its own keywords."""
    return click.option(FLAGS[name], name, **kwargs)


def _source_options(source: str) -> Callable[[Any], Any]:
    """The options a backend's source takes, as every command that reads one (summarize, simulate) spells them;
    ``source`` is how the help names the source (``SOURCE`` where it is an optional argument)."""
    options = [
        _option("parent", metavar="RUN_ID", help=f"Tracker {source}: the sweep's parent run (MLflow)."),
        _option("tracking_uri", metavar="URI", help=f"Tracker {source}: tracking server (MLflow)."),
        _option("sweep", metavar="ID", help=f"Tracker {source}: sweep id (W&B)."),
        _option("group", metavar="NAME", help=f"Tracker {source}: run group (W&B)."),
        _option("study", metavar="NAME", help=f"Tracker {source}: study name (Optuna)."),
        _option(
            "options",
            multiple=True,
            callback=_parse_options,
            metavar="KEY=VALUE",
            help=f"Another option of {'the source' if source == 'source' else source}'s backend (repeatable).",
        ),
    ]

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):  # as stacked decorators apply: the first listed ends up first in --help
            command = option(command)
        return command

    return decorate


def _compare_option(name: str, **kwargs: Any) -> Callable[[Any], Any]:
    """An option of ``compare``'s own under its flag from :data:`boontrack.vocabulary.COMPARE_FLAGS`, keeping
    the name of :func:`boontrack.sources.compare_sources`' keyword."""
    return click.option(COMPARE_FLAGS[name], name, **kwargs)


def _simulate_option(name: str, **kwargs: Any) -> Callable[[Any], Any]:
    """An option of ``simulate``'s own under its flag from :data:`boontrack.vocabulary.SIMULATE_FLAGS`, keeping
    the name of :func:`boontrack.simulate.study`'s parameter."""
    return click.option(SIMULATE_FLAGS[name], name, **kwargs)


@main.command()
@click.argument("source")
@_option("val", required=True, metavar="METRIC", help="Validation metric: the score runs are ranked by.")
@_option("test", metavar="METRIC", help="Test metric reported for the best-validation run (default: val).")
@_option(
    "n",
    callback=_parse_budgets,
    metavar="N[,N...]",
    help=f"Budgets: numbers of runs drawn. [default: {','.join(map(str, DEFAULT_BUDGETS))}, each where a group "
    "has at least n runs; given, every group must have enough runs]",
)
@_option("estimator", type=click.Choice(ESTIMATORS), default=_SPEC_DEFAULTS["estimator"], show_default=True)
@_option(
    "maximize",
    default=None,
    help="Higher (--maximize) or lower (--minimize) validation scores are better. [default: the source's "
    "direction where it knows one; else higher, and a metric named like a loss or an error is refused]",
)
@_option("group_by", multiple=True, metavar="KEY", help="Group runs by this column (repeatable).")
@_option("seed_column", metavar="COL", help="Column holding the seed (default grouping: all other params).")
@_option("duration", metavar="COL", help="Column of training seconds per run.")
@_option("baseline", metavar="GROUP", help="Group the others are compared with (default: the first).")
@_option("compare", type=click.Choice(COMPARE_MODES), default=_SPEC_DEFAULTS["compare"], show_default=True)
@_option("correction", type=click.Choice(CORRECTIONS), default=_SPEC_DEFAULTS["correction"], show_default=True)
@_option("confidence_level", type=float, default=_SPEC_DEFAULTS["confidence_level"], show_default=True)
@_option(
    "n_resamples",
    type=_RESAMPLES,
    default=_SPEC_DEFAULTS["n_resamples"],
    show_default=True,
    help="Bootstrap resamples, or auto: as many as keep each interval end's Monte Carlo error below 5 % of its reach.",
)
@_option("ci_method", type=click.Choice(CI_METHODS), default=_SPEC_DEFAULTS["ci_method"], show_default=True)
@_option("bounds", type=(float, float), metavar="LOW HIGH", help="Bounds of the scores (inf: open side).")
@_option("seed", type=int, default=_SPEC_DEFAULTS["seed"], show_default=True, help="Seed of the bootstrap.")
@_option(
    "pick",
    type=click.Choice(tuple(PICK_SPELLINGS)),  # best-val-step, and best_val_step as Python spells it
    default=_SPEC_DEFAULTS["pick"],
    show_default=True,
    help="Tracker metric value: the last logged, or val at its best step with test at that step.",
)
@_option(
    "curves",
    multiple=True,
    metavar="METRIC",
    help="Also each group's mean training curve of this metric logged per step, with bands (repeatable; "
    "best-so-far:VAL for each run's best --val so far, best-so-far:TEST for its --test at that step; reads each "
    "run's history: one request per metric and 100 runs on an MLflow server).",
)
@_option(
    "task_column",
    metavar="COL",
    help="Column naming each run's task: each task summarized on its own, and the groups compared across the tasks.",
)
@_option(
    "normalize",
    type=click.Choice(NORMALIZATIONS),
    default=_SPEC_DEFAULTS["normalize"],
    show_default=True,
    help="Across tasks: the test scores as they are, or each task's lowest to highest score as 0 to 1.",
)
@_option(
    "normalize_with",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="Across tasks: a CSV file with columns task, low, high: each task's reference scores, as 0 and 1.",
)
@_option("out", type=click.Path(file_okay=False), help="Write the summary into this directory.")
@_option("write_back", is_flag=True, help="Write the summary back to the tracker the runs came from.")
@_option("prefix", default=DEFAULT_PREFIX, show_default=True, help="Prefix of written metric names.")
@click.option("--force", is_flag=True, help="Write even when the destination is up to date.")
@_option("plots", default=True, help="Write the PNG plots (--no-plots: most of the cost of a small summary).")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    metavar="N",
    help="Threads of the bootstrap; the results do not depend on it. [default: every CPU available]",
)
@click.option("--format", "output_format", type=click.Choice(("table", "json")), default="table", show_default=True)
@_source_options("source")
def summarize(
    source: str,
    out: str | None,
    write_back: bool,
    prefix: str,
    force: bool,
    plots: bool,
    threads: int | None,
    output_format: str,
    parent: str | None,
    tracking_uri: str | None,
    sweep: str | None,
    group: str | None,
    study: str | None,
    options: dict[str, str],
    **spec_options: Any,
) -> None:
    """Summarize the runs of SOURCE: Boo_n, expected-validation curves, intervals, comparisons.

    Prints a table (or, with --format json, the summary as JSON and nothing else on stdout). With --out or
    --write-back the summary is also written; a rerun on unchanged runs writes nothing and prints the summary
    the destination holds (computing it again only where the destination cannot give it back).
    """
    from boontrack.backends import open_source
    from boontrack.pipeline import open_sinks, resolve_direction, run_job, source_options
    from boontrack.reports import format_table, to_json

    spec_options["group_by"] = spec_options["group_by"] or None  # no --group-by: the default grouping
    with vocabulary.speaking(vocabulary.CLI):
        spec = Spec(**spec_options)
        chosen = source_options(
            parent=parent, tracking_uri=tracking_uri, sweep=sweep, group=group, study=study, options=options
        )
        runs = open_source(source, **chosen)
        spec = resolve_direction(runs, spec)
        sinks = open_sinks(runs, spec, out=out, write_back=write_back)
        with warnings.catch_warnings():  # a failed write is reported once, as the error below
            warnings.simplefilter("ignore", WriteBackWarning)
            result = run_job(
                runs,
                spec,
                sink=sinks,
                prefix=prefix,
                progress=sys.stderr.isatty(),
                force=force,
                summarize_unchanged=True,
                plots=plots,
                threads=threads,
            )
    shown = result.summary if result.summary is not None else result.stored_summary  # unchanged: the stored one
    assert shown is not None  # run_job computes the summary where no destination gives one back
    written = any(destination.error is None for destination in result.destinations)
    text = to_json(shown) if output_format == "json" else format_table(shown, report_written=written)
    click.echo(text, nl=not text.endswith("\n"))
    if result.summary is not None and result.summary.training:
        from boontrack.training_runs import training_lines

        for curves in result.summary.training:
            click.echo("\n".join(training_lines(curves)), err=True)
    if result.error:
        raise BackendError(result.error)
    if sinks:
        done = "up to date, nothing written" if result.status == "unchanged" else "written"
        click.echo(f"Summary {done}: {result.location}", err=True)


#: The options of ``summarize`` that ``compare`` takes too, declared once (on ``summarize``): what to compute.
_COMPARE_SPEC_OPTIONS = (
    "val",
    "test",
    "n",
    "estimator",
    "maximize",
    "group_by",
    "seed_column",
    "duration",
    "correction",
    "confidence_level",
    "n_resamples",
    "ci_method",
    "bounds",
    "seed",
    "pick",
    "task_column",
    "normalize",
    "normalize_with",
)


def _parse_source_options(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> dict[int, dict[str, str]]:
    """``N:KEY=VALUE`` items as {source position (1-based): {key: value}}."""
    chosen: dict[int, dict[str, str]] = {}
    for item in value:
        position, colon, setting = item.partition(":")
        key, equals, val = setting.partition("=")
        if not (colon and equals and key and position.isdigit() and int(position) >= 1):
            raise click.BadParameter(f"expected N:KEY=VALUE (N: the source's position, 1 first), got {item!r}")
        chosen.setdefault(int(position), {})[key.replace("-", "_")] = val
    return chosen


@main.command()
@click.argument("sources", nargs=-1, metavar="SOURCE_A SOURCE_B [SOURCE...]")
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    help="TOML file giving the sources and the options (their Python names), instead of the command line.",
)
@_compare_option("labels", multiple=True, metavar="NAME", help="One label per source, in order (repeatable).")
@click.option(
    "--source-option",
    "per_source",
    multiple=True,
    callback=_parse_source_options,
    metavar="N:KEY=VALUE",
    help="An option of the N-th source's backend, e.g. 1:parent=RUN_ID, 2:tracking_uri=sqlite:///m.db (repeatable).",
)
@_compare_option("require", type=click.Choice(("better", "not-worse")), help="Gate: the claim the exit status checks.")
@_compare_option("margin", type=float, default=0.0, help="With --require not-worse: how much worse is allowed.")
@_compare_option(
    "gate_on",
    type=click.Choice(GATE_QUANTITIES),
    help="With --task-column: the difference across tasks --require decides on (boo-n: at the largest budget). "
    "[default: iqm]",
)
@click.option("--format", "output_format", type=click.Choice(("table", "markdown")), default="table", show_default=True)
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    metavar="N",
    help="Threads of the bootstrap; the results do not depend on it. [default: every CPU available]",
)
@_compare_option(
    "write_to",
    metavar="SCHEME:LOCATION",
    help="Write the comparison to a tracker, as a summary: its own run, e.g. mlflow:EXPERIMENT, wandb:ENTITY/PROJECT.",
)
@_compare_option(
    "write_options",
    multiple=True,
    callback=_parse_options,
    metavar="KEY=VALUE",
    help="An option of --write-to's backend, e.g. tracking-uri=sqlite:///mlflow.db, timeout=30 (repeatable).",
)
@click.pass_context
def compare(
    ctx: click.Context,
    sources: tuple[str, ...],
    config: str | None,
    labels: tuple[str, ...],
    per_source: dict[int, dict[str, str]],
    require: str | None,
    margin: float,
    gate_on: str | None,
    output_format: str,
    threads: int | None,
    write_to: str | None,
    write_options: dict[str, str],
    **spec_options: Any,
) -> None:
    """Compare the runs of SOURCE_B (and more) with those of SOURCE_A, with the statistics of summarize.

    Each source is a file or SCHEME:LOCATION, with its own backend options (--source-option N:KEY=VALUE, N
    counting the sources from 1). Differences are each source minus SOURCE_A; groups within the sources
    (--group-by) are matched by label; sides are paired by seed when their seeds (--seed-column) match. Several
    metrics (--test or --val repeated) are compared at once, their p-values adjusted together. With
    --require, the exit status is the verdict: 0 when the interval supports the claim, 3 when it does not (2 bad
    input, 1 a tracker failed). --format markdown prints a compact report; when GITHUB_STEP_SUMMARY is set the
    same Markdown is appended to that file. --write-to writes the comparison to a tracker as its own run (a
    rerun on unchanged runs writes nothing).
    """
    from boontrack.sources import check_destination, compare_sources, load_comparison, to_markdown, write_comparison

    destination: dict[str, Any] = {"write_to": write_to, "write_options": write_options or None}
    named_by = COMPARE  # who named the destination: the command line, or the config file
    if config is not None:
        given = [param for param in ctx.command.params if _given_on_command_line(ctx, param)]
        if given:
            shown = given[0].opts[0] if given[0].opts[0].startswith("-") else "SOURCE"
            raise click.UsageError(f"give the comparison with --config or on the command line, not both: {shown}")
        with vocabulary.speaking(vocabulary.CONFIG):
            keywords = load_comparison(config)
        in_file = [key for key in destination if key in keywords]
        if in_file:
            typed = [COMPARE.name(key) for key in destination if destination[key] is not None]
            if typed:
                where = vocabulary.CONFIG.name(in_file[0])
                raise click.UsageError(f"give {where} in the config file or {typed[0]} on the command line, not both")
            destination, named_by = {key: keywords.get(key) for key in destination}, vocabulary.CONFIG
        keywords = {key: value for key, value in keywords.items() if key not in destination}
        spoken = vocabulary.CONFIG
    else:
        keywords = _compared_on_command_line(sources, labels, per_source, spec_options)
        keywords.update(require=require, margin=margin, gate_on=gate_on)
        spoken = COMPARE
    with vocabulary.speaking(named_by):  # before any run is read
        destination_options = check_destination(**destination)
    with vocabulary.speaking(spoken):
        result = compare_sources(progress=sys.stderr.isatty(), threads=threads, **keywords)
    markdown = to_markdown(result)
    text = markdown if output_format == "markdown" else _compared_tables(result.summaries)
    click.echo(text, nl=not text.endswith("\n"))
    _append_step_summary(markdown)
    if destination["write_to"] is not None:  # after the result is shown: a tracker that fails does not hide it
        with vocabulary.speaking(named_by):
            done = write_comparison(result, destination["write_to"], **destination_options)
        said = "up to date, nothing written" if done == "unchanged" else "written"
        click.echo(f"Comparison {said}: {redact(destination['write_to'])}", err=True)
    if result.gate is not None:
        click.echo(result.gate.verdict, err=output_format == "markdown")
        ctx.exit(0 if result.gate.passed else 3)


def _append_step_summary(markdown: str) -> None:
    """Append the comparison's Markdown to the job's summary page when ``GITHUB_STEP_SUMMARY`` names one.

    A page that cannot be written (a directory, a missing folder, a full or read-only disk, a broken symbolic
    link) is one warning line: the verdict and its exit status are what the job runs for, and they go on."""
    import os

    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return
    try:
        _append_text(path, markdown)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        click.echo(f"Warning: GITHUB_STEP_SUMMARY: cannot append the report to {redact(path)}: {reason}", err=True)


def _append_text(path: str, text: str) -> None:
    """Append ``text`` to the file at ``path``, creating the file only where nothing is: a symbolic link to a
    missing file is not followed to create one somewhere else."""
    import errno
    import os

    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        if os.path.lexists(path):
            raise FileNotFoundError(errno.ENOENT, "a symbolic link to a file that does not exist", path) from None
        descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o666)
    with open(descriptor, "a", encoding="utf-8") as file:  # closing flushes: a full disk fails there, and is caught
        file.write(text)


#: Options of ``compare`` that go with a config file: how the result is shown, not what is compared.
_BESIDE_CONFIG = ("config", "output_format", "threads", "write_to", "write_options")


def _given_on_command_line(ctx: click.Context, param: click.Parameter) -> bool:
    """Whether the caller typed ``param`` (a default or an environment variable does not count)."""
    if param.name in _BESIDE_CONFIG or param.name is None:
        return False
    return ctx.get_parameter_source(param.name) is click.core.ParameterSource.COMMANDLINE


def _compared_on_command_line(
    sources: tuple[str, ...],
    labels: tuple[str, ...],
    per_source: dict[int, dict[str, str]],
    spec_options: dict[str, Any],
) -> dict[str, Any]:
    """The keywords of compare_sources that the command line gives, checked where click's types cannot."""
    from boontrack.pipeline import SOURCE_OPTIONS, source_options

    if len(sources) < 2:
        raise click.UsageError("give two or more sources (or --config FILE)")
    if not spec_options["val"]:
        raise click.UsageError("Missing option '--val'.")
    if labels and len(labels) != len(sources):
        raise click.BadParameter(f"give one label per source ({len(sources)}), got {len(labels)}", param_hint="--label")
    beyond = sorted(position for position in per_source if position > len(sources))
    if beyond:
        raise click.BadParameter(f"there is no source {beyond[0]} (of {len(sources)})", param_hint="--source-option")
    options = []
    with vocabulary.speaking(COMPARE):
        for position in range(1, len(sources) + 1):
            given = per_source.get(position, {})
            named = {key: given[key] for key in SOURCE_OPTIONS if key in given}
            others = {key: value for key, value in given.items() if key not in named}
            options.append(source_options(**named, options=others))
    chosen = dict(spec_options, group_by=spec_options["group_by"] or None, test=spec_options["test"] or None)
    return {"sources": sources, "labels": labels or None, "options": options, **chosen}


def _compared_tables(summaries: Any) -> str:
    """The table of each metric's summary; with several, what their adjusted p-values were adjusted over."""
    from boontrack.reports import format_table

    text = "\n\n".join(format_table(summary) for summary in summaries)
    if len(summaries) == 1:
        return text
    family = sum(len(summary.comparisons) for summary in summaries)
    correction = summaries[0].spec.correction
    return f"{text}\n\np adj. ({correction}): over the {family} comparisons of the {len(summaries)} metrics together"


#: ``summarize``'s options that ``compare`` takes repeatedly: several metrics at once.
_REPEATED_HELP = {
    "val": "Validation metric: the score runs are ranked by (repeatable: one for every --test, or several alone).",
    "test": "Test metric reported for the best-validation run (default: val; repeatable: several metrics).",
}


def _shared_option(param: click.Parameter) -> click.Parameter:
    """``summarize``'s option as ``compare`` shows it: the same, but for what differs (the default grouping, the
    metrics that repeat)."""
    if param.name in _REPEATED_HELP:
        return click.Option(
            [FLAGS[param.name], param.name],
            multiple=True,
            metavar="METRIC",
            help=_REPEATED_HELP[param.name],
        )
    if param.name != "seed_column":
        return param
    shown = copy.copy(param)
    shown.help = "Column holding the seed: sources whose seeds match are compared as pairs."
    return shown


compare.params[1:1] = [_shared_option(param) for param in summarize.params if param.name in _COMPARE_SPEC_OPTIONS]

#: How ``compare`` names its options in messages: summarize's flags and its own.
COMPARE = vocabulary.Vocabulary("flags", flags={**FLAGS, **COMPARE_FLAGS})


#: How an engine's messages name its keywords: by reaggregate's flags.
ENGINE_OPTIONS = vocabulary.Vocabulary(
    "flags", flags={"slots": "--workers", "address": "--ray-address", "connect_timeout": "--ray-timeout"}
)


@main.command()
@click.option(
    "--config",
    required=True,
    type=click.Path(dir_okay=False),
    help="TOML file with one [[jobs]] table per summary to keep up to date.",
)
@click.option("--force", is_flag=True, help="Recompute and write every job even when its runs are unchanged.")
@click.option(
    "--lock-timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds to wait for another run writing the same destination; then the job is skipped.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Jobs run at once: worker processes (local engine) or Ray tasks (ray engine).",
)
@click.option(
    "--engine",
    default="local",
    show_default=True,
    help="Where jobs run: this machine (local), or an installed engine (ray: the Ray cluster of --ray-address).",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    envvar="RAY_ADDRESS",
    help=(
        "Ray cluster to run on: HOST:PORT, ray://HOST:PORT (Ray Client), or auto (the one `ray start` left on this "
        "host); default: RAY_ADDRESS, else a Ray instance of this pass alone."
    ),
)
@click.option(
    "--ray-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds to wait for the Ray cluster of --ray-address to answer; then the pass fails (exit 1).",
)
@click.option(
    "--per-server",
    type=click.IntRange(min=1),
    default=4,
    show_default=True,
    help="Jobs of one tracking server running at once (each sends its requests mostly one at a time).",
)
@click.pass_context
def reaggregate(
    ctx: click.Context,
    config: str,
    force: bool,
    lock_timeout: float,
    workers: int,
    engine: str,
    ray_address: str | None,
    ray_timeout: float,
    per_server: int,
) -> None:
    """Run every job of a config file: summarize, and write where the runs changed.

    One line per job (NAME: unchanged | updated | skipped: locked ... | failed: REASON), and one per job that
    discovers sweeps (NAME: K sweeps found); a discovered sweep's job is NAME/KEY (what it is). Exit status 0
    when every job succeeded, 1 when any failed (the others still run), 2 when the config is invalid
    (nothing runs), 128 + the signal's number (130, 143) when SIGINT or SIGTERM ended the pass.
    """
    from boontrack.reaggregate import PassInterrupted, load_config, run_jobs

    engines = _engines()
    if engine != "local" and engine not in engines:
        known = ", ".join(["local", *sorted(engines)])
        raise click.BadParameter(f"{engine!r} is not an installed engine (installed: {known})", param_hint="--engine")
    with vocabulary.speaking(vocabulary.CONFIG):
        jobs = load_config(config)
    on_error = (lambda trace: click.echo(redact(trace), err=True, nl=False)) if ctx.meta.get(_VERBOSE) else None
    runner = None
    if engine != "local":  # an engine is made with the slots, and where and how long to look for its cluster
        with vocabulary.speaking(ENGINE_OPTIONS):  # it checks them, before any work
            runner = engines[engine].load()(workers, address=ray_address, connect_timeout=ray_timeout)
    try:
        failed = run_jobs(
            jobs,
            force=force,
            lock_timeout=lock_timeout,
            log=click.echo,
            on_error=on_error,
            workers=workers,
            engine=runner,
            per_server=per_server,
        )
    except PassInterrupted as interrupted:
        click.echo(f"Error: {interrupted}", err=True)
        ctx.exit(128 + interrupted.signum)
    ctx.exit(1 if failed else 0)


#: ``--population`` spellings of :data:`boontrack.simulate.POPULATIONS`.
_POPULATION_SPELLINGS: dict[str, Literal["normal", "lognormal", "left_skewed", "beta_binomial"]] = {
    "normal": "normal",
    "lognormal": "lognormal",
    "left-skewed": "left_skewed",
    "beta-binomial": "beta_binomial",
}


@main.command()
@click.argument("source", required=False)
@_simulate_option("population", type=click.Choice(tuple(_POPULATION_SPELLINGS)), help="A named population of runs.")
@_option("val", metavar="METRIC", help="SOURCE: validation metric (the fit is of these runs).")
@_option("test", metavar="METRIC", help="SOURCE: test metric (default: val).")
@_option("maximize", default=None, help="SOURCE: higher (--maximize) or lower (--minimize) scores are better.")
@_option("group_by", multiple=True, metavar="KEY", help="SOURCE: group runs by this column (repeatable).")
@_simulate_option("fit_group", metavar="GROUP", help="SOURCE: the group whose runs are fitted (several groups).")
@_source_options("SOURCE")
@_simulate_option("m", type=int, help="Runs per sweep. [default: 20, or the runs of SOURCE]")
@_option("n", callback=_parse_budgets, metavar="N[,N...]", help="Budgets. [default: 1,5,10]")
@_simulate_option(
    "methods",
    type=click.Choice(CI_METHODS),
    multiple=True,
    help="Interval methods (repeatable). [default: all but studentized-u-calibrated]",
)
@_simulate_option("width", type=float, help="Runs needed for a median interval width of Boo_n at most this.")
@_simulate_option("shift", type=float, help="Runs needed to tell apart two approaches this far apart in Boo_n.")
@_simulate_option("power", type=float, default=0.8, show_default=True, help="Power wanted with --shift.")
@_simulate_option("replications", type=int, default=200, show_default=True, help="Simulated sweeps per cell.")
@_simulate_option("n_resamples", type=int, default=499, show_default=True, help="Bootstrap resamples per interval.")
@_simulate_option("rng", type=int, default=0, show_default=True, help="Seed of the simulation.")
@_option("out", type=click.Path(file_okay=False), help="Write study.csv and study.png into this directory.")
@_simulate_option("no_plots", is_flag=True, help="Write no PNG plot.")
def simulate(
    source: str | None,
    population: str | None,
    val: str | None,
    test: str | None,
    maximize: bool | None,
    group_by: tuple[str, ...],
    fit_group: str | None,
    parent: str | None,
    tracking_uri: str | None,
    sweep: str | None,
    group: str | None,
    study: str | None,
    options: dict[str, str],
    m: int | None,
    n: tuple[int, ...] | None,
    methods: tuple[str, ...],
    out: str | None,
    no_plots: bool,
    **parameters: Any,
) -> None:
    """Simulate the estimators and intervals on a population of runs (Dodge et al. 2021, §3-4).

    The population is named (--population) or a smoothed fit of the runs of SOURCE (read as summarize reads
    it, with the same source options). Prints the bias, variance and MSE of V, U, W and the Gaussian estimate,
    the coverage and width of each interval method, and with --width or --shift how many runs are needed.
    """
    from boontrack.pipeline import source_options
    from boontrack.simulate import format_study, write_study
    from boontrack.simulate import population as named_population

    if (source is None) == (population is None):
        raise click.UsageError("give either SOURCE or --population, not both or neither")
    if source is None and (val or test or maximize is not None or group_by or fit_group):
        raise click.UsageError(
            "--val, --test, --maximize/--minimize, --group-by and --fit-group describe SOURCE; none was given"
        )
    named = {"parent": parent, "tracking_uri": tracking_uri, "sweep": sweep, "group": group, "study": study}
    if source is None and (options or any(value is not None for value in named.values())):
        given = [FLAGS[key] for key, value in named.items() if value is not None] or [FLAGS["options"]]
        raise click.UsageError(f"{given[0]} is an option of SOURCE's backend; no SOURCE was given")
    if source is not None and not val:
        raise click.UsageError("SOURCE needs --val")
    if population is not None:
        pop, runs = named_population(_POPULATION_SPELLINGS[population]), 20
    else:
        assert source is not None and val is not None
        with vocabulary.speaking(vocabulary.CLI):
            chosen = source_options(**named, options=options)
            spec = Spec(val=val, test=test, maximize=maximize, group_by=group_by or None)
        pop, runs = _fitted_population(source, chosen, spec, fit_group)
    with vocabulary.speaking(SIMULATE):
        result = _study(pop, runs if m is None else m, n, methods, parameters)
    click.echo(format_study(result))
    if out is not None:
        for path in write_study(result, out, plots=not no_plots):
            click.echo(f"Written: {path}", err=True)


def _study(pop: Any, m: int, n: tuple[int, ...] | None, methods: tuple[str, ...], parameters: dict[str, Any]) -> Any:
    from boontrack.simulate import study

    return study(
        pop,
        m=m,
        n=(1, 5, 10) if n is None else n,
        methods=methods or STUDY_CI_METHODS,
        progress=sys.stderr.isatty(),
        **{name: parameters[name] for name in ("width", "shift", "power", "replications", "n_resamples", "rng")},
    )


#: How ``simulate`` names the parameters of :func:`boontrack.simulate.study` in messages: its own flags.
SIMULATE = vocabulary.Vocabulary("flags", flags={**FLAGS, **SIMULATE_FLAGS})


def _fitted_population(source: str, chosen: dict[str, Any], spec: Spec, fit_group: str | None) -> tuple[Any, int]:
    """The smoothed fit of one group of SOURCE's runs, read as ``summarize`` reads them (``chosen``: the source
    options of :func:`boontrack.pipeline.source_options`), and its number of runs."""
    from boontrack.backends import MetricRequest, open_source
    from boontrack.pipeline import read_runs, resolve_direction
    from boontrack.runtable import RunTable
    from boontrack.simulate import kernel_fit

    with vocabulary.speaking(vocabulary.CLI):
        runs = open_source(source, **chosen)
        spec = resolve_direction(runs, spec)
        request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.higher_is_better, pick=spec.pick)
        table = RunTable.from_frame(read_runs(runs, request), spec)
    if fit_group is None and len(table.groups) > 1:
        raise InputError(
            f"the runs form {len(table.groups)} groups ({', '.join(table.groups)}): choose one with --fit-group"
        )
    label = fit_group if fit_group is not None else table.groups[0]
    if label not in table.groups:
        raise InputError(f"--fit-group {label!r} is not a group of the runs; groups: {', '.join(table.groups)}")
    val_scores, test_scores = table.arrays(label)
    return kernel_fit(val_scores, test_scores, maximize=spec.higher_is_better), val_scores.size
