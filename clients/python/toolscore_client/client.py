"""The HTTP client of the toolscore grading service (standard library only).

Results are the JSON objects openapi.yaml documents, as dicts; errors are
:class:`ToolscoreError` carrying the server's problem+json.
"""

from __future__ import annotations

import json
import random
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

from .adapters import to_trace, trace_format

PROBLEM_TYPE_BASE = "https://toolscore.dev/problems/"
"""The problem type URI prefix; the rest of a problem's type is its stable slug."""

MAX_BATCH_ITEMS = 1000
"""The most evaluations the service takes in one batch request."""

_TERMINAL_REGRADE_STATES = frozenset({"completed", "cancelled", "failed"})

JSON = Any
Query = Mapping[str, Union[None, str, int, float, bool, Sequence[Union[str, int, float, bool]]]]


@dataclass(frozen=True)
class FieldProblem:
    """One problem at one place of a request: a JSON pointer into the body, or a parameter."""

    message: str
    pointer: Optional[str] = None
    parameter: Optional[str] = None


@dataclass(frozen=True)
class Problem:
    """An RFC 9457 problem as the service sends it (application/problem+json)."""

    type: str
    title: str
    status: int
    detail: Optional[str] = None
    instance: Optional[str] = None
    request_id: Optional[str] = None
    errors: List[FieldProblem] = field(default_factory=list)
    offset: Optional[int] = None
    line: Optional[int] = None
    column: Optional[int] = None
    missing_scope: Optional[str] = None
    pointer: Optional[str] = None
    """400 invalid-json: the JSON pointer of the value being read at the syntax error ("" for the top level)."""

    @property
    def slug(self) -> str:
        """The stable slug of the type, such as ``invalid-trace`` or ``queue-full``."""
        return self.type[len(PROBLEM_TYPE_BASE):] if self.type.startswith(PROBLEM_TYPE_BASE) else self.type

    @classmethod
    def from_json(cls, v: Mapping[str, Any]) -> "Problem":
        """Reads a problem+json object."""
        return cls(
            type=str(v.get("type", "")),
            title=str(v.get("title", "")),
            status=int(v.get("status", 0)),
            detail=v.get("detail"),
            instance=v.get("instance"),
            request_id=v.get("request_id"),
            errors=[FieldProblem(message=e.get("message", ""), pointer=e.get("pointer"), parameter=e.get("parameter"))
                    for e in v.get("errors") or []],
            offset=v.get("offset"),
            line=v.get("line"),
            column=v.get("column"),
            missing_scope=v.get("missing_scope"),
            pointer=v.get("pointer"),
        )


class ToolscoreError(Exception):
    """A request that failed with an HTTP status (after the retries).

    ``problem`` is the server's problem+json, or one made from the status
    when the body was not a problem (none, or a proxy's error page, say):
    ``queue-full`` for a 429, ``unavailable`` for a 503 (retried as a
    problem 503 is), ``internal`` for another 5xx, ``invalid-request``
    for another status.
    """

    def __init__(self, status: int, problem: Problem, retry_after: Optional[float] = None):
        detail = f": {problem.detail}" if problem.detail else ""
        super().__init__(f"{status} {problem.title}{detail}")
        self.status = status
        self.problem = problem
        self.retry_after = retry_after

    @property
    def slug(self) -> str:
        """The stable slug of the problem type."""
        return self.problem.slug

    @property
    def errors(self) -> List[FieldProblem]:
        """Every problem with its place."""
        return self.problem.errors

    @property
    def missing_scope(self) -> Optional[str]:
        """For a 403 forbidden: the scope the key lacks."""
        return self.problem.missing_scope

    @property
    def request_id(self) -> Optional[str]:
        """The request id, to find the request in the server log."""
        return self.problem.request_id


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries a call.

    A 429 is always retried (the server ran nothing); a 503 when it says
    when (Retry-After) and repeating the call is safe; a network error
    when repeating is safe. The wait is Retry-After, or an exponential
    backoff from ``base_delay`` seconds, plus up to 20 % jitter; the
    attempts and the total wait of one call are bounded.
    """

    max_attempts: int = 5
    budget: float = 30.0
    base_delay: float = 0.2
    max_delay: float = 10.0


@dataclass(frozen=True)
class RetryEvent:
    """What a retry hook is told before each retry."""

    method: str
    path: str
    attempt: int
    status: Optional[int]
    delay: float
    idempotency_key: Optional[str]


class Client:
    """A client of one toolscore service.

    >>> client = Client("http://localhost:8080", api_key="tsk_...")  # doctest: +SKIP

    Every method raises :class:`ToolscoreError` for an HTTP error and the
    ``urllib`` error for a network failure that outlived the retries.
    """

    def __init__(
        self,
        base_url: str,
        api_key: Optional[str] = None,
        *,
        retry: RetryPolicy = RetryPolicy(),
        timeout: float = 60.0,
        on_retry: Optional[Callable[[RetryEvent], None]] = None,
        headers: Optional[Mapping[str, str]] = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if not base_url:
            raise ValueError("toolscore: base_url is required")
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.retry = retry
        self.timeout = timeout
        self.on_retry = on_retry
        self.headers = dict(headers or {})
        self._sleep = sleep

    # Evaluations

    def evaluate(self, request: Optional[Mapping[str, Any]] = None, *, store: bool = True,
                 idempotency_key: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Grades one trace (POST /v1/evaluations); stored unless ``store`` is False.

        The request is a dict (``{"contract": "flights", "trace": [...]}``)
        or keyword fields (``contract="flights", trace=[...]``), or both.
        The Idempotency-Key is new per call (or ``idempotency_key``) and
        reused on every retry, so a retried call is stored once. The
        answer is openapi.yaml's Evaluation; its optional
        ``format_warning`` (a str, also on :meth:`get_evaluation` and the
        items of :meth:`list_evaluations`) is
        present only when the trace format read the trace with a caveat,
        such as 0 calls from a document holding what looks like tool calls.
        """
        body = {**(request or {}), **fields}
        return self._request("POST", "/v1/evaluations", query=_store(store), json_body=body,
                             idempotency_key=idempotency_key or _new_key(), idempotent=True)

    def evaluate_messages(self, messages: Any, *, contract: Any = None, gold: Any = None, source: Optional[str] = None,
                          store: bool = True, idempotency_key: Optional[str] = None, **fields: Any) -> Dict[str, Any]:
        """Grades a trace straight from the objects you have: an OpenAI or Anthropic messages list
        (SDK objects and dicts mixed), LangChain messages (objects, or dicts from ``messages_to_dict``),
        a LangGraph state; see :mod:`toolscore_client.adapters`.

        ``source`` ("openai", "anthropic", "langchain", ...) forces that
        format; by default the service detects it. Give ``contract`` (inline,
        a gold list, or a registry reference such as ``"flights@2"``) or
        ``gold``; other fields (``final_answer``, ``task_id``, ``agent``,
        ``labels``...) are sent as they are.
        """
        body: Dict[str, Any] = {**fields, "trace": to_trace(messages)}
        if contract is not None:
            body["contract"] = to_trace(contract)
        if gold is not None:
            body["gold"] = to_trace(gold)
        fmt = trace_format(source)
        if fmt is not None:
            body["format"] = fmt
        return self.evaluate(body, store=store, idempotency_key=idempotency_key)

    def evaluate_batch(self, items: Iterable[Mapping[str, Any]], *, store: bool = True, chunk_size: int = MAX_BATCH_ITEMS,
                       idempotency_key: Optional[str] = None) -> Dict[str, Any]:
        """Grades many traces (POST /v1/evaluations/batch as NDJSON), ``chunk_size`` (at most 1,000) per request.

        Returns the Batch object of openapi.yaml over the whole input:
        ``items`` in input order, each ``index`` (and ``line``) counted in
        the whole input. Each chunk has its own Idempotency-Key (the call's
        key and the chunk number).
        """
        if not isinstance(chunk_size, int) or not 1 <= chunk_size <= MAX_BATCH_ITEMS:
            raise ValueError(f"toolscore: chunk_size must be an integer from 1 to {MAX_BATCH_ITEMS}, got {chunk_size!r}")
        key = idempotency_key or _new_key()
        out: Dict[str, Any] = {"items": [], "succeeded": 0, "failed": 0, "stored": store}
        chunk: List[Mapping[str, Any]] = []
        offset = 0
        n = 0

        def flush() -> None:
            nonlocal offset, n, chunk
            body = "".join(json.dumps(it, separators=(",", ":"), ensure_ascii=False) + "\n" for it in chunk)
            res = self._request("POST", "/v1/evaluations/batch", query=_store(store),
                                raw=(body.encode("utf-8"), "application/x-ndjson"),
                                idempotency_key=f"{key}.{n}", idempotent=True)
            for it in res["items"]:
                it = dict(it)
                it["index"] += offset
                if "line" in it:
                    it["line"] += offset
                out["items"].append(it)
            out["succeeded"] += res["succeeded"]
            out["failed"] += res["failed"]
            out["stored"] = res["stored"]
            offset += len(chunk)
            n += 1
            chunk = []

        for it in items:
            chunk.append(it)
            if len(chunk) == chunk_size:
                flush()
        if chunk:
            flush()
        if n == 0:
            raise ValueError("toolscore: evaluate_batch needs at least one item")
        return out

    def get_evaluation(self, id: str) -> Dict[str, Any]:
        """Fetches one stored evaluation (GET /v1/evaluations/{id})."""
        return self._request("GET", f"/v1/evaluations/{_enc(id)}", idempotent=True)

    def list_evaluations(self, *, page_size: Optional[int] = None, **filters: Any) -> Iterator[Dict[str, Any]]:
        """Iterates over stored evaluations, newest first, following the keyset pages (GET /v1/evaluations).

        Filters as in openapi.yaml: ``contract``, ``task_id``, ``run_id``,
        ``agent``, ``label`` (a string or a list of ``key`` / ``key=value``),
        ``passed``, ``grade`` (a string or a list), ``since``, ``until``
        (RFC 3339 strings), ``regrades``, ``latest``.
        """
        return self._pages("/v1/evaluations", {**filters, "limit": page_size})

    def stats(self, **query: Any) -> Dict[str, Any]:
        """Aggregates of stored evaluations (GET /v1/stats): ``group_by`` and the list filters."""
        return self._request("GET", "/v1/stats", query=query, idempotent=True)

    # Contracts

    def validate_contract(self, contract: JSON) -> Dict[str, Any]:
        """Validates a contract or gold file without storing it (POST /v1/validate)."""
        return self._request("POST", "/v1/validate", json_body=contract, idempotent=True)

    def create_contract_version(self, name: str, contract: JSON) -> Dict[str, Any]:
        """Creates a version of a named contract; an identical body returns the existing version, so retrying is safe."""
        return self._request("POST", f"/v1/contracts/{_enc(name)}/versions", json_body=contract, idempotent=True)

    def get_contract_version(self, name: str, version: Union[int, str] = "latest") -> Dict[str, Any]:
        """Fetches one version with its canonical body; ``version`` is a number or ``"latest"``."""
        return self._request("GET", f"/v1/contracts/{_enc(name)}/versions/{_enc(str(version))}", idempotent=True)

    def list_contracts(self, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the contract names with their latest version, by name."""
        return self._pages("/v1/contracts", {"limit": page_size})

    def list_contract_versions(self, name: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the versions of a named contract, oldest first (without bodies)."""
        return self._pages(f"/v1/contracts/{_enc(name)}/versions", {"limit": page_size})

    # Regrades

    def create_regrade(self, contract: str, **selection: Any) -> Dict[str, Any]:
        """Starts a regrade (POST /v1/regrades, 202) of stored results against ``contract`` (``name@N``).

        Selection fields as in openapi.yaml: ``from_contract``,
        ``from_versions``, ``task_id``, ``run_id``, ``agent``, ``labels``,
        ``since``, ``until``. Not retried after a 503 (a second regrade
        could start).
        """
        return self._request("POST", "/v1/regrades", json_body={**selection, "contract": contract, "dry_run": False}, idempotent=False)

    def dry_run_regrade(self, contract: str, **selection: Any) -> Dict[str, Any]:
        """Counts what a regrade would select; nothing starts."""
        return self._request("POST", "/v1/regrades", json_body={**selection, "contract": contract, "dry_run": True}, idempotent=True)

    def get_regrade(self, id: str) -> Dict[str, Any]:
        """A regrade's state and progress."""
        return self._request("GET", f"/v1/regrades/{_enc(id)}", idempotent=True)

    def cancel_regrade(self, id: str) -> Dict[str, Any]:
        """Cancels a regrade; one that already ended is answered unchanged."""
        return self._request("POST", f"/v1/regrades/{_enc(id)}/cancel", idempotent=True)

    def wait_for_regrade(self, id: str, *, interval: float = 0.5, timeout: float = 600.0) -> Dict[str, Any]:
        """Polls a regrade until it is completed, cancelled or failed and returns it.

        Raises TimeoutError when ``timeout`` seconds pass first.
        """
        deadline = time.monotonic() + timeout
        while True:
            rg = self.get_regrade(id)
            if rg["state"] in _TERMINAL_REGRADE_STATES:
                return rg
            if time.monotonic() + interval > deadline:
                raise TimeoutError(f"toolscore: regrade {id} is still {rg['state']} ({rg['done'] + rg['failed']} of {rg['total']}) after {timeout} s")
            self._sleep(interval)

    def list_regrade_changes(self, id: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the originals whose verdict or grade changed."""
        return self._pages(f"/v1/regrades/{_enc(id)}/changes", {"limit": page_size})

    def list_regrade_failures(self, id: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the originals that could not be regraded."""
        return self._pages(f"/v1/regrades/{_enc(id)}/failures", {"limit": page_size})

    def compare_versions(self, contract: str, a: int, b: int, **filters: Any) -> Dict[str, Any]:
        """Compares two versions of a contract on the same originals (GET /v1/stats/compare)."""
        return self._request("GET", "/v1/stats/compare", query={**filters, "contract": contract, "a": a, "b": b}, idempotent=True)

    # OpenTelemetry ingest: grading rules and traces

    def create_rule_version(self, name: str, rule: Mapping[str, Any]) -> Dict[str, Any]:
        """Creates a version of a named grading rule; an identical body returns the existing version, so retrying is safe."""
        return self._request("POST", f"/v1/rules/{_enc(name)}/versions", json_body=rule, idempotent=True)

    def get_rule_version(self, name: str, version: Union[int, str] = "latest") -> Dict[str, Any]:
        """Fetches one version of a grading rule; ``version`` is a number or ``"latest"``."""
        return self._request("GET", f"/v1/rules/{_enc(name)}/versions/{_enc(str(version))}", idempotent=True)

    def list_rules(self, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the grading rules in force (the latest version of each name), by name."""
        return self._pages("/v1/rules", {"limit": page_size})

    def list_rule_versions(self, name: str, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the versions of a named grading rule, oldest first."""
        return self._pages(f"/v1/rules/{_enc(name)}/versions", {"limit": page_size})

    def get_trace(self, trace_id: str) -> Dict[str, Any]:
        """The assembly and grading state of a trace received on POST /v1/traces (``trace_id``: 32 hex digits)."""
        return self._request("GET", f"/v1/traces/{_enc(trace_id)}", idempotent=True)

    def regrade_traces(self, **selection: Any) -> Dict[str, Any]:
        """Grades finished traces whose spans are kept again, by the rules in force (POST /v1/traces/regrade, scope regrades).

        ``selection`` is the request's fields: ``states`` (default ``["unmatched"]``), ``trace_ids``, ``before``
        (RFC 3339) and ``limit``. When the answer's ``more`` is true, call again with its ``before``.
        """
        # Not idempotent: a retry after a 503 could queue the traces a first attempt queued (and graded) again.
        return self._request("POST", "/v1/traces/regrade", json_body=dict(selection), idempotent=False)

    # Harness runs

    def create_run(self, suite: Mapping[str, Any], agent_url: str, **options: Any) -> Dict[str, Any]:
        """Starts a harness run of ``suite`` against ``agent_url`` (POST /v1/runs, 202)."""
        return self._request("POST", "/v1/runs", json_body={**options, "suite": suite, "agent_url": agent_url}, idempotent=False)

    def get_run(self, id: str) -> Dict[str, Any]:
        """A run's progress, summary and finished tasks."""
        return self._request("GET", f"/v1/runs/{_enc(id)}", idempotent=True)

    # Keys and projects (scope admin)

    def create_key(self, scopes: Sequence[str], name: Optional[str] = None) -> Dict[str, Any]:
        """Makes an API key of the caller's project (POST /v1/keys); its ``token`` is in this answer only.

        Not retried after a 503 (a second key could be made).
        """
        body: Dict[str, Any] = {"scopes": list(scopes)}
        if name:
            body["name"] = name
        return self._request("POST", "/v1/keys", json_body=body, idempotent=False)

    def list_keys(self, *, page_size: Optional[int] = None) -> Iterator[Dict[str, Any]]:
        """Iterates over the caller's project's keys, revoked ones included, newest first."""
        return self._pages("/v1/keys", {"limit": page_size})

    def revoke_key(self, id: str) -> Dict[str, Any]:
        """Revokes a key; revoking a revoked key answers it unchanged."""
        return self._request("DELETE", f"/v1/keys/{_enc(id)}", idempotent=True)

    def create_project(self, name: str) -> Dict[str, Any]:
        """Creates a project and its first admin key (POST /v1/projects)."""
        return self._request("POST", "/v1/projects", json_body={"name": name}, idempotent=False)

    # The HTTP core

    def _pages(self, path: str, query: Query) -> Iterator[Dict[str, Any]]:
        cursor: Optional[str] = None
        while True:
            page = self._request("GET", path, query={**query, "cursor": cursor}, idempotent=True)
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return

    def _url(self, path: str, query: Optional[Query]) -> str:
        pairs = []
        for k, v in (query or {}).items():
            if v is None:
                continue
            for one in v if isinstance(v, (list, tuple)) else [v]:
                pairs.append((k, _text(one)))
        qs = urllib.parse.urlencode(pairs)
        return self.base_url + path + (f"?{qs}" if qs else "")

    def _request(self, method: str, path: str, *, query: Optional[Query] = None, json_body: Any = None,
                 raw: Optional[tuple] = None, idempotency_key: Optional[str] = None, idempotent: bool) -> Any:
        headers = {"Accept": "application/json, application/problem+json", "User-Agent": "toolscore-client-python/0.1.0", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if idempotency_key:
            headers["Idempotency-Key"] = idempotency_key
        data = None
        if raw is not None:
            data, headers["Content-Type"] = raw
        elif json_body is not None:
            data = json.dumps(json_body, ensure_ascii=False).encode("utf-8")
            headers["Content-Type"] = "application/json"
        url = self._url(path, query)
        waited = 0.0
        attempt = 0
        while True:
            attempt += 1
            status: Optional[int] = None
            error: Optional[BaseException] = None
            try:
                req = urllib.request.Request(url, data=data, method=method, headers=headers)
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read())
            except urllib.error.HTTPError as e:
                status = e.code
                error = _to_error(e)
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError) as e:
                error = e
            if status is not None:
                assert isinstance(error, ToolscoreError)
                retryable = status == 429 or (status == 503 and idempotent and error.retry_after is not None)
                hinted = error.retry_after or 0.0
            else:
                retryable, hinted = idempotent, 0.0
            if not retryable or attempt >= self.retry.max_attempts:
                raise error
            backoff = min(self.retry.base_delay * 2 ** (attempt - 1), self.retry.max_delay)
            # Jitter spreads the retries of many clients told the same Retry-After.
            delay = min(max(hinted, backoff) * (1 + random.random() * 0.2), max(self.retry.max_delay, hinted))
            if waited + delay > self.retry.budget:
                raise error
            if self.on_retry:
                self.on_retry(RetryEvent(method, path, attempt, status, delay, idempotency_key))
            self._sleep(delay)
            waited += delay


def _bare_slug(status: int) -> str:
    """The problem slug of an error answer whose body is no problem, by its status."""
    if status == 429:
        return "queue-full"
    if status == 503:
        return "unavailable"
    return "internal" if status >= 500 else "invalid-request"


def _to_error(e: urllib.error.HTTPError) -> ToolscoreError:
    retry_after = parse_retry_after(e.headers.get("Retry-After"))
    body = e.read()
    problem = None
    if "json" in (e.headers.get("Content-Type") or ""):
        try:
            v = json.loads(body)
            if isinstance(v, dict) and isinstance(v.get("title"), str):
                problem = Problem.from_json(v)
        except ValueError:
            pass
    if problem is None:
        slug = _bare_slug(e.code)
        problem = Problem(type=PROBLEM_TYPE_BASE + slug, title=e.reason or f"HTTP {e.code}", status=e.code,
                          detail=body[:200].decode("utf-8", "replace"))
    return ToolscoreError(e.code, problem, retry_after)


def parse_retry_after(v: Optional[str]) -> Optional[float]:
    """Retry-After in seconds: a number of seconds or an HTTP date; None when absent or unreadable."""
    if v is None or not v.strip():
        return None
    v = v.strip()
    if v.isdigit():
        return float(v)
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _store(store: bool) -> Optional[Dict[str, Any]]:
    return None if store else {"store": False}


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _enc(s: str) -> str:
    return urllib.parse.quote(s, safe="")


def _new_key() -> str:
    return str(uuid.uuid4())
