"""Every source gives the same RunTable and the same summary numbers for the same sweep, knows the direction its
tracker records, refuses what it cannot hold, and writes no artifact outside its place.

The sweep and the checks are :mod:`boontrack.testing`'s, the suite a third party's backend runs in its own tests
(``tests/test_third_party_backend.py`` runs the example one's). The sweep is logged for real to each source of
:data:`conformance.conftest.SOURCES` (every built-in backend); each must keep the runs its profile says with the
values logged and drop the others for the reasons written down by hand, for both picks. The tests below also
check that the suite catches a source and a sink that break the contract.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from boontrack.backends import Sink, Source, SummaryOutputs
from boontrack.directory import DirectorySink
from boontrack.testing import CHECKS, Profile, check_sink, check_source

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.name)
def test_every_source_conforms(logged, check):
    if not check.applies_to(logged.profile):
        pytest.skip(f"this source refuses the pick {check.needs!r} (the run-table check checks it)")
    check(logged.open, logged.profile)


def test_the_directory_sink_writes_no_artifact_outside_its_place(tmp_path):
    check_sink(DirectorySink(tmp_path / "out" / "summary"))


def test_the_suite_runs_every_check_that_applies_to_a_source(source_csv):
    assert check_source(source_csv.open, source_csv.profile) == [check.name for check in CHECKS]
    # a source of one value per run and metric: the best-validation pick is refused, and its numbers not checked
    profile = Profile({**source_csv.profile.expected, "best_val_step": None})
    assert "summary-best_val_step" not in [check.name for check in CHECKS if check.applies_to(profile)]


class _WithoutFailedRuns(Source):
    """Against the contract: a source that leaves failed runs out (the RunTable drops them, with their reason)."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def describe(self) -> str:
        return self.source.describe()

    def identity(self) -> str:
        return self.source.identity()

    def read(self, request):
        frame = self.source.read(request)
        return frame[frame["status"] != "failed"]


def test_a_source_that_drops_runs_itself_fails_the_suite_with_the_runs_it_lost(source_csv):
    with pytest.raises(AssertionError, match=r"2 of 6 checks failed") as failed:
        check_source(lambda: _WithoutFailedRuns(source_csv.open()), source_csv.profile)
    message = str(failed.value)
    assert "run_table-last (" in message and "run_table-best_val_step (" in message
    assert "dropped runs: missing {('cnn', '3'): \"status 'failed'\"}" in message


class _UncheckedSink(Sink):
    """Against the contract: a sink that writes every artifact where its path points."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def read_fingerprint(self) -> str | None:
        return None

    def write(self, outputs: SummaryOutputs) -> None:
        for name, data in outputs.artifacts.items():
            path = self.directory / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def write_fingerprint(self, fingerprint: str) -> None:
        pass


def test_a_sink_that_writes_outside_its_place_fails_and_the_working_directory_is_restored(tmp_path):
    before = os.getcwd()
    with pytest.raises(AssertionError, match=r"the sink wrote the artifact '\.\./escaped\.txt'"):
        check_sink(_UncheckedSink(tmp_path / "out" / "summary"))
    assert os.getcwd() == before
