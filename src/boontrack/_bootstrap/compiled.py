"""The studentized evaluation pass compiled with numba (the ``fast`` extra), when numba is installed.

:meth:`boontrack._bootstrap.kernels.RankedRuns.boo_n_studentized` evaluates, for every resample and budget, Boo_n
and its standard error from the resample's counts per tie block. In numpy that is several passes over
(budgets, resamples, blocks) arrays; compiled, it is one pass per resample and budget over the blocks, in
registers. The draws and the counting stay numpy's, so the resamples are the same; the numpy pass stays the
reference (the two agree to rounding: tested to 1e-12 relative).

It is used only when numba can be imported, the work of a call is large enough to pay for loading it
(:data:`MIN_WORK`), and ``BOONTRACK_KERNEL`` is not ``numpy`` (which forces the numpy pass). numba's cache of
the compiled code goes to ``NUMBA_CACHE_DIR`` when set, else to ``$XDG_CACHE_HOME/boontrack/numba`` (or
``~/.cache/boontrack/numba``), never into the installed package: when that directory cannot be written, or numba
was imported before boontrack could name it, the code is compiled without a cache.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: Environment variable: ``numpy`` forces the numpy kernels even where numba is installed.
KERNEL_VARIABLE = "BOONTRACK_KERNEL"
#: Blocks x budgets x resamples of a studentized distribution below which the numpy pass runs: loading numba and
#: its cached code costs 0.6-0.9 s of CPU once per process, the numpy pass of 3 x 10^7 such elements as much
#: (the compiled pass takes 0.2-0.3x the numpy pass's time at 100-400 blocks).
MIN_WORK = 3 * 10**7


def _studentized_loops(
    cum: np.ndarray,
    falls: np.ndarray,
    first_means: np.ndarray,
    share: np.ndarray,
    spread: np.ndarray,
    ties: bool,
    cdf: np.ndarray,
    slope: np.ndarray,
    values: np.ndarray,
    variances: np.ndarray,
) -> None:  # pragma: no cover - run compiled; the equality test runs it compiled and in Python
    """The loops of the studentized pass: ``values`` and ``variances`` (resamples, budgets), filled in place.

    The same sums as the numpy pass, in the same order where numpy sums in order (the reverse cumulative sum).
    """
    resamples, blocks = cum.shape
    influence = np.empty(blocks)
    for i in range(resamples):
        for k in range(cdf.shape[0]):
            value = 0.0
            total = 0.0
            for b in range(blocks - 1, -1, -1):  # R_b: the sum of the terms from b up
                value += cdf[k, cum[i, b]] * falls[i, b]
                total += slope[k, cum[i, b]] * falls[i, b]
                influence[b] = total
            mean = 0.0
            for b in range(blocks):
                mean += share[i, b] * influence[b]
            variance = 0.0
            below = cdf[k, 0]
            for b in range(blocks):
                centred = influence[b] - mean
                variance += share[i, b] * centred * centred
                if ties:  # the block's weight D_b = P(C_b) - P(C_{b-1}), per share of draws (in spread)
                    above = cdf[k, cum[i, b]]
                    variance += spread[i, b] * (above - below) * (above - below)
                    below = above
            values[i, k] = value - cdf[k, 0] * first_means[i]
            variances[i, k] = variance


def _writable_cache_directory() -> str | None:
    """``NUMBA_CACHE_DIR``, else boontrack's directory under the user's cache; None when it cannot be written
    (numba would then fall back to a directory beside this file)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    directory = Path(os.environ.get("NUMBA_CACHE_DIR") or Path(base) / "boontrack" / "numba")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return str(directory) if os.access(directory, os.W_OK) else None


@functools.cache
def studentized_kernel() -> Callable[..., None] | None:
    """The compiled :func:`_studentized_loops`, or None (numba absent, or ``BOONTRACK_KERNEL=numpy``)."""
    if os.environ.get(KERNEL_VARIABLE, "").lower() == "numpy" or importlib.util.find_spec("numba") is None:
        return None
    directory = None if "numba" in sys.modules else _writable_cache_directory()
    if directory is not None:
        os.environ["NUMBA_CACHE_DIR"] = directory  # read by numba when imported
    import numba

    cache = bool(numba.config.CACHE_DIR) and directory is not None  # never beside this file, in the package
    compiled: Any = numba.njit(cache=cache, nogil=True)(_studentized_loops)
    return compiled


def compiled_pass(work: int) -> Callable[..., None] | None:
    """The compiled pass for a call of ``work`` blocks x budgets x resamples, or None for the numpy pass."""
    return studentized_kernel() if work >= MIN_WORK else None
