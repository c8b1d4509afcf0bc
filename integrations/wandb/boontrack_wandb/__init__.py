"""Weights & Biases backend: read sweeps, projects and offline runs; write an aggregate run back.

``pip install ".[wandb]"``. Importing this package does not import ``wandb``; the SDK is loaded on
first use. Two backends are registered under the entry-point group ``boontrack.backends``:

- ``wandb:ENTITY/PROJECT`` (options ``sweep``, ``group``, ``filters``, ``timeout``): runs listed through the
  public API, 500 to a request, written back to one aggregate run per (source, spec). Values are the runs'
  summary metrics; ``pick="best_val_step"`` costs one more request per run (its val/test history);
- with ``discover`` in a ``boontrack reaggregate`` job: every sweep (``by = "sweep"``, one ``GetSweeps`` request
  per 100 sweeps) or run group (``by = "group"``) of the project, each the source with option ``sweep`` or
  ``group``; before a full read, one light request (the run count and the most recent heartbeat) gives the
  selection's change token, which the aggregate run keeps beside its fingerprint (a summary value changed
  through the API after a run ended is not a change it sees: ``--force`` reads everything);
- ``wandb-offline:DIR``: the ``offline-run-*`` directories ``wandb`` writes with ``WANDB_MODE=offline``, read
  from their files with no network (read only);
- ``wandb:ENTITY/PROJECT`` as a destination (:meth:`WandbBackend.open_sink`, ``boontrack compare --write-to``):
  a summary of runs kept elsewhere, such as a comparison of sources, as an aggregate run of that project.

Errors: a missing or rejected API key, a server that keeps failing (429, 5xx, retried by wandb with back-off;
``WANDB_X_GRAPHQL_RETRY_MAX`` caps the attempts) or does not answer within ``timeout`` seconds raise
:class:`~boontrack.exceptions.BackendError`; an unknown project or sweep raises
:class:`~boontrack.exceptions.InputError`. Messages never contain the API key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from boontrack.integration import Backend, Discovered, InputError, check_options, lazy_exports

__all__ = ["WandbBackend", "WandbOfflineBackend", "summarize_sweep"]


# The callback imports the pipeline; load it only when asked for.
__getattr__, __dir__ = lazy_exports(globals(), {"summarize_sweep": "boontrack_wandb._callback"})


class WandbBackend(Backend):
    """``wandb:ENTITY/PROJECT``."""

    name: ClassVar[str] = "wandb"
    knows_directions: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {
        "sweep": "only runs of this sweep id",
        "group": "only runs of this W&B group",
        "filters": 'Mongo-style W&B run filters as JSON, e.g. \'{"state": "finished"}\'',
        "timeout": "seconds to wait for each W&B API call, retries included (default 60)",
    }
    sink_options: ClassVar[dict[str, str]] = {"timeout": options["timeout"]}
    discover_options: ClassVar[dict[str, str]] = {
        "by": "sweep (default): one job per W&B sweep of the project; group: one per run group"
    }

    def check_discover(self, location: str, select: Mapping[str, Any], **options: Any) -> None:
        """A project named as ``ENTITY/PROJECT``, sweeps or groups to find, and no option naming one of them."""
        _project(location)
        by = select.get("by", "sweep")
        if by not in ("sweep", "group"):
            raise InputError(f'wandb: discover \'by\' must be "sweep" or "group", got {by!r}')
        if options.get(by) is not None:
            raise InputError(f"wandb: discover by {by} finds the {by}s itself; give no {by} option")

    def discover(self, location: str, select: Mapping[str, Any], **options: Any) -> list[Discovered]:
        """Every sweep (``by = "sweep"``) or run group (``by = "group"``) of ``wandb:ENTITY/PROJECT``, each as
        the source with option ``sweep`` or ``group``."""
        from boontrack_wandb import _discover

        self.check_discover(location, select, **options)
        return _discover.discover(self.open_source(location, **options), select.get("by", "sweep"))

    def open_source(self, location: str, **options: Any):
        from boontrack_wandb._online import WandbSource, parse_filters

        options = check_options(self.name, options, self.options)
        entity, project = _project(location)
        return WandbSource(
            entity,
            project,
            sweep=options.get("sweep"),
            group=options.get("group"),
            filters=parse_filters(options.get("filters")),
            timeout_s=_timeout_s(options.get("timeout")),
        )

    def open_sink(self, location: str, key: str, **options: Any):
        """An aggregate run in the project ``location`` (``ENTITY/PROJECT``) holding a summary of runs kept
        elsewhere (a comparison of sources): written as a sweep's aggregate run is, its id derived from ``key``,
        rewritten only when its fingerprint changed. Option ``timeout``."""
        from boontrack_wandb._sink import ProjectDestination, WandbSink

        options = check_options(self.name, options, self.sink_options)
        entity, project = _project(location)
        return WandbSink(ProjectDestination(entity, project, _timeout_s(options.get("timeout"))), key)


def _project(location: str) -> tuple[str, str]:
    """The entity and project of ``wandb:ENTITY/PROJECT``."""
    entity, sep, project = location.strip("/").partition("/")
    if not (entity and sep and project) or "/" in project:
        raise InputError(f"wandb: expected wandb:ENTITY/PROJECT, got wandb:{location}")
    return entity, project


def _timeout_s(timeout: Any) -> float:
    """The option ``timeout`` in seconds (default :data:`._client.DEFAULT_TIMEOUT_S`)."""
    from boontrack_wandb._client import DEFAULT_TIMEOUT_S

    try:
        timeout_s = DEFAULT_TIMEOUT_S if timeout is None else float(timeout)
    except ValueError:
        raise InputError(f"wandb: timeout must be a number of seconds, got {timeout!r}") from None
    if not timeout_s > 0:
        raise InputError(f"wandb: timeout must be positive, got {timeout!r}")
    return timeout_s


class WandbOfflineBackend(Backend):
    """``wandb-offline:DIR``."""

    name: ClassVar[str] = "wandb-offline"
    local_location: ClassVar[bool] = True
    options: ClassVar[dict[str, str]] = {
        "sweep": "only runs of this sweep id",
        "group": "only runs of this W&B group",
    }

    def open_source(self, location: str, **options: Any):
        from boontrack_wandb._offline import WandbOfflineSource

        options = check_options(self.name, options, self.options)
        if not location:
            raise InputError("wandb-offline: give a directory, e.g. wandb-offline:./wandb")
        return WandbOfflineSource(Path(location), **options)
