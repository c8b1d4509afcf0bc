"""The conformance suite that every source of runs passes, shipped for a backend's own tests.

Experimental: new in 0.3.0; its names may change in a minor release (said in the changelog).

A backend, built in or a third party's written against :mod:`boontrack.integration`, must read the same sweep
as every other: keep the same runs with the values logged, drop the others for the same reasons, give the same
summary numbers, know the direction its tracker records, and write no artifact outside its own place. This
module holds that sweep (:data:`SWEEP`), what boontrack must make of it (:data:`EXPECTED`, written by hand, not
computed by the code under test) and the checks (:data:`CHECKS`); boontrack's own tests run the same checks on
every built-in backend.

A backend's test logs :data:`SWEEP` to its tracker with the tracker's own SDK, then checks a source of those
runs, opened through the backend's entry point::

    import boontrack
    from boontrack.testing import SWEEP, check_source


    def test_the_ledger_backend_conforms(tmp_path):
        log_sweep(SWEEP, tmp_path)  # each SweepRun as one run of the tracker
        check_source(lambda: boontrack.open_source(f"ledger:{tmp_path}"))

Each :class:`SweepRun` is one run whose params are ``model`` and ``seed``; row ``i`` of its ``rows`` is logged
at step ``i`` (a metric absent from a row is not logged at that step; a NaN is a value logged), and the run
ends with its ``status``. A tracker that cannot hold part of the sweep (it records runs only when they end, or
one value per run and metric) or that records the metric's direction says so in a :class:`Profile`, with the
values it must then give: the standard is the same, what it applies to differs.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from boontrack.backends import CurveSeries, MetricRequest, Sink, Source, SummaryOutputs
from boontrack.exceptions import InputError
from boontrack.spec import Spec

if TYPE_CHECKING:
    from boontrack.runtable import RunTable

__all__ = [
    "CHECKS",
    "ENDED",
    "EXPECTED",
    "FULL",
    "PICKS",
    "SWEEP",
    "TEST",
    "VAL",
    "Check",
    "Expectation",
    "Profile",
    "SweepRun",
    "check_sink",
    "check_source",
]

NAN = math.nan
#: The sweep's validation and test metrics.
VAL, TEST = "val_acc", "test_acc"
#: A value of :attr:`Spec.pick <boontrack.spec.Spec.pick>`.
Pick = Literal["last", "best_val_step"]
#: The values of ``pick`` every source is checked with.
PICKS: tuple[Pick, ...] = ("last", "best_val_step")


@dataclass(frozen=True)
class SweepRun:
    """One run of :data:`SWEEP`: its params ``model`` and ``seed``, one dict of metric values per step, how it
    ended (``"finished"``, ``"failed"`` or ``"running"``: still running when the sweep is read)."""

    model: str
    seed: int
    rows: tuple[dict[str, float], ...]
    status: str = "finished"

    @property
    def key(self) -> tuple[str, str]:
        """``(model, seed)`` as text: how the checks name the run, whatever id its tracker gave it."""
        return self.model, str(self.seed)

    def last_values(self) -> dict[str, float]:
        """Each metric's last logged value (a NaN logged last stays NaN): what a tracker keeping one value per run
        and metric holds."""
        values: dict[str, float] = {}
        for row in self.rows:
            values.update(row)
        return values


#: The one sweep every source must read the same way: per-step histories of both metrics, a test score logged
#: once after training, a failed and a running run, a tie in a run's best validation value, a NaN, and
#: validation and test logged at different steps.
SWEEP = (
    # per-step histories of both metrics; the best epoch is not the last
    SweepRun("cnn", 0, ({VAL: 0.70, TEST: 0.68}, {VAL: 0.74, TEST: 0.71}, {VAL: 0.72, TEST: 0.73})),
    # the best validation value reached twice: the earliest epoch counts
    SweepRun("cnn", 1, ({VAL: 0.80, TEST: 0.71}, {VAL: 0.70, TEST: 0.72}, {VAL: 0.80, TEST: 0.73})),
    # the test score logged once after training (trainer.test(ckpt_path="best")), in a row of its own
    SweepRun("cnn", 2, ({VAL: 0.70}, {VAL: 0.74}, {VAL: 0.72}, {TEST: 0.731})),
    SweepRun("mlp", 0, ({VAL: 0.60, TEST: 0.58}, {VAL: 0.66, TEST: 0.61}, {VAL: 0.64, TEST: 0.62})),
    # a NaN validation score at the last epoch
    SweepRun("mlp", 1, ({VAL: 0.62, TEST: 0.60}, {VAL: 0.65, TEST: 0.63}, {VAL: NAN, TEST: 0.64})),
    # validation and test logged at different steps: no test score of the best-validation model
    SweepRun("mlp", 2, ({VAL: 0.61}, {TEST: 0.59}, {VAL: 0.67}, {TEST: 0.60}, {VAL: 0.63})),
    SweepRun("cnn", 3, ({VAL: 0.95, TEST: 0.95},), status="failed"),
    SweepRun("mlp", 3, ({VAL: 0.96, TEST: 0.96}, {VAL: 0.97, TEST: 0.97}), status="running"),
)

#: Kept runs ((model, seed) -> (val, test)) and dropped runs ((model, seed) -> reason) for one pick.
Expectation = tuple[dict[tuple[str, str], tuple[float, float]], dict[tuple[str, str], str]]

#: What boontrack must make of :data:`SWEEP` from a tracker that holds all of it, for each pick: read off the rows
#: by hand, following the rule of :func:`boontrack.runframe.pick_best_val_step`.
EXPECTED: dict[str, Expectation] = {
    "last": (
        {
            ("cnn", "0"): (0.72, 0.73),
            ("cnn", "1"): (0.80, 0.73),
            ("cnn", "2"): (0.72, 0.731),
            ("mlp", "0"): (0.64, 0.62),
            ("mlp", "2"): (0.63, 0.60),
        },
        {
            ("mlp", "1"): "missing metric 'val_acc'",
            ("cnn", "3"): "status 'failed'",
            ("mlp", "3"): "status 'running'",
        },
    ),
    "best_val_step": (
        {
            ("cnn", "0"): (0.74, 0.71),
            ("cnn", "1"): (0.80, 0.71),
            ("cnn", "2"): (0.74, 0.731),
            ("mlp", "0"): (0.66, 0.61),
            ("mlp", "1"): (0.65, 0.63),
        },
        {
            ("mlp", "2"): "missing metric 'test_acc'",
            ("cnn", "3"): "status 'failed'",
            ("mlp", "3"): "status 'running'",
        },
    ),
}


@dataclass(frozen=True)
class Profile:
    """What one source holds of :data:`SWEEP`, and so what it must give.

    Attributes
    ----------
    expected
        pick -> the runs kept and dropped (:data:`Expectation`), or None where the source holds one value per run
        and metric and must refuse the pick (``best_val_step`` without per-step values).
    maximize
        The direction of ``val_acc`` the source knows (:meth:`Source.direction
        <boontrack.backends.Source.direction>`): None where its tracker records none.
    differences
        What differs from a tracker that holds every part of the sweep, and why (for the reader of a failure).
    """

    expected: dict[str, Expectation | None]
    maximize: bool | None = None
    differences: tuple[str, ...] = field(default=())


#: A tracker that holds every part of the sweep (per-step histories of both metrics, a NaN logged, a run still
#: running) and records no direction.
FULL = Profile(dict(EXPECTED))


def _ended(pick: Pick) -> Expectation:
    """The running run as the run it became, finished, with values (0.97, 0.97) for either pick."""
    kept, dropped = EXPECTED[pick]
    return {**kept, ("mlp", "3"): (0.97, 0.97)}, {key: why for key, why in dropped.items() if key != ("mlp", "3")}


#: A tracker whose runs are recorded when they end (a Tune experiment, a Hydra multirun): the running run of the
#: sweep is there finished.
ENDED = Profile({pick: _ended(pick) for pick in PICKS}, differences=("runs are recorded when they end",))

#: A source of the sweep: a function that opens it (called once per check, so each check reads afresh).
Opener = Callable[[], Source]


@dataclass(frozen=True)
class Check:
    """One check of the suite: ``check(open_source, profile)`` raises :class:`AssertionError` saying what the
    source got wrong.

    Attributes
    ----------
    name
        A short identifier (a pytest id): ``run_table-last``, ``summary-best_val_step``, ``direction``, ``sink``.
    description
        What it checks, in a sentence.
    needs
        The pick whose runs the check needs (None: any): it does not apply to a profile that refuses that pick.
    """

    name: str
    description: str
    test: Callable[[Opener, Profile], None]
    needs: str | None = None

    def applies_to(self, profile: Profile) -> bool:
        """Whether the check applies to a source of that profile."""
        return self.needs is None or profile.expected[self.needs] is not None

    def __call__(self, open_source: Opener, profile: Profile = FULL) -> None:
        self.test(open_source, profile)


def check_source(open_source: Opener, profile: Profile = FULL) -> list[str]:
    """Run every check of :data:`CHECKS` that applies to ``profile`` on the source ``open_source()`` gives.

    Parameters
    ----------
    open_source
        Opens a source holding :data:`SWEEP` (``lambda: boontrack.open_source("ledger:PATH")``); called once per
        check.
    profile
        What the source holds of the sweep (:data:`FULL` by default).

    Returns
    -------
    list of str
        The names of the checks run, all passed.

    Raises
    ------
    AssertionError
        Naming every check that failed and what the source got wrong in it. Any other error (the source cannot
        be opened or read) is raised as it is, at the first check that meets it.
    """
    failures, passed = [], []
    for check in CHECKS:
        if not check.applies_to(profile):
            continue
        try:
            check(open_source, profile)
        except AssertionError as failure:
            failures.append(f"{check.name} ({check.description}): {failure}")
        else:
            passed.append(check.name)
    if failures:
        raise AssertionError(f"{len(failures)} of {len(failures) + len(passed)} checks failed:\n" + "\n".join(failures))
    return passed


def _spec(pick: Pick) -> Spec:
    return Spec(
        val=VAL, test=TEST, group_by=("model",), seed_column="seed", n=(1, 2), n_resamples=99, pick=pick, maximize=True
    )


def _read_table(open_source: Opener, pick: Pick) -> RunTable:
    from boontrack.runtable import RunTable

    spec = _spec(pick)
    request = MetricRequest(val=spec.val, test=spec.test, maximize=True, pick=spec.pick)
    return RunTable.from_frame(open_source().read(request), spec)


def _run_keys(table: RunTable) -> dict[str, tuple[str, str]]:
    """run id -> (model, seed): the ids differ between trackers, the runs' params do not."""
    runs = table.all_runs()
    seeds = [str(int(float(seed))) for seed in runs["params.seed"]]
    return dict(zip(runs["run_id"], zip(runs["params.model"].astype(str), seeds)))


def _same(what: str, got: object, expected: object) -> None:
    if got == expected:
        return
    if isinstance(got, dict) and isinstance(expected, dict):  # say which entries differ, not the two whole dicts
        parts = [
            f"{label} {entries}"
            for label, entries in (
                ("missing", {key: expected[key] for key in expected.keys() - got.keys()}),
                ("unexpected", {key: got[key] for key in got.keys() - expected.keys()}),
                ("got", {key: got[key] for key in got.keys() & expected.keys() if got[key] != expected[key]}),
                (
                    "where expected",
                    {key: expected[key] for key in got.keys() & expected.keys() if got[key] != expected[key]},
                ),
            )
            if entries
        ]
        raise AssertionError(f"{what}: {'; '.join(parts)}")
    raise AssertionError(f"{what}: got {got!r}, expected {expected!r}")


def _reads_the_runs(pick: Pick) -> Callable[[Opener, Profile], None]:
    def check(open_source: Opener, profile: Profile) -> None:
        expected = profile.expected[pick]
        if expected is None:  # one value per run and metric: no per-step values to pick from
            try:
                _read_table(open_source, pick)
            except InputError as refusal:
                if not re.search(r"at its best validation step, and .* holds one value per run", str(refusal)):
                    raise AssertionError(f"refused pick={pick!r} for another reason: {refusal}") from None
                return
            raise AssertionError(f"pick={pick!r} was answered; the profile says the source must refuse it")
        table = _read_table(open_source, pick)
        keys = _run_keys(table)
        want_kept, want_dropped = expected
        _same("dropped runs", {keys[d.run_id]: d.reason for d in table.dropped}, want_dropped)
        _same("kept runs (val, test)", {keys[r.run_id]: (r.val, r.test) for r in table.runs.itertuples()}, want_kept)
        _same("groups", table.groups, ("cnn", "mlp"))
        groups = {keys[r.run_id]: r.group for r in table.runs.itertuples()}
        _same("each run's group", groups, {key: key[0] for key in want_kept})

    return check


def _numbers(table: RunTable, pick: Pick) -> dict[tuple[str, str], float]:
    """The point estimates a summary reports (intervals depend on the run order, which follows the ids)."""
    from boontrack.analysis import analyze

    summary = analyze(table, _spec(pick))
    numbers = {}
    for group in summary.groups:
        numbers[(group.label, "runs")] = float(group.runs)
        numbers[(group.label, "mean")] = group.mean.estimate
        numbers.update({(group.label, f"boo_{n}"): est.estimate for n, est in group.boo_n.items()})
        numbers.update({(group.label, f"curve_{n}"): v for n, v in zip(group.curve.n, group.curve.estimate)})
    return numbers


def _summary_numbers(pick: Pick) -> Callable[[Opener, Profile], None]:
    def check(open_source: Opener, profile: Profile) -> None:
        import pandas as pd

        from boontrack.runtable import RunTable

        expected = profile.expected[pick]
        if expected is None:
            raise AssertionError(f"the profile says the source refuses pick={pick!r}: it has no summary to check")
        kept, _ = expected
        numbers = _numbers(_read_table(open_source, pick), pick)
        reference = pd.DataFrame(
            [
                {"run_id": f"{model}-{seed}", "params.model": model, "params.seed": seed, VAL: val, TEST: test}
                for (model, seed), (val, test) in sorted(kept.items())
            ]
        )
        want = _numbers(RunTable.from_frame(reference, _spec(pick)), pick)
        _same("summary numbers", sorted(numbers), sorted(want))
        off = {
            key: (numbers[key], want[key]) for key in want if not math.isclose(numbers[key], want[key], abs_tol=1e-12)
        }
        _same("numbers (got, expected) that differ from the same runs in a table", off, {})
        # Boo_1 is the mean test score of the group: a closed form, independent of the estimator's code
        for model in ("cnn", "mlp"):
            tests = [test for (m, _), (_, test) in kept.items() if m == model]
            if not math.isclose(numbers[(model, "boo_1")], sum(tests) / len(tests), abs_tol=1e-12):
                raise AssertionError(f"Boo_1 of {model} is {numbers[(model, 'boo_1')]}, not its mean test score")

    return check


def _direction(open_source: Opener, profile: Profile) -> None:
    source = open_source()
    direction = source.direction(VAL)
    _same(f"direction({VAL!r}).maximize", None if direction is None else direction.maximize, profile.maximize)
    _same("the direction of a metric the sweep does not have", source.direction("not_a_metric_of_the_sweep"), None)
    if direction is not None:  # it says who says so, for the summary
        if not direction.said_by:
            raise AssertionError("the direction does not say who records it (said_by)")
        _same(
            "who the summary says chose the direction",
            Spec(val=VAL).resolve_direction(direction).direction_from,
            direction.said_by,
        )


#: The key a check opens a source's sink with (32 hex digits, as :func:`boontrack.pipeline.summary_key` gives).
SINK_KEY = "0123456789abcdef0123456789abcdef"


def _sink(open_source: Opener, profile: Profile) -> None:
    try:
        sink = open_source().sink(SINK_KEY)
    except InputError:  # a source that cannot be written back (Source.sink's default): no sink to check
        return
    check_sink(sink)


@contextlib.contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def check_sink(sink: Sink) -> None:
    """``sink`` refuses to write an artifact whose path would leave its place (``ValueError``, as
    :func:`~boontrack.runframe.artifact_path` raises it) and leaves no such file behind.

    Each write is tried from a temporary working directory, where a relative escape would land: the process's
    working directory changes while it runs (restored after), so do not run it beside threads that depend on it.

    Raises
    ------
    AssertionError
        Naming the artifact path that was written, escaped or refused for another reason.
    """
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="boontrack-conformance-") as scratch:
        root = Path(scratch).resolve()
        (root / "cwd").mkdir()
        for artifact in ("../escaped.txt", "a/../../escaped.txt", str(root / "absolute" / "escaped.txt")):
            outputs = SummaryOutputs(
                metrics={f"boon/{VAL}/boo_1": 0.7},
                curves=[CurveSeries(f"boon/{VAL}/curve", np.array([1, 2]), np.array([0.7, 0.72]))],
                artifacts={"report.md": b"# ok\n", artifact: b"escaped"},
                description="summary",
            )
            with _working_directory(root / "cwd"):
                try:
                    sink.write(outputs)
                except ValueError as refusal:
                    if "cannot be written" not in str(refusal):
                        raise AssertionError(f"artifact {artifact!r} refused for another reason: {refusal}") from None
                else:
                    raise AssertionError(f"the sink wrote the artifact {artifact!r}, whose path leaves its place")
            escaped = sorted(str(path) for path in root.rglob("escaped.txt"))
            _same(f"files written for the artifact {artifact!r}", escaped, [])


#: Every check, in the order :func:`check_source` runs them.
CHECKS = (
    *(
        Check(
            f"run_table-{pick}",
            f"with pick={pick!r}, the runs kept with the values logged and the others dropped for the reasons "
            "written by hand, or the pick refused by a source of one value per run",
            _reads_the_runs(pick),
        )
        for pick in PICKS
    ),
    *(
        Check(
            f"summary-{pick}",
            f"with pick={pick!r}, the summary numbers of the same runs given as a table",
            _summary_numbers(pick),
            needs=pick,
        )
        for pick in PICKS
    ),
    Check("direction", "the direction of val_acc the tracker records, or None, and who records it", _direction),
    Check("sink", "the source's sink, if it has one, writes no artifact outside its place", _sink),
)
