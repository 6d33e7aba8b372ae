"""pytest plugin of weft's conformance harness (scripts/conformance/run.ts loads it with -p).

It runs inside a checkout of the Weave repository's tests/ and changes three things, nothing else:
- keeps only the tests that talk to a trace server (those asking for the suite's `trace_server`
  fixture, directly or through `client`), less the excluded ones (exclusions.json);
- with WEFT_CONFORMANCE_POOL set, the suite's in-process server factory hands out a
  RemoteHTTPTraceServer on a fresh weft (leased from the runner's pool) instead of the SQLite
  server; without it the suite runs unchanged against its own SQLite server (the control);
- writes one JSON line per test (outcome, and the failure's last line) to WEFT_CONFORMANCE_RESULTS.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

POOL_URL = os.environ.get("WEFT_CONFORMANCE_POOL")
RESULTS_PATH = os.environ.get("WEFT_CONFORMANCE_RESULTS")
RUN_EXCLUDED = os.environ.get("WEFT_CONFORMANCE_RUN_EXCLUDED") == "1"
EXCLUSIONS_PATH = Path(__file__).with_name("exclusions.json")


def _exclusions() -> dict[str, str]:
    """Test id (or a file's path, for every test in it) -> why it cannot apply to an HTTP server."""
    entries = json.loads(EXCLUSIONS_PATH.read_text())["excluded"]
    return {e["test"]: e["reason"] for e in entries}


def _excluded_reason(nodeid: str, exclusions: dict[str, str]) -> str | None:
    base = nodeid.split("[", 1)[0]
    for key in (nodeid, base, nodeid.split("::", 1)[0]):
        if key in exclusions:
            return exclusions[key]
    return None


def _write_result(record: dict[str, Any]) -> None:
    if RESULTS_PATH:
        with open(RESULTS_PATH, "a") as f:
            f.write(json.dumps(record) + "\n")


class WeftLease:
    """Stands where the suite builds its SQLite server: a fresh weft for one test."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        test = os.environ.get("PYTEST_CURRENT_TEST", "").split(" ")[0]
        r = httpx.post(f"{POOL_URL}/lease", json={"test": test}, timeout=300)
        r.raise_for_status()
        lease = r.json()
        self.id: str = lease["id"]
        self.url: str = lease["url"]
        self.key: str = lease["key"]
        # The client's ensure_project_exists asks W&B's GraphQL API, which weft serves too:
        # pointed there and signed in as weave.init does.
        from weave.wandb_interface import context as wandb_context

        self._saved_env = {k: os.environ.get(k) for k in ("WANDB_BASE_URL", "WANDB_API_KEY")}
        os.environ["WANDB_BASE_URL"] = self.url
        os.environ["WANDB_API_KEY"] = self.key
        self._context_token = wandb_context.set_wandb_api_context(
            "test_user", self.key, None, None
        )
        self._released = False

    def drop_tables(self) -> None:
        """The suite empties its server before and after a test; a fresh weft is empty."""

    def setup_tables(self) -> None:
        """Nothing to set up: weft migrated its store when it started."""

    def close(self) -> None:
        if self._released:
            return
        self._released = True
        from weave.wandb_interface import context as wandb_context

        if self._context_token is not None:
            wandb_context.reset_wandb_api_context(self._context_token)
        for k, v in self._saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        httpx.post(f"{POOL_URL}/release", json={"id": self.id}, timeout=60)


def _reference_error_classes() -> dict[int, tuple[type, ...]]:
    """The reference's exception classes by the HTTP status its service answers for them
    (weave/trace_server/errors.py, ErrorRegistry)."""
    from weave.shared.refs_internal import InvalidInternalRef
    from weave.trace_server import errors

    # ValueError and its subclasses (InvalidInternalRef) are 400 through the registry's ValueError.
    # InvalidFieldError is 403 in 0.52.29's registry and 422 in the newest reference's (weft's).
    return {
        400: (errors.InvalidRequest, errors.InvalidExternalRef, InvalidInternalRef),
        403: (errors.InvalidFieldError,),
        404: (errors.NotFoundError,),
        413: (errors.InsertTooLarge, errors.RequestTooLarge),
        422: (errors.InvalidFieldError,),
    }


def _raise_as_reference(response: httpx.Response) -> httpx.Response:
    """An answer of 400, 403, 404, 413 or 422 raised as the in-process server raises the errors its
    service answers with that status, so the suite's `pytest.raises(InvalidRequest)` and the
    like judge weft's status code. The exception is still an httpx.HTTPStatusError (what the
    SDK's own code catches); its text is weft's `reason`."""
    classes = _reference_error_classes().get(response.status_code)
    if classes is None:
        return response
    response.read()
    try:
        body = response.json()
    except ValueError:
        body = {}
    reason = str(body.get("reason") or body.get("detail") or response.text) if isinstance(body, dict) else response.text
    from weave.trace_server import errors

    if response.status_code == 404 and isinstance(body, dict) and "deleted_at" in body:
        classes = (errors.ObjectDeletedError, *classes)
    error_class = type(
        f"Weft{response.status_code}",
        (httpx.HTTPStatusError, *classes),
        {"__init__": _error_init, "__str__": lambda self: self.args[0]},
    )
    error = error_class(reason, response)
    if isinstance(body, dict) and "deleted_at" in body:
        from datetime import datetime

        error.deleted_at = datetime.fromisoformat(str(body["deleted_at"]).replace("Z", "+00:00"))
    raise error


def _error_init(self: Any, message: str, response: httpx.Response) -> None:
    # Not the classes' own constructors (ObjectDeletedError's wants deleted_at): what
    # httpx.HTTPStatusError sets, on a plain exception with the message.
    Exception.__init__(self, message)
    self._request = response.request
    self.response = response


def _weft_server_class() -> type:
    from weave.trace_server_bindings.remote_http_trace_server import (
        RemoteHTTPTraceServer,
    )

    class WeftHTTPTraceServer(RemoteHTTPTraceServer):
        def post(self, url: str, *args: Any, **kwargs: Any) -> httpx.Response:
            return _raise_as_reference(super().post(url, *args, **kwargs))

        def get(self, url: str, *args: Any, **kwargs: Any) -> httpx.Response:
            return _raise_as_reference(super().get(url, *args, **kwargs))

        def delete(self, url: str, *args: Any, **kwargs: Any) -> httpx.Response:
            return _raise_as_reference(super().delete(url, *args, **kwargs))

        def otel_export(self, req: Any) -> Any:
            """The 0.52.29 client has no otel_export; the reference's service takes the same
            spans as an OTLP/HTTP ExportTraceServiceRequest, which weft serves on
            /otel/v1/traces (project from the `project_id` header)."""
            return _otel_export(self, req)

    return WeftHTTPTraceServer


def _otel_export(server: Any, req: Any) -> Any:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )
    from weave.trace_server import trace_server_interface as tsi

    export = ExportTraceServiceRequest(
        resource_spans=[p.resource_spans for p in req.processed_spans]
    )
    from weave.utils import http_requests

    headers = {
        **server._build_dynamic_request_headers(),
        "Content-Type": "application/x-protobuf",
        "project_id": req.project_id,
    }
    response = http_requests.post(
        server.trace_server_url + "/otel/v1/traces",
        content=export.SerializeToString(),
        auth=server._auth,
        headers=headers,
    )
    _raise_as_reference(response).raise_for_status()
    answer = ExportTraceServiceResponse.FromString(response.content)
    if not answer.HasField("partial_success") or (
        answer.partial_success.rejected_spans == 0 and not answer.partial_success.error_message
    ):
        return tsi.OTelExportRes(partial_success=None)
    return tsi.OTelExportRes(
        partial_success=tsi.ExportTracePartialSuccess(
            rejected_spans=answer.partial_success.rejected_spans,
            error_message=answer.partial_success.error_message,
        )
    )


def _remote_server(lease: Any, *_args: Any, **_kwargs: Any) -> Any:
    """What the suite's tests get as `trace_server`: the SDK's own HTTP client. Unbatched, so
    each server method is one request answered by weft, as each is one call answered by the
    in-process server (batching answers feedback_create from the client, and reports a refused
    call in a background thread instead of to the caller)."""
    assert isinstance(lease, WeftLease), "the suite built its server some other way"
    return _weft_server_class()(lease.url, should_batch=False, auth=("api", lease.key))


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    exclusions = {} if RUN_EXCLUDED else _exclusions()
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        uses_server = "trace_server" in getattr(item, "fixturenames", ())
        reason = _excluded_reason(item.nodeid, exclusions)
        if not uses_server:
            dropped.append(item)
        elif reason is not None:
            _write_result({"test": item.nodeid, "outcome": "excluded", "reason": reason})
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

    if POOL_URL:
        _point_suite_at_weft()


def _defined_in(obj: Any, relative_path: str) -> bool:
    code = getattr(obj, "__code__", None)
    return code is not None and code.co_filename.endswith(relative_path)


def _point_suite_at_weft() -> None:
    """The suite's fixtures look their server factory up in their module at call time. Its
    conftest is loaded twice (as pytest's conftest of tests/trace_server, and imported by
    tests/conftest.py as tests.trace_server.conftest): every copy is patched."""
    for module in list(sys.modules.values()):
        if str(getattr(module, "__file__", "") or "").endswith("tests/trace_server/conftest.py"):
            module.SqliteTraceServer = WeftLease  # type: ignore[attr-defined]
            module.externalize_trace_server = _remote_server  # type: ignore[attr-defined]
        # The suite's `client_is_sqlite` asks the in-process server's class; weft is a
        # ClickHouse server, so the answer is no (in every module that imported the helper).
        if _defined_in(getattr(module, "client_is_sqlite", None), "tests/trace/util.py"):
            module.client_is_sqlite = _not_sqlite  # type: ignore[attr-defined]


def _not_sqlite(_client: Any) -> bool:
    return False


def _last_line(report: pytest.TestReport, call: pytest.CallInfo[None] | None = None) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        line = str(crash.message).strip().splitlines()[0][:400] if crash.message else ""
    else:
        text = str(report.longrepr or "").strip()
        line = text.splitlines()[-1][:400] if text else ""
    # An HTTP error names only its status; the server's answer says why.
    response = getattr(call.excinfo.value, "response", None) if call and call.excinfo else None
    body = getattr(response, "text", None)
    if isinstance(body, str) and body:
        line += " — " + body.replace("\n", " ")[:300]
    return line


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    # One record per test: its first failure (setup or call), or its call phase's result, or a
    # teardown error after a passing call.
    state = item.stash.setdefault(_RECORDED, {"done": False})
    if state["done"]:
        return
    if report.when == "setup" and report.skipped:
        state["done"] = True
        _write_result({"test": item.nodeid, "outcome": "skipped", "message": _last_line(report)})
    elif report.failed:
        state["done"] = True
        phase = "" if report.when == "call" else f" (in {report.when})"
        _write_result({"test": item.nodeid, "outcome": "failed", "message": _last_line(report, call) + phase})
    elif report.when == "call":
        state["pending"] = "skipped" if report.skipped else "passed"
        state["message"] = _last_line(report) if report.skipped else ""
    elif report.when == "teardown" and "pending" in state:
        state["done"] = True
        _write_result({"test": item.nodeid, "outcome": state["pending"], "message": state["message"]})


_RECORDED = pytest.StashKey[dict[str, Any]]()
