"""How boontrack's reports state numbers and sentences, shared by ``report.md``, the terminal table and
``report.html`` (:mod:`boontrack.reports`, :mod:`boontrack.report_html`), so that each says the same figures.

The names without an underscore are this module's API within the package, which the reports import; the module
stays private to the package (its names are no part of boontrack's public API)."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from boontrack.spec import Spec
    from boontrack.summary import ComparisonSummary, IntervalEstimate, Summary, Unseen

#: Dropped runs listed in the Markdown report; the rest are in runs.csv.
REPORT_DROPPED = 20


GAUSSIAN_NOTE = (
    "The Gaussian Boo_n (eq. 6) assumes normally distributed scores; it is shown only when normality is not "
    "rejected and the estimate stays within the scores' possible and observed range (see the diagnostics). Even "
    "then, with few runs the normality test passes most skewed samples, on which the estimate is biased: the "
    "non-parametric Boo_n is the number to report."
)


#: Characters trackers accept in metric names besides letters and digits (MLflow's rule; "/" nests).
_UNSAFE_IN_METRIC = re.compile(r"[^A-Za-z0-9_\-. :/]")
_UNSAFE_IN_LABEL = re.compile(r"[^A-Za-z0-9_\-. :]")
#: Longest metric-name segment (MLflow takes names up to 250 characters; a comparison's name holds two groups).
MAX_NAME = 64


def safe_name(text: str, *, allow_slash: bool = False, hashed: bool = False) -> str:
    """``text`` as a metric-name segment every tracker accepts (a path of segments with ``allow_slash``).

    Characters other than letters, digits, ``_ - . :`` and space (and ``/`` when allowed) become ``_``. When a
    segment would be empty or only dots, when the name would be longer than :data:`MAX_NAME`, or when
    ``hashed`` is asked (see :func:`group_names`), the name is cut and ends with ``_`` and the first
    8 hex digits of the SHA-256 of ``text``, so that it stays distinct from the names of other texts.
    """
    cleaned = (_UNSAFE_IN_METRIC if allow_slash else _UNSAFE_IN_LABEL).sub("_", text)
    segments = cleaned.split("/") if allow_slash else [cleaned]
    unusable = [not segment.strip(". ") for segment in segments]
    if not (hashed or any(unusable) or len(cleaned) > MAX_NAME):
        return cleaned
    cleaned = "/".join("_" if bad else segment for segment, bad in zip(segments, unusable))
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned[: MAX_NAME - len(digest) - 1]}_{digest}"


def _one_in(rate: float) -> str:
    """A rate for people: "1 in 7" (13.9 %)."""
    return f"1 in {max(1, round(1 / rate))}"


def _percent(share: float) -> str:
    """A share in percent for people: whole percents from 1 %, two significant digits below (0.032 %, not 0 %)."""
    percent = 100 * share
    return f"{percent:.0f} %" if percent >= 1 else f"{percent:.2g} %"


def _floor_is(unseen: Unseen) -> str:
    """What the floor of "Not ruled out" is: the worst score possible only where the bounds were declared."""
    if unseen.assumed_bounds is None:
        return "the worst score possible"
    low, high = unseen.assumed_bounds
    return f"the worst score if the scores are bounded by [{low:g}, {high:g}], as these scores suggest"


def unseen_sentences(unseen: Unseen, runs: int, maximize: bool) -> list[str]:
    """What a group's runs cannot show (:class:`boontrack.summary.Unseen`), in sentences."""
    rate = unseen.rate
    sentences = [
        f"a kind of run rarer than {_one_in(rate)} ({_percent(rate)}) may be absent from these {runs} runs, as a "
        "failure mode or as a better top by validation, and no interval can show it"
    ]
    if unseen.mean_shift is not None:
        direction = "lower" if maximize else "raise"
        sentences.append(
            f"failures at that rate scoring {number_text(unseen.floor)} ({_floor_is(unseen)}) would {direction} the "
            f"mean by up to {number_text(unseen.mean_shift)}"
        )
    for n, (k, share) in sorted(unseen.top_runs.items()):
        sentence = f"Boo_{n} rests on the best {k} run{'s' if k != 1 else ''} ({_percent(share)} of its weight)"
        one, two = unseen.without_best.get(n, (None, None))
        if one is not None:
            sentence += f" and would be {number_text(one)} without the best run by validation"
            sentence += "" if two is None else f", {number_text(two)} without the best two"
        sentences.append(sentence)
    return sentences


def resamples_text(summary: Summary) -> str:
    """How many bootstrap resamples the groups' intervals took, as the reports say it."""
    if summary.spec.n_resamples != "auto":
        return f"{summary.spec.n_resamples:,} bootstrap resamples"
    counts = sorted({g.n_resamples for g in summary.groups})
    drawn = f"{counts[0]:,}" if len(counts) == 1 else f"{counts[0]:,}-{counts[-1]:,}"
    return f"{drawn} bootstrap resamples (as many as keep each interval end's Monte Carlo error below 5 % of its reach)"


def number_text(x: float | None) -> str:
    """A score for people: 4 significant digits, "n/a" when undefined."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.4g}"


def interval_text(i: IntervalEstimate) -> str:
    """An estimate and its interval: ``0.7629 [0.7515, 0.7739]``."""
    return f"{number_text(i.estimate)} [{number_text(i.ci_low)}, {number_text(i.ci_high)}]"


#: Display names of the tests of a comparison.
TEST_NAMES = {"paired_t": "paired t", "wilcoxon": "Wilcoxon", "welch": "Welch", "mann_whitney": "Mann-Whitney"}


def pvalue_text(x: float | None) -> str:
    return "n/a" if x is None or not math.isfinite(x) else ("<0.0001" if x < 1e-4 else f"{x:.3g}")


#: A cell of a budget that a group (or a comparison) does not report: it has too few runs for it.
TOO_FEW = "— (too few runs)"


def shown_budgets(spec: Spec, reported: Iterable[Mapping[int, Any]]) -> list[int]:
    """The budgets any group reports (``reported``: each group's Boo_n by budget), in the spec's order: the
    columns of the tables."""
    reported = list(reported)
    return [n for n in spec.budgets if any(n in boo_n for boo_n in reported)]


def scores_text(summary: Summary) -> str:
    return "test scores" if summary.has_test else "validation scores"


def number_name(n: int) -> str:
    return "the mean" if n == 1 else f"Boo_{n}"


def pair_doubts(summary: Summary, comparison: ComparisonSummary, n: int) -> list[str]:
    """Why the difference of a comparison at budget ``n`` (1: the mean) is doubtful: the doubts of either group
    there."""
    groups = [summary.group(comparison.group).doubts, summary.group(comparison.baseline).doubts]
    return list(dict.fromkeys(why for doubts in groups for why in doubts.get(n, ())))
