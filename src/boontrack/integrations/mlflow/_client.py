"""The one place that talks to the MLflow SDK set-up: import, tracking URI, HTTP bounds, errors, redaction.

MLflow is imported on first use only (``import mlflow`` costs 1-2 s), so ``import boontrack`` and
``boontrack --help`` stay fast.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from typing import Any

from boontrack._optional import import_optional
from boontrack._redact import redact
from boontrack.exceptions import BackendError

#: Defaults for interactive use, applied only while boontrack talks to MLflow and only when the user has
#: not set the variable. MLflow's own defaults (7 retries, 120 s timeout) block about four minutes when the
#: server is down; these give a clear error within a few seconds.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    # Without this, set_terminated prints a "View run" link and makes one extra request per call.
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


_env_lock = threading.Lock()
_env_users = 0
_env_added: list[str] = []


def import_mlflow() -> Any:
    """The ``mlflow`` module, or MissingExtraError with the install hint."""
    return import_optional("mlflow", extra="mlflow", needed_for="MLflow support")


@contextlib.contextmanager
def bounded_http() -> Iterator[None]:
    """Apply :data:`HTTP_DEFAULTS` for the variables the user has not set, for the duration of the block.

    Reference-counted so that concurrent boontrack calls in threads share one setting; the user's own values
    always win and are never touched.
    """
    global _env_users
    with _env_lock:
        if _env_users == 0:
            _env_added[:] = [k for k in HTTP_DEFAULTS if k not in os.environ]
            for key in _env_added:
                os.environ[key] = HTTP_DEFAULTS[key]
        _env_users += 1
    try:
        yield
    finally:
        with _env_lock:
            _env_users -= 1
            if _env_users == 0:
                for key in _env_added:
                    os.environ.pop(key, None)
                _env_added.clear()


def resolve_tracking_uri(tracking_uri: str | None) -> str:
    """The argument, else ``MLFLOW_TRACKING_URI``, else MLflow's own default (``sqlite:///mlflow.db``)."""
    if tracking_uri:
        return tracking_uri
    return import_mlflow().get_tracking_uri()


@contextlib.contextmanager
def backend_errors(action: str, uri: str) -> Iterator[None]:
    """Turn MLflow failures into :class:`BackendError` naming ``action`` and the (redacted) URI."""
    mlflow = import_mlflow()
    try:
        yield
    except mlflow.exceptions.MlflowException as exc:
        raise BackendError(f"MLflow at {redact(uri)} failed while {action}: {describe_error(exc)}") from None
    except OSError as exc:
        raise BackendError(f"MLflow at {redact(uri)} failed while {action}: {redact(str(exc))}") from None


def describe_error(exc: BaseException) -> str:
    """A one-paragraph, credential-free description of an MLflow exception."""
    code = getattr(exc, "error_code", None)
    message = redact(str(getattr(exc, "message", None) or exc)).strip()
    if len(message) > 600:
        message = message[:600] + " ..."
    return f"{code}: {message}" if code else message


def is_missing(exc: BaseException) -> bool:
    """Whether an MLflow exception says the object does not exist."""
    return getattr(exc, "error_code", None) == "RESOURCE_DOES_NOT_EXIST"


def connect(uri: str) -> Any:
    """An ``MlflowClient`` bound to ``uri`` (never the global tracking URI)."""
    mlflow = import_mlflow()
    return mlflow.MlflowClient(tracking_uri=uri)
