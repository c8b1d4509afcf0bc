"""Failures: a dead server, a server answering 500, a deleted parent, credentials in URIs, concurrent jobs."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from boontrack.backends import MetricRequest
from boontrack.cli import main
from boontrack.exceptions import BackendError, InputError, WriteBackWarning
from boontrack_mlflow import MlflowSource, summarize_sweep
from boontrack_mlflow._client import HTTP_DEFAULTS, bounded_http, redact

from mlflow_helpers import mixed_sweep, summary_runs

pytestmark = pytest.mark.mlflow

FAST = {"n_resamples": 200, "n": (1, 3)}


@pytest.fixture
def dead_uri() -> str:
    """A tracking URI with credentials, where nothing listens: the port is held by a bound socket that never
    listens (connections are refused), for the whole test."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://alice:s3cret-pw@127.0.0.1:{held.getsockname()[1]}"


@pytest.fixture
def default_http_settings(monkeypatch):
    """No user-set MLflow HTTP variables, so boontrack's bounded defaults apply."""
    for name in HTTP_DEFAULTS:
        if name.startswith("MLFLOW_HTTP_"):
            monkeypatch.delenv(name, raising=False)


def test_dead_server_fails_at_once_without_credentials(dead_uri, default_http_settings, monkeypatch):
    """A refused connection is not retried: nothing listens there, and waiting will not change that (it was
    tried three times, with back-off between)."""
    from boontrack_mlflow import _client

    waits = []
    monkeypatch.setattr(_client.time, "sleep", waits.append)
    with pytest.raises(BackendError) as info:
        MlflowSource("sweeps", tracking_uri=dead_uri).read(MetricRequest("val_acc"))
    host = dead_uri.rsplit("@", 1)[1]
    assert (
        str(info.value) == f"cannot reach the MLflow server at http://***@{host} (Connection refused; is it running?)"
    )
    assert waits == []


def test_a_server_gone_after_the_early_check_is_named_with_the_reason(dead_uri, default_http_settings, monkeypatch):
    """A server that accepted the early check and went away before the request (restarted, say) is refused at the
    request: the line names the reason as the early check does, where it said only "is it running?"."""
    from boontrack_mlflow import _client

    monkeypatch.setattr(_client, "check_reachable", lambda uri: None)  # it was there when looked at
    monkeypatch.setattr(_client.time, "sleep", lambda seconds: None)
    with pytest.raises(BackendError) as info:
        MlflowSource("sweeps", tracking_uri=dead_uri).read(MetricRequest("val_acc"))
    host = dead_uri.rsplit("@", 1)[1]
    assert str(info.value) == (
        f"cannot reach the MLflow server at http://***@{host} (Connection refused; is it running?)"
    )


def test_a_name_lookup_that_never_answers_is_bounded_by_the_request_timeout(monkeypatch):
    """The early check bounds the name's lookup too, which socket.create_connection does not: a resolver that
    never answers is reported as no answer within the request timeout. The fake resolver gives up after 60 s (a
    hang guard: the check without the bound fails then, with the resolver's error, instead of hanging)."""
    from boontrack_mlflow import _client

    released = threading.Event()
    looked_up = []

    def hanging_lookup(host, port, *args, **kwargs):
        looked_up.append(host)
        released.wait(60)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(_client.socket, "getaddrinfo", hanging_lookup)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "1")
    try:
        with pytest.raises(BackendError) as info:
            _client.check_reachable("http://tracking.example:5000")
    finally:
        released.set()
    assert looked_up == ["tracking.example"]
    assert str(info.value) == (
        "cannot reach the MLflow server at http://tracking.example:5000 (no answer within 1 s; is it running?)"
    )


def test_a_hung_search_holds_a_job_for_one_search_timeout_only():
    """The search waits SEARCH_TIMEOUT_S for an answer; a second attempt (after at least 1 s of back-off) would
    not fit in the job's default retry budget, so it is not made: a hung search fails the job after 60 s."""
    from boontrack_mlflow import _client, _read

    assert _read.SEARCH_TIMEOUT_S == 60
    assert (
        _read.SEARCH_TIMEOUT_S + float(HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR"]) > _client.DEFAULT_MAX_WAIT_S
    )


@contextlib.contextmanager
def _listener(keep: bool) -> Iterator[tuple[str, Callable[[], int]]]:
    """A listener on 127.0.0.1 that accepts every connection, in a thread: (URI, how many it accepted so far).
    ``keep=False`` closes each connection at once (a server that drops them); ``keep=True`` holds it unanswered
    until the end (a server stuck before it reads a request), which then ends any request still waiting on one."""
    accepted: list[socket.socket] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.1)
        stop = threading.Event()

        def serve() -> None:
            while not stop.is_set():
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    continue
                accepted.append(connection)
                if not keep:
                    connection.close()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}", lambda: len(accepted)
        finally:
            stop.set()
            thread.join(10)
            for connection in accepted:
                connection.close()


@pytest.fixture
def dropping_uri():
    """A server that accepts each connection and closes it at once, counting them: (URI, the count so far)."""
    with _listener(keep=False) as served:
        yield served


def test_a_server_that_drops_connections_is_tried_a_bounded_number_of_times(dropping_uri, default_http_settings):
    uri, attempts = dropping_uri
    with pytest.raises(BackendError, match="cannot reach the MLflow server"):
        MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc"))
    # MLflow's defaults retry 7 times with back-off (about four minutes); boontrack's retries once, twice at most,
    # after the one connection that checked that something listens there
    assert 2 <= attempts() <= int(HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]) + 2


@pytest.fixture
def silent_uri():
    """A listener that accepts every connection and never answers: (URI, how many connections it accepted)."""
    with _listener(keep=True) as served:
        yield served


@pytest.fixture
def unanswered_uri():
    """A port on 127.0.0.1 whose connections are never answered, as behind a firewall that drops packets: a
    listener with a backlog of 0 that never accepts, its queue filled, so that the kernel drops the next SYNs."""
    with contextlib.ExitStack() as stack:
        listener = stack.enter_context(socket.socket())
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        address = listener.getsockname()
        for _ in range(64):  # Linux queues backlog + 1 connections; the loop stops at the first one dropped
            filler = stack.enter_context(socket.socket())
            filler.settimeout(0.5)
            try:
                filler.connect(address)
            except TimeoutError:
                break
        else:
            pytest.skip("this system does not drop connections to a full listen queue")
        yield f"http://127.0.0.1:{address[1]}"


#: Runs boontrack's CLI with the arguments after ``-c``, then prints which of MLflow's modules were imported.
_CLI_REPORTING_MLFLOW = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(m for m in sys.modules if m.partition(".")[0] == "mlflow"))))
from boontrack.cli import main
main(sys.argv[1:])
"""

#: A bound on each fresh process below, so that a job which hangs fails its test instead of holding the run; far
#: above what the job takes (seconds; half a minute on a heavily loaded machine), not a timing of it.
_HANG_GUARD_S = 300


def _summarize_in_a_fresh_process(uri: str | None, **environment: str) -> tuple[int, str, list[str]]:
    """``boontrack summarize ... --write-back`` against ``uri`` (None: the URI is MLFLOW_TRACKING_URI of
    ``environment``) in a new Python process, with MLflow's HTTP settings and any proxy left out of its
    environment: (exit status, stderr, MLflow's modules it imported)."""
    left_out = ("MLFLOW_HTTP_", "MLFLOW_TRACKING_URI", "BOONTRACK_MLFLOW_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(left_out) and not k.lower().endswith("_proxy")}
    arguments = ["summarize", "mlflow:sweeps", "--val", "val_acc", "--write-back"]
    if uri is not None:
        arguments += ["--tracking-uri", uri]
    done = subprocess.run(
        [sys.executable, "-c", _CLI_REPORTING_MLFLOW, *arguments],
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=_HANG_GUARD_S,
    )
    return done.returncode, done.stderr, json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("given_by", ["--tracking-uri", "MLFLOW_TRACKING_URI"])
def test_a_refused_server_is_said_before_mlflow_is_imported(dead_uri, given_by):
    """Nothing listens at the port: one line naming the URI and the reason, from one socket connection made before
    MLflow is imported and its client set up (seconds of start-up; 26 s on a loaded machine when the refused
    request said it). The URI from the environment, as a scheduled job often has it, is read without MLflow too."""
    if given_by == "--tracking-uri":
        status, stderr, imported = _summarize_in_a_fresh_process(dead_uri)
    else:
        status, stderr, imported = _summarize_in_a_fresh_process(None, MLFLOW_TRACKING_URI=dead_uri)
    assert imported == []
    host = dead_uri.rsplit("@", 1)[1]
    assert (status, stderr) == (
        1,
        f"Error: cannot reach the MLflow server at http://***@{host} (Connection refused; is it running?)\n",
    )


@pytest.mark.parametrize("proxy", ["HTTP_PROXY", "ALL_PROXY"])
def test_a_server_behind_a_proxy_is_left_to_mlflow_to_reach(dead_uri, proxy, monkeypatch):
    """Through a proxy, the proxy is what answers: the check does not connect to the server's port itself, unless
    NO_PROXY names the host (then MLflow's requests go there directly as well)."""
    from boontrack_mlflow._client import check_reachable

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv(proxy, "http://proxy.invalid:3128")
    check_reachable(dead_uri)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(BackendError, match="Connection refused"):
        check_reachable(dead_uri)


def test_a_host_that_never_answers_the_connection_is_said_before_mlflow_is_imported(unanswered_uri):
    """Packets dropped: the check gives up after the request timeout (the user's 1 s here), in one line naming the
    URI and the reason, MLflow never imported; before, MLflow was imported and its requests timed out, retried."""
    status, stderr, imported = _summarize_in_a_fresh_process(unanswered_uri, MLFLOW_HTTP_REQUEST_TIMEOUT="1")
    assert imported == []
    assert (status, stderr) == (
        1,
        f"Error: cannot reach the MLflow server at {unanswered_uri} (no answer within 1 s; is it running?)\n",
    )


def test_a_server_that_accepts_and_never_answers_is_given_up_within_the_jobs_budget(silent_uri):
    """Each attempt waits at most what remains of the job's budget, whatever its own timeout: with the user's
    request timeout of an hour and a budget of 2 s, the job ends with one line after one attempt (the check's
    connection and the request's). Before, the attempt waited its hour (the hang guard ends the test)."""
    uri, accepted = silent_uri
    status, stderr, imported = _summarize_in_a_fresh_process(
        uri, MLFLOW_HTTP_REQUEST_TIMEOUT="3600", BOONTRACK_MLFLOW_MAX_WAIT="2"
    )
    assert (status, stderr) == (
        1,
        f"Error: the MLflow server at {uri} did not answer in time (BOONTRACK_MLFLOW_MAX_WAIT bounds retries)\n",
    )
    assert "mlflow" in imported  # the check let it through: something listens there
    assert accepted() == 2  # not retried: the start-up, one attempt and the back-off leave nothing of 2 s


class _OffsetClock:
    """``time`` for :mod:`boontrack_mlflow._client` alone: real time (none when ``frozen``) plus ``offset``
    seconds, so that a test can make a step seem to take an hour without waiting for it."""

    def __init__(self, *, frozen: bool = False) -> None:
        import time

        self._time = time
        self._frozen = frozen
        self.offset = 0.0

    def monotonic(self) -> float:
        return self.offset + (0.0 if self._frozen else self._time.monotonic())

    def __getattr__(self, name: str):
        return getattr(self._time, name)


@pytest.fixture
def offset_clock(request, monkeypatch) -> _OffsetClock:
    """The clock of :mod:`boontrack_mlflow._client` for the test; ``frozen`` when the test is parametrized so."""
    from boontrack_mlflow import _client

    clock = _OffsetClock(frozen=getattr(request, "param", "") == "frozen")
    monkeypatch.setattr(_client, "time", clock)
    return clock


@pytest.mark.parametrize("misbehaving", ["hang"], indirect=True)
def test_the_start_up_counts_against_the_jobs_budget(misbehaving, offset_clock, monkeypatch, default_http_settings):
    """Importing MLflow and setting up its client are charged to the job's budget: after a start-up that seems to
    take an hour, against a budget of an hour and 5 s, a run search that is never answered is given up after one
    attempt of what remains (about 5 s), although its own timeout is an hour. Before, the budget began at the
    first request, and the search waited its hour (the hang guard ends the test)."""
    from boontrack_mlflow import _client

    uri, seen = misbehaving
    import_mlflow = _client.import_mlflow

    def slow_import() -> object:
        offset_clock.offset += 3600
        return import_mlflow()

    monkeypatch.setattr(_client, "import_mlflow", slow_import)
    monkeypatch.setattr("boontrack_mlflow._read.SEARCH_TIMEOUT_S", 3600)
    monkeypatch.setenv("BOONTRACK_MLFLOW_MAX_WAIT", "3605")
    failures: list[BaseException] = []

    def read() -> None:
        try:
            MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc"))
        except BaseException as exc:
            failures.append(exc)

    reading = threading.Thread(target=read, daemon=True)
    reading.start()
    reading.join(_HANG_GUARD_S)
    assert not reading.is_alive(), "the search was not cut to the budget"
    assert [type(f) for f in failures] == [BackendError]
    assert "did not answer in time" in str(failures[0])
    assert seen[SEARCH] == 1


@pytest.mark.parametrize("offset_clock", ["frozen"], indirect=True)
def test_the_time_before_connecting_is_not_charged(offset_clock):
    """A budget made an hour before its job connects (a source made in a notebook, a job queued behind others) is
    whole when the job connects: only the time from connecting to the first request counts, once."""
    from boontrack_mlflow._client import MIN_ATTEMPT_TIMEOUT_S, RetryBudget

    budget = RetryBudget(60)
    offset_clock.offset += 3600
    assert budget.timeout(None) == 60
    budget.begin_start_up()
    offset_clock.offset += 5
    assert budget.timeout(None) == 55  # a start-up under way cuts the attempt
    budget.charge_start_up()
    assert budget.spent == 5
    offset_clock.offset += 3600
    budget.begin_start_up()  # a second client of the same job: its start-up was charged already
    budget.charge_start_up()
    assert budget.spent == 5 and budget.timeout(10) == 10
    budget.spend(100)
    # all spent: an attempt still gets the shortest timeout, in which a server that is up answers
    assert budget.timeout(10) == MIN_ATTEMPT_TIMEOUT_S


def test_dead_server_cli_exit_code_1_one_line(dead_uri, default_http_settings):
    result = CliRunner().invoke(main, ["summarize", "mlflow:sweeps", "--tracking-uri", dead_uri, "--val", "val_acc"])
    assert result.exit_code == 1
    assert (
        "s3cret-pw" not in result.output and "cannot reach the MLflow server at http://***@127.0.0.1" in result.output
    )
    assert "urllib3" not in result.output and "Max retries" not in result.output


@pytest.fixture
def no_tracking_uri(monkeypatch):
    """A process where neither MLFLOW_TRACKING_URI nor mlflow.set_tracking_uri chose a store."""
    import mlflow.tracking._tracking_service.utils as tracking_utils

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.setattr(tracking_utils, "_tracking_uri", None)


def test_without_a_tracking_uri_a_read_refuses_and_creates_no_store(tmp_path, no_tracking_uri):
    result = CliRunner().invoke(main, ["summarize", "mlflow:sweeps", "--val", "val_acc"])
    assert result.exit_code == 2, result.output
    assert "--tracking-uri" in result.output and "MLFLOW_TRACKING_URI" in result.output
    assert list(tmp_path.iterdir()) == []  # MLflow's default would have created ./mlflow.db
    with pytest.raises(InputError, match="tracking_uri="):
        summarize_sweep("0" * 32, val="val_acc")


def test_a_sqlite_uri_to_a_missing_file_is_refused_and_not_created(tmp_path):
    missing = tmp_path / "typo" / "mlflow.db"
    result = CliRunner().invoke(
        main, ["summarize", "mlflow:sweeps", "--tracking-uri", f"sqlite:///{missing}", "--val", "val_acc"]
    )
    assert result.exit_code == 2, result.output
    assert "does not exist" in result.output and not missing.exists() and not missing.parent.exists()


class _Misbehaving(BaseHTTPRequestHandler):
    """A double of a tracking server, not MLflow: knows one experiment; every other request gets ``answer``:
    (status, headers) or "hang" (accepted and never answered, until the test ends). Counts the requests per path."""

    answer: tuple[int, dict] | str = (429, {"Retry-After": "3600"})
    search_answer: dict | None = None  # when set, the run search answers this
    seen: dict

    def _handle(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.split("?", 1)[0]
        self.seen[path] = self.seen.get(path, 0) + 1
        if path.endswith("/experiments/get-by-name"):
            experiment = {"experiment_id": "1", "name": "sweeps", "lifecycle_stage": "active"}
            self._send(200, {}, json.dumps({"experiment": experiment}).encode())
        elif path == SEARCH and self.search_answer is not None:
            self._send(200, {}, json.dumps(self.search_answer).encode())
        elif self.answer == "hang":
            self.release.wait()
            self.close_connection = True
        else:
            status, headers = self.answer
            self._send(status, headers, b'{"error_code": "TEMPORARILY_UNAVAILABLE", "message": "slow down"}')

    def _send(self, status: int, headers: dict, body: bytes) -> None:
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _handle

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def misbehaving(request):
    answer, search_answer = request.param if isinstance(request.param, list) else (request.param, None)
    handler = type(
        "Handler",
        (_Misbehaving,),
        {"answer": answer, "search_answer": search_answer, "seen": {}, "release": threading.Event()},
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.seen
    handler.release.set()
    server.shutdown()
    server.server_close()


SEARCH = "/api/2.0/mlflow/runs/search"


@pytest.mark.parametrize("misbehaving", [(429, {"Retry-After": "3600"})], indirect=True)
def test_a_long_retry_after_is_not_waited_for_and_is_named(misbehaving, default_http_settings):
    uri, seen = misbehaving
    with pytest.raises(BackendError) as info:
        MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc"))
    assert seen[SEARCH] == 1  # MLflow alone would have waited 3600 s, twice
    assert "asked to retry after 3600 s" in str(info.value) and "BOONTRACK_MLFLOW_MAX_WAIT" in str(info.value)


@pytest.mark.parametrize("misbehaving", [(503, {"Retry-After": "1"})], indirect=True)
def test_retries_stop_when_the_jobs_budget_is_spent(misbehaving, monkeypatch):
    uri, seen = misbehaving
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "5")
    monkeypatch.setenv("BOONTRACK_MLFLOW_MAX_WAIT", "1.5")
    with pytest.raises(BackendError, match="asked to retry after 1 s; boontrack waits at most 1.5 s"):
        MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc"))
    assert seen[SEARCH] == 2  # one wait of 1 s fits in 1.5 s, a second does not


@pytest.mark.parametrize("misbehaving", ["hang"], indirect=True)
def test_a_search_that_hangs_is_not_retried_past_the_budget(misbehaving, monkeypatch):
    uri, seen = misbehaving
    monkeypatch.setattr("boontrack_mlflow._read.SEARCH_TIMEOUT_S", 0.5)
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "2")
    monkeypatch.setenv("BOONTRACK_MLFLOW_MAX_WAIT", "1")
    with pytest.raises(BackendError, match="did not answer in time"):
        MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc"))
    assert seen[SEARCH] == 1  # 0.5 s lost and 1 s of back-off would exceed the budget


def test_an_invalid_budget_is_an_input_error(monkeypatch, sqlite_uri):
    monkeypatch.setenv("BOONTRACK_MLFLOW_MAX_WAIT", "soon")
    with pytest.raises(InputError, match="BOONTRACK_MLFLOW_MAX_WAIT"):
        MlflowSource("sweeps", tracking_uri=sqlite_uri)


def test_user_http_settings_win_and_defaults_are_scoped(monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "77")
    monkeypatch.delenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", raising=False)
    with bounded_http():
        assert os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] == "77"
        assert os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] == HTTP_DEFAULTS["MLFLOW_HTTP_REQUEST_MAX_RETRIES"]
    assert "MLFLOW_HTTP_REQUEST_MAX_RETRIES" not in os.environ  # the user's process is left as it was


def test_redact_removes_userinfo_and_secret_variables(monkeypatch):
    monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", "tok-abc-123")
    text = "GET https://bob:pa55@mlflow.example.com/api failed; header Bearer tok-abc-123"
    cleaned = redact(text)
    assert "pa55" not in cleaned and "bob" not in cleaned and "tok-abc-123" not in cleaned
    assert "https://***@mlflow.example.com/api" in cleaned


class _FailingProxy(BaseHTTPRequestHandler):
    """Forwards to the real server, except that one route answers 500 (as a broken server or proxy would)."""

    upstream = ""
    failing_route = "/api/2.0/mlflow/runs/log-batch"

    def _handle(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith(self.failing_route):
            payload = b'{"error_code": "INTERNAL_ERROR", "message": "injected failure"}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
        request = urllib.request.Request(
            self.upstream + self.path, data=body or None, headers=headers, method=self.command
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, data, kind = response.status, response.read(), response.headers.get("Content-Type", "")
        except urllib.error.HTTPError as error:
            status, data, kind = error.code, error.read(), error.headers.get("Content-Type", "")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def failing_proxy(mlflow_server, request):
    route = getattr(request, "param", _FailingProxy.failing_route)
    handler = type("Handler", (_FailingProxy,), {"upstream": mlflow_server, "failing_route": route})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_write_failure_warns_returns_and_leaves_no_partial_summary(mlflow_server, failing_proxy, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # the user's setting wins; keeps the test fast
    sweep = mixed_sweep(mlflow_server, finished=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = summarize_sweep(sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=failing_proxy, **FAST)
    assert result.status == "write-failed" and not result.ok
    assert "writing the summary" in result.error and result.summary is not None
    assert any(issubclass(w.category, WriteBackWarning) for w in caught)
    assert summary_runs(sweep.client, sweep.experiment_id) == []  # the partial run was discarded

    with pytest.raises(BackendError, match="injected failure|500"):
        summarize_sweep(
            sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=failing_proxy, raise_on_error=True, **FAST
        )
    # the real server still works, and the next run writes the summary
    assert (
        summarize_sweep(sweep.parent_id, val="val_acc", test="test_acc", tracking_uri=mlflow_server, **FAST).status
        == "updated"
    )


@pytest.mark.parametrize("failing_proxy", ["/api/2.0/mlflow/runs/search"], indirect=True)
def test_read_failure_warns_and_fails_the_result_or_raises_when_asked(mlflow_server, failing_proxy, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    sweep = mixed_sweep(mlflow_server, finished=3)
    # the sweep is over: an unreadable server must not crash the script that called the callback
    with pytest.warns(WriteBackWarning, match="reading runs of experiment"):
        result = summarize_sweep(sweep.parent_id, val="val_acc", tracking_uri=failing_proxy, **FAST)
    assert (result.status, result.summary, result.ok) == ("failed", None, False)
    assert "500" in result.error or "INTERNAL_ERROR" in result.error
    with pytest.raises(BackendError, match="reading runs of experiment"):
        summarize_sweep(sweep.parent_id, val="val_acc", tracking_uri=failing_proxy, raise_on_error=True, **FAST)
    assert summary_runs(sweep.client, sweep.experiment_id) == []


def test_deleted_parent_is_an_input_error_exit_2(sqlite_uri):
    sweep = mixed_sweep(sqlite_uri, finished=3)
    sweep.client.delete_run(sweep.parent_id)
    result = CliRunner().invoke(
        main,
        [
            "summarize",
            f"mlflow:{sweep.experiment_name}",
            "--parent",
            sweep.parent_id,
            "--tracking-uri",
            sqlite_uri,
            "--val",
            "val_acc",
            "--write-back",
        ],
    )
    assert result.exit_code == 2
    assert "is deleted" in result.output


@pytest.mark.slow
def test_concurrent_reaggregate_processes(sqlite_uri, tmp_path):
    sweep = mixed_sweep(sqlite_uri, finished=6)
    config = tmp_path / "boontrack.toml"
    config.write_text(
        f'[[jobs]]\nname = "sweep"\nsource = "mlflow:{sweep.experiment_name}"\nparent = "{sweep.parent_id}"\n'
        f'tracking_uri = "{sqlite_uri}"\nval = "val_acc"\ntest = "test_acc"\nn = [1, 3]\nn_resamples = 200\nwrite_back = true\n'
    )
    command = [sys.executable, "-c", "from boontrack.cli import main; main()", "reaggregate", "--config", str(config)]
    env = {**os.environ, "MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT": "true"}
    processes = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], outputs
    lines = sorted(out.strip().splitlines()[-1] for out, _ in outputs)
    assert lines[0].startswith("sweep: unchanged") and lines[1].startswith("sweep: updated"), lines
    assert len(summary_runs(sweep.client, sweep.experiment_id)) == 1


ONE_RUN_WITH_HISTORY = {
    "runs": [
        {
            "info": {"run_id": "r1", "status": "FINISHED", "start_time": 1, "end_time": 2},
            "data": {"metrics": [{"key": "val_acc", "value": 0.5, "timestamp": 1, "step": 3}]},
        }
    ]
}


@pytest.mark.parametrize("misbehaving", [[(429, {"Retry-After": "3600"}), ONE_RUN_WITH_HISTORY]], indirect=True)
def test_history_requests_in_threads_share_the_jobs_budget(misbehaving, default_http_settings):
    uri, seen = misbehaving
    with pytest.raises(BackendError, match="asked to retry after 3600 s"):
        MlflowSource("sweeps", tracking_uri=uri).read(MetricRequest("val_acc", pick="best_val_step"))
    assert seen["/ajax-api/2.0/mlflow/metrics/get-history-bulk"] == 1
