"""Writes benchmark_runs.csv: 2 approaches x 5 tasks x 10 seeds, the example of boontrack.across.across_tasks.

Made up, deterministically: Python's ``random.Random(51).random()``, whose sequence for a seed Python keeps
from version to version (its other methods may change), and scores rounded to 4 decimals, so the file is the
same wherever it is made again: ``python examples/benchmark_runs.py > examples/benchmark_runs.csv``
(tests/test_across.py checks that it is). Each score is a task's centre plus the approach's effect plus a sum of
three uniform draws (an Irwin-Hall spread); the validation score is the test score plus noise of its own.
"""

from __future__ import annotations

import random
import sys

#: task -> (centre, spread): tasks of different difficulty, as in a benchmark's datasets
TASKS = {"cola": (0.55, 0.06), "mrpc": (0.82, 0.03), "rte": (0.62, 0.08), "sst2": (0.91, 0.01), "stsb": (0.86, 0.02)}
#: approach -> its effect on each task's centre, in units of the task's spread (the s.d. of its runs)
EFFECT = {"baseline": 0.0, "new": 1.0}
SEEDS = 10


def rows(seed: int = 51) -> list[str]:
    draw = random.Random(seed).random
    lines = ["task,method,seed,val_acc,test_acc"]
    for task, (centre, spread) in TASKS.items():
        for method, effect in EFFECT.items():
            for s in range(SEEDS):
                test = centre + spread * (effect + 2.0 * (draw() + draw() + draw() - 1.5))
                val = test + spread * (draw() - 0.5)
                lines.append(f"{task},{method},{s},{val:.4f},{test:.4f}")
    return lines


if __name__ == "__main__":
    sys.stdout.write("\n".join(rows()) + "\n")
