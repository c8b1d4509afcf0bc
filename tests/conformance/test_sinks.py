"""Every sink writes artifacts through the same path check: nothing lands outside the summary's own place."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from boontrack.backends import CurveSeries, SummaryOutputs
from boontrack.directory import DirectorySink

KEY = "0123456789abcdef0123456789abcdef"


def outputs_with(artifact: str) -> SummaryOutputs:
    return SummaryOutputs(
        metrics={"boon/val_acc/boo_1": 0.7},
        curves=[CurveSeries("boon/val_acc/curve", np.array([1, 2]), np.array([0.7, 0.72]))],
        artifacts={"report.md": b"# ok\n", artifact: b"escaped"},
        description="summary",
    )


@pytest.fixture(params=["directory", "mlflow_sqlite", "wandb_double", "memory"])
def sink(request, tmp_path):
    if request.param == "directory":
        return DirectorySink(tmp_path / "out" / "summary")
    return request.getfixturevalue(f"source_{request.param}").open("last").sink(KEY)


@pytest.mark.slow
@pytest.mark.parametrize("artifact", ["../escaped.txt", "/tmp/escaped.txt", "a/../../escaped.txt"])
def test_no_sink_writes_an_artifact_outside_its_place(sink, artifact, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a relative escape would land here
    with pytest.raises(ValueError, match="cannot be written"):
        sink.write(outputs_with(artifact))
    assert not any(path.name == "escaped.txt" for path in Path(tmp_path).rglob("*"))
    assert not Path("/tmp/escaped.txt").exists()
