"""The ``boontrack`` command: ``summarize`` a sweep, ``reaggregate`` the jobs of a config file.

Start-up stays fast: this module imports click and boontrack's light modules only; numpy, pandas and the
tracker SDKs are imported inside the commands that need them.

Exit status: 0 success, 1 a tracker failed or a result could not be written (:class:`BackendError`), 2 bad
input (:class:`InputError`: data, columns, options or config). Errors are one line on stderr; ``--verbose``
shows the traceback.

Commands defined elsewhere are listed in :data:`LAZY_COMMANDS` (name -> ``"module:attribute"``, a
:class:`click.Command`); their module is imported only when the command runs or its help is shown.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import re
import sys
import traceback
import warnings
from collections.abc import Iterator
from typing import Any

import click

from boontrack import __version__
from boontrack._redact import redact
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.pipeline import DEFAULT_PREFIX, OPTION_NAMES, PICK_SPELLINGS, make_spec
from boontrack.spec import CI_METHODS, COMPARE_MODES, CORRECTIONS, DEFAULT_BUDGETS, ESTIMATORS

__all__ = ["LAZY_COMMANDS", "main"]

#: Subcommands defined in other modules, imported on use: name -> "module:attribute".
LAZY_COMMANDS: dict[str, str] = {"demo": "boontrack.demo:demo_command"}

#: Exit status per error class; the first match wins (InputError is a ValueError).
EXIT_CODES: tuple[tuple[type[BaseException], int], ...] = ((BackendError, 1), (ValueError, 2))

_SPEC_DEFAULTS = {name: p.default for name, p in inspect.signature(make_spec).parameters.items()}
_VERBOSE = "boontrack.verbose"


class _BoontrackGroup(click.Group):
    """A click group that loads :data:`LAZY_COMMANDS` on use and turns boontrack errors into exit codes."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS:
            module, _, attribute = LAZY_COMMANDS[cmd_name].partition(":")
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, cmd_name)

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        """Click's entry point, with its usage errors on one line (click prints usage, hint and error on four)."""
        if not standalone_mode:
            return super().main(*args, standalone_mode=False, **kwargs)
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
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
        except Exception as exc:
            verbose = bool(ctx.meta.get(_VERBOSE))
            if verbose:
                click.echo(redact(traceback.format_exc()), err=True, nl=False)
            code = next((code for kind, code in EXIT_CODES if isinstance(exc, kind)), None)
            click.echo(f"Error: {_one_line(exc, expected=code is not None, verbose=verbose)}", err=True)
            ctx.exit(code or 1)


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
@click.option("--verbose", "-v", is_flag=True, help="Show tracebacks of errors.")
@click.version_option(__version__, "--version", prog_name="boontrack")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Honest numbers from ML sweeps: Boo_n, expected-validation curves, intervals and comparisons.

    SOURCE is a file of runs (CSV, TSV, JSON lines, Parquet) or SCHEME:LOCATION for a tracker backend,
    e.g. mlflow:EXPERIMENT, wandb:ENTITY/PROJECT, wandb-offline:DIR.
    """
    ctx.meta[_VERBOSE] = verbose
    warnings.showwarning = _show_warning


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


@main.command()
@click.argument("source")
@click.option("--val", required=True, metavar="METRIC", help="Validation metric: the score runs are ranked by.")
@click.option("--test", metavar="METRIC", help="Test metric reported for the best-validation run (default: val).")
@click.option(
    "--n",
    "n",
    callback=_parse_budgets,
    metavar="N[,N...]",
    help=f"Budgets: numbers of runs drawn. [default: {','.join(map(str, DEFAULT_BUDGETS))}, each where a group "
    "has at least n runs; given, every group must have enough runs]",
)
@click.option("--estimator", type=click.Choice(ESTIMATORS), default=_SPEC_DEFAULTS["estimator"], show_default=True)
@click.option("--minimize", is_flag=True, help="Lower validation scores are better.")
@click.option("--group-by", multiple=True, metavar="KEY", help="Group runs by this column (repeatable).")
@click.option("--seed-column", metavar="COL", help="Column holding the seed (default grouping: all other params).")
@click.option("--duration", metavar="COL", help="Column of training seconds per run.")
@click.option("--baseline", metavar="GROUP", help="Group the others are compared with (default: the first).")
@click.option("--compare", type=click.Choice(COMPARE_MODES), default=_SPEC_DEFAULTS["compare"], show_default=True)
@click.option("--correction", type=click.Choice(CORRECTIONS), default=_SPEC_DEFAULTS["correction"], show_default=True)
@click.option("--confidence", type=float, default=_SPEC_DEFAULTS["confidence"], show_default=True)
@click.option("--resamples", type=int, default=_SPEC_DEFAULTS["resamples"], show_default=True, help="Bootstrap resamples.")
@click.option("--ci-method", type=click.Choice(CI_METHODS), default=_SPEC_DEFAULTS["ci_method"], show_default=True)
@click.option("--seed", type=int, default=_SPEC_DEFAULTS["seed"], show_default=True, help="Seed of the bootstrap.")
@click.option(
    "--pick",
    type=click.Choice(tuple(PICK_SPELLINGS)),  # best-val-step, and best_val_step as Python spells it
    default=_SPEC_DEFAULTS["pick"],
    show_default=True,
    help="Tracker metric value: the last logged, or val at its best step with test at that step.",
)
@click.option("--out", type=click.Path(file_okay=False), help="Write the summary into this directory.")
@click.option("--write-back", is_flag=True, help="Write the summary back to the tracker the runs came from.")
@click.option("--prefix", default=DEFAULT_PREFIX, show_default=True, help="Prefix of written metric names.")
@click.option("--force", is_flag=True, help="Write even when the destination is up to date.")
@click.option("--no-plots", is_flag=True, help="Write no PNG plots (most of the cost of writing a small summary).")
@click.option("--format", "output_format", type=click.Choice(("table", "json")), default="table", show_default=True)
@click.option("--parent", metavar="RUN_ID", help="Tracker source: the sweep's parent run (MLflow).")
@click.option("--tracking-uri", metavar="URI", help="Tracker source: tracking server (MLflow).")
@click.option("--sweep", metavar="ID", help="Tracker source: sweep id (W&B).")
@click.option("--group", metavar="NAME", help="Tracker source: run group (W&B).")
@click.option(
    "--option",
    "extra_options",
    multiple=True,
    callback=_parse_options,
    metavar="KEY=VALUE",
    help="Another option of the source's backend (repeatable).",
)
def summarize(
    source: str,
    out: str | None,
    write_back: bool,
    prefix: str,
    force: bool,
    no_plots: bool,
    output_format: str,
    parent: str | None,
    tracking_uri: str | None,
    sweep: str | None,
    group: str | None,
    extra_options: dict[str, str],
    **spec_options: Any,
) -> None:
    """Summarize the runs of SOURCE: Boo_n, expected-validation curves, intervals, comparisons.

    Prints a table (or, with --format json, the summary as JSON and nothing else on stdout). With --out or
    --write-back the summary is also written; a rerun on unchanged runs writes nothing and prints the summary
    the destination holds (computing it again only where the destination cannot give it back).
    """
    from boontrack.backends import open_source
    from boontrack.pipeline import open_sink, run_job, source_options
    from boontrack.reports import format_table, to_json

    spec_options["group_by"] = spec_options["group_by"] or None  # no --group-by: the default grouping
    with _option_vocabulary():
        spec = make_spec(**spec_options)
        options = source_options(
            parent=parent, tracking_uri=tracking_uri, sweep=sweep, group=group, options=extra_options
        )
        runs = open_source(source, **options)
        sink = open_sink(runs, spec, out=out, write_back=write_back)
        with warnings.catch_warnings():  # a failed write is reported once, as the error below
            warnings.simplefilter("ignore", WriteBackWarning)
            result = run_job(
                runs, spec, sink=sink, prefix=prefix, progress=sys.stderr.isatty(), force=force, summarize_unchanged=True,
                plots=not no_plots,
            )
    shown = result.summary if result.summary is not None else result.stored_summary  # unchanged: the stored one
    text = to_json(shown) if output_format == "json" else format_table(shown)
    click.echo(text, nl=not text.endswith("\n"))
    if result.error:
        raise BackendError(result.error)
    if sink is not None:
        done = "up to date, nothing written" if result.status == "unchanged" else "written"
        click.echo(f"Summary {done}: {result.location}", err=True)


#: A parameter name quoted in a message, as the Python API and the config file call it: `tracking_uri`.
_QUOTED_NAME = re.compile(r"`(\w+)`")


@contextlib.contextmanager
def _option_vocabulary() -> Iterator[None]:
    """Re-raise an InputError with the parameter names it quotes as ``summarize``'s options (`out` -> --out).

    Messages from the library name Python parameters, which are also the config file's keys; a name that is
    not an option of the command (a backend's own option, a core function's parameter) stays as it is.
    """
    try:
        yield
    except InputError as exc:
        options = {p.name: p.opts[0] for p in summarize.params if isinstance(p, click.Option)}
        options.update({field: options[name] for field, name in OPTION_NAMES.items() if name in options})
        text = _QUOTED_NAME.sub(lambda m: options.get(m.group(1), m.group(0)), str(exc))
        if text == str(exc):
            raise
        raise type(exc)(text) from exc


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
@click.pass_context
def reaggregate(ctx: click.Context, config: str, force: bool, lock_timeout: float) -> None:
    """Run every job of a config file: summarize, and write where the runs changed.

    One line per job (NAME: unchanged | updated | skipped: locked ... | failed: REASON). Exit status 0 when
    every job succeeded, 1 when any failed (the others still run), 2 when the config is invalid (nothing runs).
    """
    from boontrack.reaggregate import load_config, run_jobs

    jobs = load_config(config)
    on_error = (lambda: click.echo(redact(traceback.format_exc()), err=True, nl=False)) if ctx.meta.get(_VERBOSE) else None
    failed = run_jobs(jobs, force=force, lock_timeout=lock_timeout, log=click.echo, on_error=on_error)
    ctx.exit(1 if failed else 0)
