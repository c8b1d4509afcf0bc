"""The W&B SDK behind one door: imported on first use, its API client made with a timeout, and its errors turned
into boontrack's (without credentials). The source and the sink both go through here."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from boontrack.exceptions import BackendError, InputError
from boontrack.integration import import_optional, redact

#: Seconds to wait for one W&B API call, retries included (wandb retries 429 and 5xx with back-off).
DEFAULT_TIMEOUT_S = 60.0
#: Runs listed per request.
PAGE_SIZE = 500


class Place(Protocol):
    """What the sink needs of where it writes: a project, and the sweep or group its summary is of."""

    entity: str
    project: str
    sweep: str | None
    group: str | None
    timeout_s: float

    @property
    def path(self) -> str: ...

    def identity(self) -> str: ...


class Selection(Place, Protocol):
    """What the discovery and the change token need of a ``wandb:`` source (its selection of runs)."""

    def describe(self) -> str: ...

    def server_filters(self) -> dict[str, Any]: ...


def import_wandb() -> Any:
    """``wandb``, or MissingExtraError with the install hint."""
    return import_optional("wandb", extra="wandb", needed_for="the W&B backend")


def _api_failure_types(wandb: Any) -> tuple[type[BaseException], ...]:
    # Listing and summary updates raise WandbApiFailedError, which is not a wandb.Error.
    from wandb.sdk.lib.service.service_connection import WandbApiFailedError

    return (wandb.Error, WandbApiFailedError)


@contextmanager
def translate_errors(what: str, timeout_s: float) -> Iterator[None]:
    """Turn what the wandb SDK raises into BackendError/InputError naming ``what``, with no credentials."""
    wandb = import_wandb()
    try:
        yield
    except (InputError, BackendError):
        raise
    except _api_failure_types(wandb) + (ValueError,) as exc:
        message = redact(str(exc).strip())
        lowered = message.lower()
        if "no api key" in lowered:
            raise BackendError(f"{what}: no W&B API key configured; set WANDB_API_KEY or run `wandb login`") from None
        if "did not respond in time" in lowered:
            raise BackendError(
                f"{what}: W&B did not answer within {timeout_s:g} s (rate limited, server errors or a slow server; "
                "wandb retries 429 and 5xx with back-off, WANDB_X_GRAPHQL_RETRY_MAX caps the attempts)"
            ) from None
        if any(sign in lowered for sign in ("401", "unauthorized", "api key must", "did not recognize")):
            raise BackendError(f"{what}: W&B rejected the API key ({message})") from None
        if isinstance(exc, wandb.errors.AuthenticationError):
            raise BackendError(f"{what}: could not verify the W&B API key ({message})") from None
        if "could not find" in lowered or "404" in message:
            raise InputError(f"{what}: not found on W&B ({message})") from None
        raise BackendError(f"{what}: W&B API call failed: {message}") from None


def make_api(entity: str, timeout_s: float) -> Any:
    """A fresh ``wandb.Api`` (listings are cached per instance, so a long-lived process needs a new one)."""
    wandb = import_wandb()
    with translate_errors(f"wandb:{entity}", timeout_s):
        # The entity override spares a GetDefaultEntity request; base URL and key come from the usual
        # WANDB_BASE_URL / WANDB_API_KEY / netrc settings.
        return wandb.Api(overrides={"entity": entity}, timeout=timeout_s)
