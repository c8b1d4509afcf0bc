"""A benchmark logged with the real wandb library in offline mode (the task, the method and the seed config keys)
summarized across its tasks by the command line with ``--task-column task``: the task is read from the config."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats

from boontrack import cli

pytest.importorskip("wandb", reason='needs the [wandb] extra: pip install ".[wandb]"')
from offline_files import finish_offline_runs  # noqa: E402

BENCHMARK = Path(__file__).resolve().parents[3] / "examples" / "benchmark_runs.csv"
TASKS = ("cola", "mrpc", "rte")


@pytest.fixture(scope="module")
def benchmark_runs(wandb_env: Path) -> tuple[Path, pd.DataFrame]:
    """Three tasks of the example benchmark, 2 methods x 4 seeds each: one offline run per row."""
    import wandb

    directory = wandb_env / "benchmark"
    directory.mkdir()
    frame = pd.read_csv(BENCHMARK)
    frame = frame[frame["task"].isin(TASKS) & (frame["seed"] < 4)]
    files = []
    for row in frame.itertuples(index=False):
        run = wandb.init(
            project="benchmark",
            mode="offline",
            dir=str(directory),
            config={"task": row.task, "method": row.method, "seed": int(row.seed)},
            reinit="create_new",
            settings=wandb.Settings(console="off", x_disable_stats=True),
        )
        run.log({"val_acc": row.val_acc, "test_acc": row.test_acc})
        run.finish()
        files.append(Path(run.settings.sync_file))
    finish_offline_runs(files)
    return directory, frame


def test_the_task_config_key_is_the_task_column(benchmark_runs):
    directory, frame = benchmark_runs
    result = CliRunner().invoke(
        cli.main,
        [
            "summarize", f"wandb-offline:{directory}", "--val", "val_acc", "--test", "test_acc", "--group-by",
            "method", "--seed-column", "seed", "--task-column", "task", "--maximize", "--resamples", "499",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("Across 3 tasks (task: cola, mrpc, rte)")))
    rows = {line.split()[0]: line for line in lines[start:] if line.split()[:2] in (["baseline", "12"], ["new", "12"])}
    for method in ("baseline", "new"):
        iqm = stats.trim_mean(frame.loc[frame["method"] == method, "test_acc"].to_numpy(), 0.25)
        assert f" {iqm:.4g} [" in rows[method]
