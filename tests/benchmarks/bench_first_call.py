"""Benchmark: the cost of the first ``boontrack.boo_n`` call in a fresh interpreter.

Run by hand: ``python tests/benchmarks/bench_first_call.py`` (about a minute; prints a Markdown table). Each
case runs in its own fresh process, ``--repeat`` times; the table gives the median CPU time (user + system, the
whole process including interpreter start-up) and the median peak resident memory, read with ``getrusage`` of
the finished child. Next to boontrack: a bare interpreter, ``import numpy`` alone, and the same V estimate
written with numpy only, so the difference is what boontrack itself costs.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys

import numpy as np

SCORES = "[0.70, 0.72, 0.71, 0.69, 0.73, 0.68, 0.74, 0.70]"

CASES = {
    "bare interpreter": "pass",
    "`import numpy`": "import numpy",
    "numpy-only V estimate, n = 5": (
        "import numpy as np\n"
        f"v = np.sort(np.array({SCORES}))\n"
        "k = np.arange(v.size + 1) / v.size\n"
        "print(float(np.diff(k ** 5) @ v))"
    ),
    "`import boontrack`": "import boontrack",
    "`import boontrack; boontrack.boo_n(scores, n=5)`": f"import boontrack\nprint(boontrack.boo_n({SCORES}, n=5))",
    # What the first call cost while the estimators imported these at module level (boontrack <= 0.1.0).
    "the same, with `scipy.integrate`, `scipy.special`, `scipy.stats` imported first": (
        f"import boontrack\nimport scipy.integrate, scipy.special, scipy.stats\nprint(boontrack.boo_n({SCORES}, n=5))"
    ),
}

#: Printed by the boo_n case: which heavy scipy modules the first call loaded.
PROBE = (
    "\nimport sys\n"
    "print('loaded:', ', '.join(m for m in ('scipy', 'scipy.integrate', 'scipy.special', 'scipy.stats') "
    "if m in sys.modules) or 'none of scipy')"
)


def measure(code: str, repeat: int) -> tuple[float, float, str]:
    """Median CPU time and peak memory over ``repeat`` fresh processes.

    The peak of each process is measured in a grandchild, because ``RUSAGE_CHILDREN`` reports the maximum over
    every child so far rather than the last one.
    """
    cpus, peaks, output = [], [], ""
    wrapper = (
        "import resource, subprocess, sys\n"
        "subprocess.run([sys.executable, '-c', sys.argv[1]], check=True)\n"
        "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print('RUSAGE', r.ru_utime + r.ru_stime, r.ru_maxrss)\n"
    )
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", wrapper, code], capture_output=True, text=True, check=True, env=os.environ
        )
        lines = done.stdout.strip().splitlines()
        _, cpu, maxrss = lines[-1].split()
        cpus.append(float(cpu))
        peaks.append(int(maxrss) / (2**20 if sys.platform == "darwin" else 1024))
        output = "\n".join(lines[:-1])
    return statistics.median(cpus), statistics.median(peaks), output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="fresh processes per case (median reported)")
    args = parser.parse_args()
    import scipy

    print(
        f"# First `boo_n` call in a fresh process\n\nPython {platform.python_version()}, numpy {np.__version__}, "
        f"scipy {scipy.__version__}, {platform.machine()}; median of {args.repeat} fresh processes.\n"
    )
    print("| what the process does | CPU time | peak memory |")
    print("|---|---|---|")
    loaded = ""
    for label, code in CASES.items():
        is_boo_n = "boo_n" in code and "scipy" not in code
        cpu, peak, output = measure(code + (PROBE if is_boo_n else ""), args.repeat)
        if is_boo_n:
            loaded = output.splitlines()[-1]
        print(f"| {label} | {cpu:.2f} s | {peak:.0f} MiB |")
    print(f"\nModules the first `boo_n` call loaded: {loaded.removeprefix('loaded: ')}.")


if __name__ == "__main__":
    main()
