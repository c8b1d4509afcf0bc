"""Fixtures for the W&B backend tests: real ``wandb`` code, no cloud.

Every ``WANDB_*`` directory points into a temporary directory (the session fixture ``wandb_env`` of
``tests/conftest.py``), runs are written with the real library in offline
mode, and the public-API path talks to :mod:`wandb_double` (a contract double of the W&B wire protocol on
127.0.0.1). ``wandb.teardown()`` runs before the double stops, so that the ``wandb-core`` sidecar does not keep
retrying a server that is gone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("wandb", reason='needs the [wandb] extra: pip install ".[wandb]"')
from offline_files import add_offline_runs, finish_offline_runs  # noqa: E402
from wandb_double import WandbDouble  # noqa: E402
from wandb_sweep import BIG_TEXT, ENTITY, EPOCHS, MODELS, PROJECT, SEEDS, SWEEP  # noqa: E402


@dataclass
class LoggedRun:
    """What a test wrote with wandb: the independent expectation for every reader."""

    run_id: str
    config: dict[str, Any]
    history: list[dict[str, float]]
    extra_summary: dict[str, Any] = field(default_factory=dict)
    group: str = ""
    job_type: str = "train"
    tags: tuple[str, ...] = ()
    sweep: str = SWEEP
    exit_code: int = 0

    @property
    def last(self) -> dict[str, float]:
        return self.history[-1]


def _history(model: str, seed: int) -> list[dict[str, float]]:
    # Deterministic, seed-dependent curves whose best epoch is not always the last one.
    base = MODELS[model] + 0.01 * seed
    return [
        {
            "val_acc": round(base + 0.05 * math.sin(seed + 2 * epoch), 6),
            "test_acc": round(base - 0.02 + 0.01 * epoch, 6),
        }
        for epoch in range(EPOCHS)
    ]


@pytest.fixture(scope="session")
def offline_runs(wandb_env: Path) -> tuple[Path, dict[str, LoggedRun]]:
    """A small sweep written with the real wandb library in offline mode: 2 models x 5 seeds, one failed run,
    one run with a 70 kB config value, and one boontrack aggregate run that readers must leave out."""
    import wandb

    directory = wandb_env / "offline"
    directory.mkdir()
    logged: dict[str, LoggedRun] = {}
    files: list[Path] = []

    def write(
        config: dict[str, Any],
        history: list[dict[str, float]],
        *,
        exit_code: int = 0,
        job_type: str = "train",
        group: str = "",
        tags: tuple[str, ...] = (),
        extra: dict[str, Any] | None = None,
    ) -> None:
        run = wandb.init(
            entity=ENTITY,
            project=PROJECT,
            mode="offline",
            dir=str(directory),
            config=config,
            job_type=job_type,
            group=group or None,
            tags=list(tags),
            reinit="create_new",
            settings=wandb.Settings(sweep_id=SWEEP, console="off", x_disable_stats=True),
        )
        for row in history:
            run.log(row)
        run.summary.update(extra or {})
        run.finish(exit_code=exit_code)
        files.append(Path(run.settings.sync_file))
        logged[run.id] = LoggedRun(run.id, config, history, dict(extra or {}), group, job_type, tags, SWEEP, exit_code)

    for model in MODELS:
        for seed in SEEDS:
            history = _history(model, seed)
            write(
                {"model": model, "seed": seed, "optim": {"name": "adam", "lr": 0.001}},
                history,
                group=f"{model}-sweep",
                tags=("sweep", model),
                extra={"best_val_acc": max(r["val_acc"] for r in history)},
            )
    write(
        {"model": "cnn", "seed": 99, "optim": {"name": "adam", "lr": 0.001}},
        _history("cnn", 0)[:2],
        exit_code=1,
        group="cnn-sweep",
    )
    write({"model": "mlp", "seed": 98, "note": BIG_TEXT}, _history("mlp", 1), group="mlp-sweep")
    write({"boontrack.role": "summary"}, [{"boon/n": 1.0}], job_type="boontrack")
    finish_offline_runs(files)
    return directory, logged


@pytest.fixture(scope="session")
def double(wandb_env: Path, offline_runs: tuple[Path, dict[str, LoggedRun]]):
    """The wire-protocol double, seeded from the offline run files, with WANDB_BASE_URL pointing at it."""
    server = WandbDouble(ENTITY).start()
    add_offline_runs(server, offline_runs[0])
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("WANDB_BASE_URL", server.url)
        yield server
        import wandb

        wandb.teardown()  # before the server goes: the sidecar would otherwise retry it at exit
        server.stop()


@pytest.fixture
def fresh_log(double: WandbDouble) -> WandbDouble:
    """The double with an empty request log and no pending faults."""
    double.reset_log()
    double.faults.clear()
    double.delay_s = 0.0
    yield double
    double.faults.clear()
    double.delay_s = 0.0
    double.refused.clear()
    double.release_held()  # to a client that gave up on them, before the next test's faults are set
