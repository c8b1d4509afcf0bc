"""A Hydra app for the tests: each job returns what the table in ``$SWEEP_SCORES`` holds for its model and seed.

The table (JSON) maps ``"<model>/<lr>/<seed>"`` to a number, a mapping of metrics, or ``"fail"`` (the job raises).
A mapping is returned with the metric ``pid``, the process that ran the job; the app prints its own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import hydra


@hydra.main(version_base=None, config_path="conf", config_name="config")
def main(cfg):
    result = json.loads(Path(os.environ["SWEEP_SCORES"]).read_text())[f"{cfg.model}/{cfg.lr}/{cfg.seed}"]
    if result == "fail":
        raise RuntimeError(f"diverged at seed {cfg.seed}")
    return {**result, "pid": os.getpid()} if isinstance(result, dict) else result


if __name__ == "__main__":
    print(f"launched by process {os.getpid()}", flush=True)
    main()
