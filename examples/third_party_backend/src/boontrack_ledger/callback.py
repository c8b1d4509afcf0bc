"""The summary of a ledger's sweep, called by the user's script once the sweep is over: :func:`summarize_ledger`.

It keeps boontrack's callback contract: the keywords of ``boontrack.integration.CALLBACK_KEYWORDS`` with their
meaning everywhere, checked when it is called (a mistake in the call raises), and the one failure rule after
the sweep (``after_sweep``: nothing raises into the user's script unless ``raise_on_error``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from boontrack.integration import JobResult, after_sweep, callback_options, mlflow_destination, summarize_source
from boontrack_ledger.backend import LedgerSource
from boontrack_ledger.ledger import Ledger


def summarize_ledger(
    directory: str | Path,
    *,
    val: str,
    test: str | None = None,
    n: int | Sequence[int] | None = None,
    group_by: str | Sequence[str] | None = None,
    seed_column: str | None = None,
    task_column: str | None = None,
    pick: str = "last",
    maximize: bool | None = None,
    n_resamples: int | str = "auto",
    confidence_level: float = 0.95,
    seed: int = 0,
    tracking_uri: str | None = None,
    out: str | Path | None = None,
    plots: bool = True,
    raise_on_error: bool = False,
    mlflow_experiment: str | None = None,
    **spec_options: Any,
) -> JobResult:
    """Summarize the runs of the ledger in ``directory`` and write the summary back into it, as a run of its own.

    Parameters
    ----------
    directory
        The ledger.
    val, test, n, group_by, seed_column, task_column, pick, maximize, n_resamples, confidence_level, seed
        As the fields of ``boontrack.spec.Spec``. ``maximize``: None takes the direction of the ledger's
        objective when ``val`` is that metric.
    tracking_uri, mlflow_experiment
        Also write the summary as a run of this MLflow experiment, at this tracking URI.
    out
        Also write the summary into this directory.
    plots
        Render the PNG plots.
    raise_on_error
        False (default): what goes wrong once the sweep is over (no runs, a missing metric, a failed write) is
        warned (``boontrack.integration.WriteBackWarning``) and the result says so. True: it raises.
    **spec_options
        Any other field of ``boontrack.spec.Spec``.

    Returns
    -------
    JobResult
        ``"updated"``, ``"unchanged"`` (the ledger holds this summary already), ``"write-failed"`` or
        ``"failed"``, with the summary and the error if any.

    Raises
    ------
    InputError
        A mistake in the call (an unknown option, a bad value), whatever ``raise_on_error`` says.
    """
    # --8<-- [start:body]
    # Checked now, before anything is read: a mistake in the call is not a failure of the sweep.
    options = callback_options(summarize_ledger, locals())
    also = mlflow_destination(mlflow_experiment, options.tracking_uri)

    def job() -> JobResult:
        return summarize_source(
            LedgerSource(Ledger(directory)),
            options.spec,
            out=options.out,
            also=also,
            plots=options.plots,
            raise_on_write_error=options.raise_on_error,
        )

    return after_sweep(f"summarizing the ledger {directory}", job, raise_on_error=options.raise_on_error)
    # --8<-- [end:body]
