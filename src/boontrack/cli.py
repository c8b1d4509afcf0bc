"""The ``boontrack`` command: ``summarize`` a sweep, ``reaggregate`` the jobs of a config file, ``simulate`` the
estimators and intervals on a population.

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
from boontrack.backends import DEFAULT_PREFIX
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack.spec import (
    CI_METHODS,
    COMPARE_MODES,
    CORRECTIONS,
    DEFAULT_BUDGETS,
    ESTIMATORS,
    OPTION_NAMES,
    PICK_SPELLINGS,
    make_spec,
)

__all__ = ["LAZY_COMMANDS", "main"]

#: Subcommands defined in other modules, imported on use: name -> "module:attribute".
LAZY_COMMANDS: dict[str, str] = {"demo": "boontrack_mlflow.demo:demo_command"}

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
    e.g. mlflow:EXPERIMENT, wandb:ENTITY/PROJECT, wandb-offline:DIR, optuna:STORAGE_URL.
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
@click.option(
    "--resamples", type=int, default=_SPEC_DEFAULTS["resamples"], show_default=True, help="Bootstrap resamples."
)
@click.option("--ci-method", type=click.Choice(CI_METHODS), default=_SPEC_DEFAULTS["ci_method"], show_default=True)
@click.option("--bounds", type=(float, float), metavar="LOW HIGH", help="Bounds of the scores (inf: open side).")
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
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    metavar="N",
    help="Threads of the bootstrap; the results do not depend on it. [default: every CPU available]",
)
@click.option("--format", "output_format", type=click.Choice(("table", "json")), default="table", show_default=True)
@click.option("--parent", metavar="RUN_ID", help="Tracker source: the sweep's parent run (MLflow).")
@click.option("--tracking-uri", metavar="URI", help="Tracker source: tracking server (MLflow).")
@click.option("--sweep", metavar="ID", help="Tracker source: sweep id (W&B).")
@click.option("--group", metavar="NAME", help="Tracker source: run group (W&B).")
@click.option("--study", metavar="NAME", help="Tracker source: study name (Optuna).")
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
    threads: int | None,
    output_format: str,
    parent: str | None,
    tracking_uri: str | None,
    sweep: str | None,
    group: str | None,
    study: str | None,
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
            parent=parent, tracking_uri=tracking_uri, sweep=sweep, group=group, study=study, options=extra_options
        )
        runs = open_source(source, **options)
        sink = open_sink(runs, spec, out=out, write_back=write_back)
        with warnings.catch_warnings():  # a failed write is reported once, as the error below
            warnings.simplefilter("ignore", WriteBackWarning)
            result = run_job(
                runs,
                spec,
                sink=sink,
                prefix=prefix,
                progress=sys.stderr.isatty(),
                force=force,
                summarize_unchanged=True,
                plots=not no_plots,
                threads=threads,
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
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Jobs run at once: worker processes (local engine) or Ray tasks (ray engine).",
)
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where jobs run: this machine, or the Ray cluster of --ray-address.",
)
@click.option(
    "--ray-address",
    metavar="ADDRESS",
    envvar="RAY_ADDRESS",
    help=(
        "Ray cluster to run on (default: RAY_ADDRESS, else a Ray instance of this pass alone; "
        "auto: the one `ray start` left on this host)."
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

    jobs = load_config(config)
    on_error = (lambda trace: click.echo(redact(trace), err=True, nl=False)) if ctx.meta.get(_VERBOSE) else None
    runner = None
    if engine == "ray":
        from boontrack._optional import import_optional

        import_optional("ray", extra="ray", needed_for="--engine ray")
        from boontrack_ray.engine import RayEngine

        runner = RayEngine(workers, address=ray_address, connect_timeout=ray_timeout)
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
_POPULATION_SPELLINGS = {
    "normal": "normal",
    "lognormal": "lognormal",
    "left-skewed": "left_skewed",
    "beta-binomial": "beta_binomial",
}


@main.command()
@click.argument("source", required=False)
@click.option("--population", type=click.Choice(tuple(_POPULATION_SPELLINGS)), help="A named population of runs.")
@click.option("--val", metavar="METRIC", help="SOURCE: validation metric (the fit is of these runs).")
@click.option("--test", metavar="METRIC", help="SOURCE: test metric (default: val).")
@click.option("--minimize", is_flag=True, help="SOURCE: lower validation scores are better.")
@click.option("--group-by", multiple=True, metavar="KEY", help="SOURCE: group runs by this column (repeatable).")
@click.option("--fit-group", metavar="GROUP", help="SOURCE: the group whose runs are fitted (several groups).")
@click.option("--m", "m", type=int, help="Runs per sweep. [default: 20, or the runs of SOURCE]")
@click.option("--n", "n", callback=_parse_budgets, metavar="N[,N...]", help="Budgets. [default: 1,5,10]")
@click.option(
    "--ci-method",
    "methods",
    type=click.Choice(CI_METHODS),
    multiple=True,
    help="Interval methods (repeatable). [default: all]",
)
@click.option("--width", type=float, help="Runs needed for a median interval width of Boo_n at most this.")
@click.option("--shift", type=float, help="Runs needed to tell apart two approaches this far apart in Boo_n.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Power wanted with --shift.")
@click.option("--replications", type=int, default=200, show_default=True, help="Simulated sweeps per cell.")
@click.option("--resamples", type=int, default=499, show_default=True, help="Bootstrap resamples per interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the simulation.")
@click.option("--out", type=click.Path(file_okay=False), help="Write study.csv and study.png into this directory.")
@click.option("--no-plots", is_flag=True, help="Write no PNG plot.")
def simulate(
    source: str | None,
    population: str | None,
    val: str | None,
    test: str | None,
    minimize: bool,
    group_by: tuple[str, ...],
    fit_group: str | None,
    m: int | None,
    n: tuple[int, ...] | None,
    methods: tuple[str, ...],
    out: str | None,
    no_plots: bool,
    **options: Any,
) -> None:
    """Simulate the estimators and intervals on a population of runs (Dodge et al. 2021, §3-4).

    The population is named (--population) or a smoothed fit of the runs of SOURCE (read as summarize reads
    it). Prints the bias, variance and MSE of V, U, W and the Gaussian estimate, the coverage and width of
    each interval method, and with --width or --shift how many runs are needed.
    """
    from boontrack.simulate import format_study, write_study
    from boontrack.simulate import population as named_population

    if (source is None) == (population is None):
        raise click.UsageError("give either SOURCE or --population, not both or neither")
    if source is None and (val or test or minimize or group_by or fit_group):
        raise click.UsageError("--val, --test, --minimize, --group-by and --fit-group describe SOURCE; none was given")
    if source is not None and not val:
        raise click.UsageError("SOURCE needs --val")
    if population is not None:
        pop, runs = named_population(_POPULATION_SPELLINGS[population]), 20
    else:
        pop, runs = _fitted_population(source, val, test, minimize, group_by, fit_group)
    with _simulate_vocabulary():
        result = _study(pop, runs if m is None else m, n, methods, options)
    click.echo(format_study(result))
    if out is not None:
        for path in write_study(result, out, plots=not no_plots):
            click.echo(f"Written: {path}", err=True)


def _study(pop: Any, m: int, n: tuple[int, ...] | None, methods: tuple[str, ...], options: dict[str, Any]) -> Any:
    from boontrack.simulate import study

    return study(
        pop,
        m=m,
        n=(1, 5, 10) if n is None else n,
        methods=methods or CI_METHODS,
        width=options["width"],
        shift=options["shift"],
        power=options["power"],
        replications=options["replications"],
        n_resamples=options["resamples"],
        rng=options["seed"],
        progress=sys.stderr.isatty(),
    )


#: ``study`` parameters whose option has another name; any other quoted parameter is its option (`m` -> --m).
_SIMULATE_OPTIONS = {"n_resamples": "--resamples", "rng": "--seed", "methods": "--ci-method"}


@contextlib.contextmanager
def _simulate_vocabulary() -> Iterator[None]:
    """Bad input found by the simulation, one line naming the option as ``simulate`` spells it."""
    try:
        yield
    except ValueError as exc:
        text = _QUOTED_NAME.sub(lambda m: _SIMULATE_OPTIONS.get(m.group(1), f"--{m.group(1)}"), str(exc))
        raise InputError(text) from exc


def _fitted_population(source, val, test, minimize, group_by, fit_group) -> tuple[Any, int]:
    """The smoothed fit of one group of SOURCE's runs, and its number of runs."""
    from boontrack.backends import MetricRequest, open_source
    from boontrack.runtable import RunTable
    from boontrack.simulate import kernel_fit

    with _option_vocabulary():
        spec = make_spec(val=val, test=test, minimize=minimize, group_by=group_by or None)
        request = MetricRequest(val=spec.val, test=spec.test, maximize=spec.maximize, pick=spec.pick)
        table = RunTable.from_frame(open_source(source).read(request), spec)
    if fit_group is None and len(table.groups) > 1:
        raise InputError(
            f"the runs form {len(table.groups)} groups ({', '.join(table.groups)}): choose one with --fit-group"
        )
    label = fit_group if fit_group is not None else table.groups[0]
    if label not in table.groups:
        raise InputError(f"--fit-group {label!r} is not a group of the runs; groups: {', '.join(table.groups)}")
    val_scores, test_scores = table.arrays(label)
    return kernel_fit(val_scores, test_scores, maximize=spec.maximize), val_scores.size
