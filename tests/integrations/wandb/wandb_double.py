"""A contract double of the Weights & Biases wire protocol, for tests. It is NOT W&B.

It is a small ``http.server`` on 127.0.0.1 that answers the GraphQL operations and HTTP endpoints the real
``wandb`` client sends (checked against wandb 0.31.0, whose ``wandb-core`` sidecar makes every request):
``Viewer``, ``GetDefaultEntity``, ``Runs`` (ordered by creation or heartbeat), ``Run``, ``GetSweep``,
``GetSweeps`` (the query ``Project.sweeps()`` sends), ``RunHistoryKeys``/``RunHistory*`` (scan),
``UpsertBucket``, ``RunResumeStatus``, ``RewindRun``, ``CreateRunFiles`` and file uploads, the file stream, the artifact
operations, ``CreateCustomChart`` (the mutation ``wandb.Api().create_custom_chart`` sends), the
``customChart(id: "entity/name")`` lookup that boontrack sends through the client's GraphQL path, and
``/sdk/otel/*`` telemetry. It keeps runs in memory (seeded from real offline run files), applies
a subset of the Mongo-style run filters, pages with cursors, and records every request so that tests can check
what the client sent (request counts, summary metrics, history rows, uploaded files).

It reproduces what the client needs, not the server's semantics: no permissions, no summary merge rules, no
artifact deduplication; creating a chart preset whose name the entity already has is answered with an error
(an assumption: the server's answer to a duplicate is not documented). Fault injection: :meth:`WandbDouble.inject` makes the next requests fail with a status
(and headers such as ``Retry-After``), :attr:`WandbDouble.delay_s` slows every GraphQL answer,
:attr:`WandbDouble.hold` holds every answer back until released, and
:attr:`WandbDouble.refused` answers chosen operations with a GraphQL error (a server without that feature).
Operations it does not know are answered with an error and listed in :attr:`WandbDouble.unknown`; with
``WANDB_DOUBLE_DEBUG=1`` their query and variables are printed, which is how a new wandb version's needs show.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Fake API key; the client only checks that a key has 40 or more characters.
API_KEY = "boontrack-test-key-" + "0" * 32
_OPERATION = re.compile(r"\b(query|mutation)\s+(\w+)")


@dataclass
class FakeRun:
    """A run as the server stores it."""

    name: str  # the 8-character run id
    entity: str
    project: str
    config: dict[str, Any] = field(default_factory=dict)  # plain values (wrapped on the wire)
    summary: dict[str, Any] = field(default_factory=dict)
    history: list[dict[str, Any]] = field(default_factory=list)
    state: str = "finished"
    group: str | None = None
    job_type: str | None = None
    tags: list[str] = field(default_factory=list)
    sweep: str | None = None
    display_name: str | None = None
    created_at: str = "2026-01-01T00:00:00"
    #: The run's last sign of life (the file stream moves it on); None: its creation.
    heartbeat_at: str | None = None
    storage_id: str = ""
    description: str | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)


class GraphQLError(Exception):
    """Raised by an operation handler: answered as a GraphQL error (HTTP 200 with ``errors``)."""


@dataclass
class Fault:
    status: int
    headers: dict[str, str]
    remaining: int


def _wire_config(config: dict[str, Any]) -> str:
    """Config as the server sends it: JSON text, each value wrapped as ``{"value": ..., "desc": null}``."""
    return json.dumps({k: {"value": val, "desc": None} for k, val in config.items()})


def _json_number(value: Any) -> Any:
    """A non-finite float as the text JSON spells it in strings ("NaN", "Infinity", "-Infinity"): JSON has no
    literal for it and the client's parser refuses Python's (an assumption about the server, which sends JSON)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _matches(run: FakeRun, flt: Any) -> bool:
    """A subset of the Mongo-style run filters the public API sends."""
    if not flt:
        return True
    for key, cond in flt.items():
        if key == "$and":
            if not all(_matches(run, f) for f in cond):
                return False
        elif key == "$or":
            if not any(_matches(run, f) for f in cond):
                return False
        elif not _compare(_field(run, key), cond, key == "tags"):
            return False
    return True


def _field(run: FakeRun, key: str) -> Any:
    if key.startswith("config."):
        return run.config.get(key[len("config.") :].removesuffix(".value"))
    if key.startswith("summary_metrics."):
        return run.summary.get(key[len("summary_metrics.") :])
    return {
        "sweep": run.sweep,
        "state": run.state,
        "group": run.group,
        "jobType": run.job_type,
        "tags": run.tags,
        "name": run.name,
        "display_name": run.display_name,
    }[key]


def _compare(value: Any, cond: Any, is_list: bool) -> bool:
    if not isinstance(cond, dict):
        return cond in value if is_list else value == cond
    ops = {
        "$eq": lambda v, c: v == c,
        "$ne": lambda v, c: v != c,
        "$in": lambda v, c: bool(set(v) & set(c)) if is_list else v in c,
        "$nin": lambda v, c: (not set(v) & set(c)) if is_list else v not in c,
        "$gt": lambda v, c: v is not None and v > c,
        "$gte": lambda v, c: v is not None and v >= c,
        "$lt": lambda v, c: v is not None and v < c,
        "$lte": lambda v, c: v is not None and v <= c,
        "$exists": lambda v, c: (v is not None) == c,
    }
    return all(ops[op](value, c) for op, c in cond.items())


class WandbDouble:
    """The server state plus the HTTP server; use as a context manager or call :meth:`start`/:meth:`stop`."""

    def __init__(self, entity: str = "team") -> None:
        self.entity = entity
        self.runs: dict[tuple[str, str, str], FakeRun] = {}
        self.sweeps: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.projects: set[tuple[str, str]] = set()
        self.artifacts: dict[str, dict[str, Any]] = {}
        self.uploads: dict[str, bytes] = {}
        self.log: list[tuple[str, dict[str, Any]]] = []  # (operation or path, variables)
        self.unknown: list[str] = []
        self.faults: list[Fault] = []
        self.delay_s = 0.0
        #: When set, every GraphQL answer waits until the event is set (at most two minutes); ``held`` counts
        #: the answers waiting now.
        self.hold: threading.Event | None = None
        self.held = 0
        #: ``time.monotonic()`` of each GraphQL request, in the order of :attr:`log`'s GraphQL entries.
        self.arrivals: list[float] = []
        self.refused: set[str] = set()  # operations answered with a GraphQL error, like a server without them
        self.charts: dict[str, dict[str, Any]] = {}  # custom chart presets by "entity/name"
        self.lock = threading.RLock()
        self._server: ThreadingHTTPServer | None = None
        self._counter = 0

    # ---- set-up and inspection -------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add_run(self, run: FakeRun) -> FakeRun:
        with self.lock:
            self._counter += 1
            run.storage_id = run.storage_id or base64.b64encode(f"Run:v1:{run.name}:{self._counter}".encode()).decode()
            self.runs[(run.entity, run.project, run.name)] = run
            self.projects.add((run.entity, run.project))
            if run.sweep:
                self.sweeps.setdefault((run.entity, run.project, run.sweep), {"state": "FINISHED"})
        return run

    def add_sweep(self, entity: str, project: str, sweep: str, *, config: str = "method: grid\n") -> None:
        """A sweep; ``config`` is its YAML configuration (its ``metric``, with ``name`` and ``goal``, for one)."""
        self.projects.add((entity, project))
        self.sweeps[(entity, project, sweep)] = {"state": "FINISHED", "config": config}

    def inject(self, status: int, times: int = 1, headers: dict[str, str] | None = None) -> None:
        """The next ``times`` GraphQL requests answer ``status`` (with ``headers``)."""
        self.faults.append(Fault(status, headers or {}, times))

    def operations(self) -> list[str]:
        return [name for name, _ in self.log]

    def release_held(self, bound_s: float = 60.0) -> None:
        """Let held answers go out, and wait (at most ``bound_s``) until none is left in the server."""
        if self.hold is None:
            return
        self.hold.set()
        deadline = time.monotonic() + bound_s
        while self.held and time.monotonic() < deadline:
            time.sleep(0.05)
        self.hold = None

    def reset_log(self) -> None:
        with self.lock:
            self.log.clear()
            self.arrivals.clear()

    def start(self) -> WandbDouble:
        double = self

        class Handler(_Handler):
            server_state = double

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> WandbDouble:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---- GraphQL -------------------------------------------------------------------------------------------
    def graphql(self, op: str, variables: dict[str, Any], query: str) -> dict[str, Any]:
        handler = None if op in self.refused else getattr(self, f"_op_{op}", None)
        if handler is None:
            self.unknown.append(op)
            if os.environ.get("WANDB_DOUBLE_DEBUG"):
                print("UNKNOWN", op, json.dumps(variables)[:2000], query[:3000], file=sys.stderr)
            return {"errors": [{"message": f"operation {op} is not implemented by the test double"}], "data": None}
        try:
            return {"data": handler(variables, query)}
        except GraphQLError as exc:
            return {"errors": [{"message": str(exc)}], "data": None}

    def _viewer(self) -> dict[str, Any]:
        return {
            "id": "VXNlcjox",
            "entity": self.entity,
            "username": "tester",
            "email": "tester@example.invalid",
            "admin": False,
            "flags": "{}",
            "teams": {"edges": []},
            "apiKeys": {"edges": []},
            "defaultFramework": None,
            "userInfo": None,
        }

    def _op_Viewer(self, v, q):
        return {"viewer": self._viewer()}

    def _op_GetDefaultEntity(self, v, q):
        return {"viewer": {"id": "VXNlcjox", "entity": self.entity}}

    def _op_ServerFeaturesQuery(self, v, q):
        return {"serverInfo": {"features": []}}

    def _op_ServerInfo(self, v, q):
        return {"serverInfo": {"cliVersionInfo": {}, "latestLocalVersionInfo": None, "features": []}}

    def _project_runs(self, v) -> list[FakeRun]:
        return [r for (e, p, _), r in self.runs.items() if e == v.get("entity") and p == v.get("project")]

    def _op_Runs(self, v, q):
        if (v.get("entity"), v.get("project")) not in self.projects:
            return {"project": None}
        flt = json.loads(v["filters"]) if v.get("filters") else {}
        selected = [r for r in self._project_runs(v) if _matches(r, flt)]
        order = (v.get("order") or "+created_at").lstrip("+-")
        reverse = (v.get("order") or "").startswith("-")
        keys = {
            "created_at": lambda r: (r.created_at, r.name),
            "heartbeat_at": lambda r: (r.heartbeat_at or r.created_at, r.name),
        }
        selected.sort(key=keys.get(order, lambda r: r.name), reverse=reverse)
        start = int(v["cursor"]) if v.get("cursor") else 0
        per_page = int(v.get("perPage") or 50)
        page = selected[start : start + per_page]
        end = start + len(page)
        lazy = "LightweightRunFragment" in q.split("fragment", 1)[0]
        return {
            "project": {
                "internalId": "1",
                "runCount": len(selected),
                "readOnly": False,
                "runs": {
                    "edges": [
                        {"node": self._node(r, full=not lazy), "cursor": str(start + i + 1)} for i, r in enumerate(page)
                    ],
                    "pageInfo": {"endCursor": str(end), "hasNextPage": end < len(selected)},
                },
            }
        }

    def _node(self, r: FakeRun, *, full: bool) -> dict[str, Any]:
        node = {
            "id": r.storage_id,
            "projectId": "1",
            "name": r.name,
            "displayName": r.display_name or r.name,
            "tags": r.tags,
            "sweepName": r.sweep,
            "state": r.state,
            "group": r.group,
            "jobType": r.job_type,
            "commit": None,
            "readOnly": False,
            "createdAt": r.created_at,
            "heartbeatAt": r.heartbeat_at or r.created_at,
            "description": r.description,
            "notes": None,
            "historyLineCount": len(r.history),
            "user": {"name": "tester", "username": "tester"},
        }
        if full:
            node.update(
                config=_wire_config(r.config),
                systemMetrics="{}",
                summaryMetrics=json.dumps(r.summary),
                historyKeys={"keys": {}, "lastStep": len(r.history) - 1},
            )
        return node

    def _op_Run(self, v, q):
        if (v.get("entity"), v.get("project")) not in self.projects:
            return {"project": None}
        run = self.runs.get((v.get("entity"), v.get("project"), v.get("name")))
        return {"project": {"internalId": "1", "run": None if run is None else self._node(run, full=True)}}

    def _run(self, v) -> FakeRun | None:
        return self.runs.get((v.get("entity"), v.get("project"), v.get("name") or v.get("runName")))

    def _op_RunHistoryKeys(self, v, q):
        run = self._run(v)
        keys = sorted({k for row in run.history for k in row}) if run else []
        history_keys = {
            "keys": {k: {"typeCounts": [{"type": "number", "count": 1}]} for k in keys},
            "lastStep": len(run.history) - 1 if run else -1,
        }
        return {"project": {"run": None if run is None else {"historyKeys": history_keys}}}

    def _op_RunSampledHistory(self, v, q):
        run = self._run(v)
        if run is None:
            return {"project": {"run": None}}
        answers = []
        for spec in map(json.loads, v["specs"]):
            keys = [k for k in spec.get("keys") or [] if k != "_step"]
            rows = [
                {k: _json_number(row[k]) for k in ("_step", *keys) if k in row}
                for row in run.history
                if all(k in row for k in keys)
            ]
            answers.append(rows[: spec.get("samples", len(rows))])
        return {"project": {"run": {"sampledHistory": answers}}}

    # ---- what wandb.init sends (create or resume a run, upload files, artifacts) -----------------------------
    def _bucket(self, r: FakeRun) -> dict[str, Any]:
        return {
            "id": r.storage_id,
            "name": r.name,
            "displayName": r.display_name or r.name,
            "description": r.description,
            "notes": r.description,
            "config": _wire_config(r.config),
            "summaryMetrics": json.dumps(r.summary),
            "sweepName": r.sweep,
            "tags": r.tags,
            "project": {"id": "1", "name": r.project, "entity": {"id": "1", "name": r.entity}},
            "historyLineCount": len(r.history),
            "logLineCount": 0,
            "eventsLineCount": 0,
            "historyTail": json.dumps([json.dumps(row) for row in r.history[-1:]]),
            "eventsTail": "[]",
            "wandbConfig": "{}",
            "createdAt": r.created_at,
        }

    def _op_RunResumeStatus(self, v, q):
        run = self.runs.get((v.get("entity") or self.entity, v.get("project"), v.get("name")))
        return {
            "model": {
                "id": "1",
                "name": v.get("project"),
                "entity": {"id": "1", "name": v.get("entity")},
                "bucket": None if run is None else self._bucket(run),
            }
        }

    def _op_UpsertBucket(self, v, q):
        run = next((r for r in self.runs.values() if r.storage_id and r.storage_id == v.get("id")), None)
        inserted = False
        if run is None:
            key = (v.get("entity") or self.entity, v.get("project"), v.get("name"))
            run = self.runs.get(key)
            if run is None:
                run = self.add_run(
                    FakeRun(
                        name=key[2],
                        entity=key[0],
                        project=key[1],
                        state="running",
                        created_at=time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
                    )
                )
                inserted = True
        if v.get("config"):
            wire = json.loads(v["config"])
            run.config = {k: val.get("value") if isinstance(val, dict) else val for k, val in wire.items()}
        if v.get("summaryMetrics"):
            run.summary = json.loads(v["summaryMetrics"])
        for var, attr in (
            ("groupName", "group"),
            ("jobType", "job_type"),
            ("tags", "tags"),
            ("notes", "description"),
            ("displayName", "display_name"),
            ("display_name", "display_name"),
            ("sweep", "sweep"),
            ("state", "state"),
        ):
            if v.get(var) is not None:
                setattr(run, attr, v[var])
        return {"upsertBucket": {"bucket": self._bucket(run) | self._node(run, full=True), "inserted": inserted}}

    def _op_RewindRun(self, v, q):
        # Rewinding to step s keeps the history rows before s; the run continues logging from s.
        run = self.runs[(v.get("entity") or self.entity, v["project"], v["runName"])]
        step = v["metricValue"]
        run.history = [row for row in run.history if row.get(v["metricName"], 0) < step]
        return {"rewindRun": {"rewoundRun": self._bucket(run)}}

    def _op_CreateCustomChart(self, v, q):
        chart_id = f"{v['entity']}/{v['chartName']}"
        if chart_id in self.charts:
            raise GraphQLError(f"a custom chart named {v['chartName']} already exists in {v['entity']}")
        self.charts[chart_id] = {
            "id": chart_id,
            "name": v["chartName"],
            "displayName": v["displayName"],
            "type": v["chartType"],
            "access": v["access"],
            "spec": v["spec"],
        }
        return {"createCustomChart": {"chart": {"id": chart_id}}}

    def _op_CustomChart(self, v, q):
        chart = self.charts.get(v["id"])
        return {"customChart": None if chart is None else {k: chart[k] for k in ("id", "name", "type")}}

    def _op_OrganizationCoreWeaveOrganizationID(self, v, q):
        return {"entity": {"organization": None}}

    def _op_CreateRunFiles(self, v, q):
        base = f"{self.url}/upload/{v['entity']}/{v['project']}/{v['run']}"
        return {
            "createRunFiles": {
                "runID": v["run"],
                "uploadHeaders": [],
                "files": [{"name": name, "uploadUrl": f"{base}/{name}"} for name in v["files"]],
            }
        }

    def file_stream(self, path: tuple[str, str, str], body: dict[str, Any]) -> None:
        run = self.runs[path]
        run.heartbeat_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        for name, chunk in (body.get("files") or {}).items():
            lines = [json.loads(line) for line in chunk.get("content", [])]
            if name == "wandb-history.jsonl":
                del run.history[chunk.get("offset", len(run.history)) :]
                run.history.extend(lines)
            elif name in ("wandb-summary.json", "wandb-summary.jsonl") and lines:
                run.summary = lines[-1]
            elif name == "wandb-events.jsonl":
                run.events.extend(lines)
        if body.get("complete"):
            run.state = "finished" if body.get("exitcode") == 0 else "failed"

    def _op_ArtifactType(self, v, q):
        collection = v["name"].split(":", 1)[0]
        known = next((a for a in self.artifacts.values() if a["name"] == collection), None)
        return {"project": {"artifact": None if known is None else {"artifactType": {"name": known["type"]}}}}

    def _op_CreateArtifact(self, v, q):
        spec = v["input"]
        artifact_id = base64.b64encode(f"Artifact:{len(self.artifacts) + 1}".encode()).decode()
        self.artifacts[artifact_id] = {
            "id": artifact_id,
            "name": spec.get("artifactCollectionName"),
            "type": spec.get("artifactTypeName"),
            "run": spec.get("runName"),
            "description": spec.get("description"),
            "metadata": spec.get("metadata"),
            "aliases": spec.get("aliases"),
            "files": {},
            "state": "PENDING",
        }
        return {
            "createArtifact": {
                "artifact": {"id": artifact_id, "state": "PENDING", "artifactSequence": {"latestArtifact": None}}
            }
        }

    def _op_CreateArtifactManifest(self, v, q):
        url = f"{self.url}/artifact-manifest/{v['artifactID']}"
        return {
            "createArtifactManifest": {
                "artifactManifest": {
                    "id": v["artifactID"] + "-manifest",
                    "file": {"id": "1", "uploadUrl": url, "uploadHeaders": []},
                }
            }
        }

    _op_UpdateArtifactManifest = _op_CreateArtifactManifest

    def _op_CreateArtifactFiles(self, v, q):
        edges = []
        for spec in v["input"]["artifactFiles"]:
            url = f"{self.url}/artifact-files/{spec['artifactID']}/{spec['name']}"
            self.artifacts[spec["artifactID"]]["files"][spec["name"]] = url.removeprefix(self.url)
            edges.append(
                {
                    "node": {
                        "storagePath": spec["name"],
                        "uploadUrl": url,
                        "uploadHeaders": [],
                        "uploadMultipartUrls": None,
                        "artifact": {"id": spec["artifactID"]},
                    }
                }
            )
        return {"createArtifactFiles": {"files": {"edges": edges}}}

    def _op_CommitArtifact(self, v, q):
        self.artifacts[v["artifactID"]]["state"] = "COMMITTED"
        return {"commitArtifact": {"artifact": {"id": v["artifactID"], "digest": "0" * 32}}}

    def artifact_files(self, artifact_id: str) -> dict[str, bytes]:
        """The bytes the client uploaded for each file of an artifact."""
        return {name: self.uploads.get(path, b"") for name, path in self.artifacts[artifact_id]["files"].items()}

    def _op_GetSweep(self, v, q):
        key = (v.get("entity"), v.get("project"), v.get("name"))
        if key[:2] not in self.projects:
            return {"project": None}
        sweep = self.sweeps.get(key)
        if sweep is None:
            return {"project": {"sweep": None}}
        runs = [r for r in self._project_runs(v) if r.sweep == key[2]]
        return {
            "project": {
                "sweep": {
                    "__typename": "Sweep",
                    "id": "U3dlZXA6MQ==",
                    "name": key[2],
                    "displayName": key[2],
                    "method": "grid",
                    "state": sweep["state"],
                    "description": None,
                    "bestLoss": None,
                    "config": sweep.get("config", "method: grid\n"),
                    "createdAt": "2026-01-01T00:00:00",
                    "updatedAt": None,
                    "runCount": len(runs),
                    "runCountExpected": None,
                }
            }
        }

    def _op_GetSweeps(self, v, q):
        # The client strips $filters where the server does not announce sweep filtering (this double does not).
        if (v.get("entity"), v.get("project")) not in self.projects:
            return {"project": None}
        names = sorted(name for (e, p, name) in self.sweeps if (e, p) == (v.get("entity"), v.get("project")))
        start = int(v["cursor"]) if v.get("cursor") else 0
        page = names[start : start + int(v.get("perPage") or 50)]
        end = start + len(page)
        nodes = []
        for name in page:
            runs = [r for r in self._project_runs(v) if r.sweep == name]
            nodes.append(
                {
                    "__typename": "Sweep",
                    "id": base64.b64encode(f"Sweep:{name}".encode()).decode(),
                    "name": name,
                    "displayName": name,
                    "method": "grid",
                    "state": self.sweeps[(v["entity"], v["project"], name)]["state"],
                    "description": None,
                    "bestLoss": None,
                    "config": self.sweeps[(v["entity"], v["project"], name)].get("config", "method: grid\n"),
                    "createdAt": "2026-01-01T00:00:00",
                    "updatedAt": None,
                    "runCount": len(runs),
                    "runCountExpected": None,
                }
            )
        return {
            "project": {
                "totalSweeps": len(names),
                "sweeps": {
                    "pageInfo": {"__typename": "PageInfo", "endCursor": str(end), "hasNextPage": end < len(names)},
                    "edges": [{"node": node} for node in nodes],
                },
            }
        }


class _Handler(BaseHTTPRequestHandler):
    server_state: WandbDouble
    protocol_version = "HTTP/1.1"
    # Without this, keep-alive plus Nagle's algorithm and delayed ACKs cost ~46 ms a request.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def _body(self) -> bytes:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw

    def _send(self, status: int, payload: Any = None, headers: dict[str, str] | None = None) -> None:
        body = b"" if payload is None else (payload if isinstance(payload, bytes) else json.dumps(payload).encode())
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def _wait_for_release(self, hold: threading.Event) -> None:
        state = self.server_state
        with state.lock:
            state.held += 1
        hold.wait(120)
        with state.lock:
            state.held -= 1

    def _fault(self) -> Fault | None:
        state = self.server_state
        with state.lock:
            if state.faults:
                fault = state.faults[0]
                fault.remaining -= 1
                if fault.remaining <= 0:
                    state.faults.pop(0)
                return fault
        return None

    def do_POST(self) -> None:
        state = self.server_state
        body = self._body()
        if self.path.startswith("/sdk/otel/"):
            return self._send(200, b"")
        if self.path == "/graphql":
            request = json.loads(body)
            query = request.get("query", "")
            match = _OPERATION.search(query)
            op = request.get("operationName") or (match.group(2) if match else "anonymous")
            variables = request.get("variables") or {}
            with state.lock:
                state.log.append((op, variables))
                state.arrivals.append(time.monotonic())
            fault = self._fault()  # taken on arrival: an answer slowed or held never takes a later test's fault
            if state.delay_s:
                time.sleep(state.delay_s)
            if state.hold is not None:
                self._wait_for_release(state.hold)
            if fault is not None:
                return self._send(fault.status, {"errors": [{"message": f"injected {fault.status}"}]}, fault.headers)
            with state.lock:
                answer = state.graphql(op, variables, query)
            return self._send(200, answer)
        match = re.fullmatch(r"/files/([^/]+)/([^/]+)/([^/]+)/file_stream", self.path)
        if match:
            with state.lock:
                state.log.append(("file_stream", {}))
                state.file_stream(match.groups(), json.loads(body))
            return self._send(200, {"exitcode": None, "limits": {}})
        with state.lock:
            state.log.append((f"POST {self.path}", {}))
            state.unknown.append(f"POST {self.path}")
        self._send(404, {"error": "not implemented by the test double"})

    def do_PUT(self) -> None:
        state = self.server_state
        body = self._body()
        with state.lock:
            state.log.append((f"PUT {self.path.split('?')[0]}", {}))
            state.uploads[self.path.split("?")[0]] = body
        self._send(200, b"")

    def do_GET(self) -> None:
        state = self.server_state
        path = self.path.split("?")[0]
        with state.lock:
            state.log.append((f"GET {path}", {}))
            data = state.uploads.get(path)
        if data is None:
            return self._send(404, {"error": "no such file"})
        self._send(200, data)
