"""The one place that talks to the MLflow SDK set-up: import, tracking URI, HTTP bounds, errors, redaction.

MLflow is imported on first use only (``import mlflow`` costs 1-2 s), so ``import boontrack`` and
``boontrack --help`` stay fast.
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import os
import socket
import sys
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from boontrack.exceptions import BackendError, InputError
from boontrack.integration import import_optional, redact, seconds_from_environment

#: Defaults for interactive use, applied only while boontrack talks to MLflow and only when the user has
#: not set the variable. MLflow's own defaults (7 retries, 120 s timeout) block about four minutes when the
#: server is down; with these a refused connection fails at once (it is not retried at all) and a server that
#: does not answer within a few seconds.
HTTP_DEFAULTS = {
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES": "2",
    "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": "1",
    "MLFLOW_HTTP_REQUEST_TIMEOUT": "10",
    # Without this, set_terminated prints a "View run" link and makes one extra request per call.
    "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true",
}


#: Environment variable: the most seconds one job spends on a failing MLflow server (its start-up until its first
#: request, failed attempts, back-off and the waits a server asks for with ``Retry-After``), summed over all its
#: requests.
MAX_WAIT_VARIABLE = "BOONTRACK_MLFLOW_MAX_WAIT"
DEFAULT_MAX_WAIT_S = 60.0
#: The shortest timeout of one attempt, whatever remains of the budget: a job whose start-up alone took its
#: budget (a machine loaded far beyond its cores) still gets an answer from a server that is up.
MIN_ATTEMPT_TIMEOUT_S = 1.0


class RetryBudget:
    """The time one job may still spend waiting on MLflow servers; shared by a source and its sink.

    The job's start-up against a server counts, once: from the moment :func:`connect` begins (the check that the
    server listens, importing MLflow, setting up its client) to the job's first request. It takes seconds, far
    more on a loaded machine (26 s was seen), and a server that never answers must be reported within the budget
    of that start, not of the first request. The time before connecting is not charged: a source made long before
    it reads (in a notebook, or a job queued behind others) keeps its whole budget. Then every retry costs the time
    of the failed attempt plus the wait before the next one (``Retry-After`` when the server sends it, else
    MLflow's exponential back-off). A retry that would take the total past the budget is not made: the request
    fails at once, and the error says what the server asked for. No attempt waits longer for an answer than what
    remains (:meth:`timeout`).
    """

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = max_wait_s() if seconds is None else float(seconds)
        self.spent = 0.0
        self._connecting_since: float | None = None  # set by begin_start_up, cleared once charged
        self._start_up_charged = False

    def allows(self, cost: float) -> bool:
        return self.spent + cost <= self.seconds

    def spend(self, cost: float) -> None:
        self.spent += cost

    def begin_start_up(self) -> None:
        """Mark the start of the job's start-up against a server (:func:`connect`), once per budget: a second
        client made for the same job (none is, today) must not charge the first's start-up twice."""
        if self._connecting_since is None and not self._start_up_charged:
            self._connecting_since = time.monotonic()

    def charge_start_up(self) -> None:
        """Charge the start-up begun at :meth:`begin_start_up`, once: called when the job first sends a request,
        so that MLflow's set-up made lazily by its first call counts as well."""
        if self._connecting_since is not None:
            self.spend(time.monotonic() - self._connecting_since)
            self._connecting_since = None
            self._start_up_charged = True

    def timeout(self, wanted: float | None) -> float:
        """The timeout of one attempt: ``wanted`` (None: no limit of its own) cut to what remains of the budget,
        a start-up under way included, and at least :data:`MIN_ATTEMPT_TIMEOUT_S`."""
        start_up = 0.0 if self._connecting_since is None else time.monotonic() - self._connecting_since
        remaining = max(self.seconds - self.spent - start_up, MIN_ATTEMPT_TIMEOUT_S)
        return remaining if wanted is None else min(wanted, remaining)


def max_wait_s() -> float:
    """:data:`MAX_WAIT_VARIABLE` in seconds (default :data:`DEFAULT_MAX_WAIT_S`); InputError when invalid."""
    return seconds_from_environment(MAX_WAIT_VARIABLE, DEFAULT_MAX_WAIT_S)


_env_lock = threading.Lock()
_env_users = 0
_env_added: list[str] = []
_budget: contextvars.ContextVar[RetryBudget | None] = contextvars.ContextVar("boontrack_mlflow_budget", default=None)
_original_request: Any = None


def import_mlflow() -> Any:
    """The ``mlflow`` module, or MissingExtraError with the install hint.

    Inside a :func:`bounded_http` block, MLflow's retries are bounded from here on: the block itself does not
    import MLflow (1-2 s), so that a read by SQL never loads it."""
    mlflow = import_optional("mlflow", extra="mlflow", needed_for="MLflow support")
    with _env_lock:
        if _env_users > 0:
            _install_budgeted_request()
    return mlflow


@contextlib.contextmanager
def bounded_http(budget: RetryBudget | None = None) -> Iterator[None]:
    """Apply :data:`HTTP_DEFAULTS` for the variables the user has not set, and charge every retry of an HTTP
    request to ``budget`` (a fresh :class:`RetryBudget` when None), for the duration of the block.

    Reference-counted so that concurrent boontrack calls in threads share one setting; the user's own values
    always win and are never touched. MLflow's retries are replaced, inside the block and for boontrack's
    calls only, by :func:`_budgeted_request`: the same attempts and back-off, within the budget.
    """
    global _env_users
    with _env_lock:
        if _env_users == 0:
            _env_added[:] = [k for k in HTTP_DEFAULTS if k not in os.environ]
            for key in _env_added:
                os.environ[key] = HTTP_DEFAULTS[key]
            _install_budgeted_request()
        _env_users += 1
    token = _budget.set(budget if budget is not None else RetryBudget())
    try:
        yield
    finally:
        _budget.reset(token)
        with _env_lock:
            _env_users -= 1
            if _env_users == 0:
                for key in _env_added:
                    os.environ.pop(key, None)
                _env_added.clear()
                _uninstall_budgeted_request()


def _install_budgeted_request() -> None:
    """Bound MLflow's retries, once MLflow is loaded: every client boontrack makes is made through
    :func:`import_mlflow`, which calls this again; a client the user made has loaded MLflow already."""
    global _original_request
    if "mlflow" not in sys.modules:
        return
    from mlflow.utils import rest_utils

    if _original_request is None:
        _original_request = rest_utils._get_http_response_with_retries
        rest_utils._get_http_response_with_retries = _budgeted_request


def _uninstall_budgeted_request() -> None:
    global _original_request
    if _original_request is not None:
        from mlflow.utils import rest_utils

        rest_utils._get_http_response_with_retries = _original_request
        _original_request = None


class RetryBudgetExceeded(Exception):
    """A retry was not made because it would take the job past its :class:`RetryBudget`."""


def _budgeted_request(method, url, max_retries, backoff_factor, backoff_jitter, retry_codes, *args, **kwargs):
    """MLflow's request with retries, each attempt made once by MLflow and retried here within the budget.

    Same signature as ``mlflow.utils.request_utils._get_http_response_with_retries``. Outside a boontrack
    call (no budget in this context) it is MLflow's own function, unchanged.
    """
    import requests

    budget = _budget.get()
    if budget is None:
        return _original_request(method, url, max_retries, backoff_factor, backoff_jitter, retry_codes, *args, **kwargs)
    raise_on_status = args[0] if args else kwargs.pop("raise_on_status", True)
    args = args[1:]
    respect_retry_after = kwargs.pop("respect_retry_after_header", True)
    wanted_timeout = kwargs.get("timeout")  # MLflow's: MLFLOW_HTTP_REQUEST_TIMEOUT, or the caller's
    budget.charge_start_up()
    for attempt in range(max_retries + 1):
        kwargs["timeout"] = budget.timeout(wanted_timeout)
        started = time.monotonic()
        try:
            response = _original_request(
                method,
                url,
                0,
                backoff_factor,
                backoff_jitter,
                retry_codes,
                False,
                *args,
                respect_retry_after_header=False,
                **kwargs,
            )
            error = None
        except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
            response, error = None, exc
        if error is None and response.status_code not in retry_codes:
            return response
        if error is not None and _refused(error):  # nothing listens there: asking again will not change that
            raise error
        failed = time.monotonic() - started
        asked = _retry_after_s(response) if respect_retry_after and response is not None else None
        wait = asked if asked is not None else backoff_factor * 2**attempt
        last = attempt == max_retries
        if not last and budget.allows(failed + wait):
            budget.spend(failed + wait)
            time.sleep(wait)
            continue
        budget.spend(failed)
        if not last and asked is not None:
            raise RetryBudgetExceeded(
                f"the server answered {response.status_code} and asked to retry after {asked:g} s; "
                f"boontrack waits at most {budget.seconds:g} s per job ({MAX_WAIT_VARIABLE})"
            )
        if error is not None:
            raise error
        if raise_on_status:
            raise requests.exceptions.RetryError(f"too many {response.status_code} error responses")
        return response
    raise AssertionError("unreachable")  # pragma: no cover


def _refused(exc: BaseException) -> bool:
    """Whether a failed request was refused by the host (nothing listens on the port)."""
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    causes = [*_chain(exc), *(_chain(reason) if isinstance(reason, BaseException) else ())]
    return any(isinstance(cause, ConnectionRefusedError) for cause in causes)


def _retry_after_s(response: Any) -> float | None:
    """The ``Retry-After`` header in seconds (a number, or an HTTP date), None when absent or unreadable."""
    value = (response.headers.get("Retry-After") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def resolve_tracking_uri(tracking_uri: str | None) -> str:
    """The argument, else the URI the process set (``MLFLOW_TRACKING_URI``, :func:`mlflow.set_tracking_uri`).

    Without one, InputError: MLflow would fall back to ``sqlite:///mlflow.db`` in the working directory and
    create an empty store there, which a read must never do. For the same reason a ``sqlite:`` URI must name
    an existing file.
    """
    if not tracking_uri and "mlflow" not in sys.modules and os.environ.get("MLFLOW_TRACKING_URI"):
        # MLflow not loaded, so nothing called mlflow.set_tracking_uri: the variable is the URI MLflow would use,
        # read without importing MLflow, so that a server that cannot be reached is said before that import.
        tracking_uri = os.environ["MLFLOW_TRACKING_URI"]
    if not tracking_uri:
        mlflow = import_mlflow()
        if not mlflow.is_tracking_uri_set():
            raise InputError(
                "no MLflow tracking URI: pass --tracking-uri URI (tracking_uri= in Python) or set "
                "MLFLOW_TRACKING_URI, e.g. http://127.0.0.1:5000 or sqlite:///path/to/mlflow.db"
            )
        tracking_uri = mlflow.get_tracking_uri()
    path = sqlite_path(tracking_uri)
    if path is not None and not os.path.isfile(path):
        raise InputError(f"no MLflow store at {redact(tracking_uri)}: the file {path} does not exist")
    return tracking_uri


def sqlite_path(uri: str) -> str | None:
    """The file of a ``sqlite:///path`` URI (None for other schemes and in-memory databases)."""
    if not uri.startswith("sqlite:///"):
        return None
    path = uri.removeprefix("sqlite:///").split("?", 1)[0]
    return path or None


def local_artifact_directory(uri: str | None) -> Path | None:
    """The directory an artifact URI names on this machine, as MLflow's local artifact repository reads it
    (``file:///path`` or an absolute path); None for any other store (S3, ``mlflow-artifacts:``, a relative
    path, another host), which only the client reads."""
    if not uri:
        return None
    parsed = urllib.parse.urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost") and os.name == "posix":
        return Path(urllib.parse.unquote(parsed.path))  # what urllib.request.url2pathname does on POSIX
    if not parsed.scheme and os.path.isabs(uri):
        return Path(uri)
    return None


@contextlib.contextmanager
def backend_errors(action: str, uri: str) -> Iterator[None]:
    """Turn MLflow failures into :class:`BackendError`: one line naming ``action`` and the (redacted) URI.

    MLflow is not imported for it: an MLflow exception can only come from an MLflow already loaded, and a read
    by SQL never loads it."""
    try:
        yield
    except Exception as exc:
        if _is_mlflow_error(exc):
            raise BackendError(
                _transport_message(exc, uri) or f"MLflow at {redact(uri)} failed while {action}: {describe_error(exc)}"
            ) from None
        if isinstance(exc, OSError):
            raise BackendError(f"MLflow at {redact(uri)} failed while {action}: {redact(str(exc))}") from None
        raise


def _is_mlflow_error(exc: BaseException) -> bool:
    exceptions = sys.modules.get("mlflow.exceptions")
    return exceptions is not None and isinstance(exc, exceptions.MlflowException)


def _transport_message(exc: BaseException, uri: str) -> str | None:
    """The one-line message for a server that cannot be reached, does not answer or exhausted the retry budget."""
    import requests

    for cause in _chain(exc):
        if isinstance(cause, RetryBudgetExceeded):
            return f"MLflow at {redact(uri)}: {cause}"
        if _is_read_timeout(cause):
            return f"the MLflow server at {redact(uri)} did not answer in time ({MAX_WAIT_VARIABLE} bounds retries)"
        if isinstance(cause, requests.exceptions.ConnectionError):
            # urllib3 keeps the socket's own error (ECONNREFUSED's "Connection refused") as the chain's cause,
            # the reason the early check (check_reachable) gives too
            reason = next((c.strerror for c in _chain(exc) if isinstance(c, OSError) and c.strerror), None)
            said = f"{redact(reason)}; " if reason else ""
            return f"cannot reach the MLflow server at {redact(uri)} ({said}is it running?)"
    return None


def _is_read_timeout(exc: BaseException) -> bool:
    """A request sent but not answered in time (requests reports it as a ConnectionError once retries are out)."""
    import requests
    import urllib3

    if isinstance(exc, requests.exceptions.ReadTimeout):
        return True
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(exc, requests.exceptions.ConnectionError) and isinstance(
        reason, urllib3.exceptions.ReadTimeoutError
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


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
    """An ``MlflowClient`` bound to ``uri`` (never the global tracking URI), once a tracking server at ``uri`` is
    known to accept connections (:func:`check_reachable`). Inside :func:`bounded_http`, the job's budget is charged
    for the time from here to its first request (:class:`RetryBudget`)."""
    budget = _budget.get()
    if budget is not None:
        budget.begin_start_up()
    check_reachable(uri)
    mlflow = import_mlflow()
    return mlflow.MlflowClient(tracking_uri=uri)


def check_reachable(uri: str) -> None:
    """BackendError, in one line naming the URI and the reason, when nothing accepts a connection at the host and
    port of an ``http(s)`` tracking URI: found with one socket connection before MLflow is imported and its client
    set up (seconds; 26 s on a loaded machine when the refused request said it). A refused connection fails at
    once; a host that does not answer (packets dropped), after the request timeout (``MLFLOW_HTTP_REQUEST_TIMEOUT``,
    cut to the job's :class:`RetryBudget`). Other URIs, and a server reached through a proxy (``HTTP_PROXY``,
    ``HTTPS_PROXY``, ``ALL_PROXY`` unless ``NO_PROXY`` names the host, as requests reads them: the proxy is what
    answers), are MLflow's to reach."""
    parsed = urllib.parse.urlsplit(uri)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return
    proxies = urllib.request.getproxies()
    if (parsed.scheme in proxies or "all" in proxies) and not urllib.request.proxy_bypass(parsed.hostname):
        return
    try:
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
    except ValueError:  # not a port number: MLflow says so
        return
    timeout = _connect_timeout_s()
    try:
        _connect_within(parsed.hostname, port, time.monotonic() + timeout)
    except TimeoutError:
        reason = f"no answer within {timeout:g} s"
    except OSError as exc:  # refused, no route, unknown host: ECONNREFUSED's "Connection refused" and the like
        reason = redact(exc.strerror or str(exc))
    else:
        return
    raise BackendError(f"cannot reach the MLflow server at {redact(uri)} ({reason}; is it running?)")


def _connect_within(host: str, port: int, deadline: float) -> None:
    """Connect to ``host:port`` and close, all before ``deadline`` (time.monotonic): the name's lookup, which
    ``socket.create_connection`` does not bound (a resolver that hangs held the check for its own timeouts), and
    every address it gives, tried in turn within what remains (create_connection gives each the whole timeout)."""
    found: list[Any] = []
    lookup = threading.Thread(
        target=lambda: found.append(_addresses(host, port)), daemon=True, name="boontrack-mlflow-lookup"
    )
    lookup.start()
    lookup.join(max(0.0, deadline - time.monotonic()))
    if not found:
        raise TimeoutError(f"looking up {host}")  # the thread ends with its resolver; nothing waits for it
    addresses = found[0]
    if isinstance(addresses, OSError):
        raise addresses
    error: OSError = OSError(f"no address for {host}")
    for family, kind, protocol, _, address in addresses:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError(f"connecting to {host}")
        try:
            with socket.socket(family, kind, protocol) as connection:
                connection.settimeout(remaining)
                connection.connect(address)
                return  # accepted: whether the server answers is for the requests (and their timeouts) to find
        except TimeoutError:
            raise
        except OSError as exc:
            error = exc
    raise error


def _addresses(host: str, port: int) -> list[Any] | OSError:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:  # an unknown host: its gaierror's strerror says so
        return exc


def _connect_timeout_s() -> float:
    """How long a connection may take: MLflow's request timeout (boontrack's default when unset), cut to what
    remains of the job's budget."""
    default = float(HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_TIMEOUT"])
    wanted = seconds_from_environment("MLFLOW_HTTP_REQUEST_TIMEOUT", default)
    budget = _budget.get()
    return wanted if budget is None else budget.timeout(wanted)
