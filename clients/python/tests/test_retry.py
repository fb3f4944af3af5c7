"""The HTTP core against a scripted local HTTP server: retries, Idempotency-Key
reuse, the retry budget, problem errors, the Bearer key, batch chunking and
pagination. The tests against a real toolscore server are in test_server.py.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from toolscore_client import MAX_BATCH_ITEMS, Client, RetryPolicy, ToolscoreError, parse_retry_after


class Scripted:
    """A local server answering from a script, one (status, headers, body) per request; records the requests."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n).decode() if n else None
                outer.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": body})
                answer = outer.answers.pop(0)
                if callable(answer):
                    answer = answer(outer.seen[-1])
                status, headers, payload = answer
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _serve

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted():
    servers = []

    def make(*answers):
        s = Scripted(answers)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def problem(status, slug, **headers):
    body = {"type": f"https://toolscore.dev/problems/{slug}", "title": slug, "status": status, "detail": f"a {slug}", "request_id": "r-1"}
    return status, {"Content-Type": "application/problem+json", **headers}, body


def ok(status, body):
    return status, {"Content-Type": "application/json"}, body


REQ = {"contract": "flights", "trace": [{"tool": "search_flights", "args": {"destination": "LIS"}}]}
GRADED = {"stored": True, "id": "01a2311e-00e9-7735-b4f2-1c45c9a617a8", "grade": "A", "passed": True}


class Waits:
    """A sleep that records instead of waiting."""

    def __init__(self):
        self.slept = []

    def __call__(self, s):
        self.slept.append(s)


def test_429_is_retried_with_the_same_key_and_honours_retry_after(scripted):
    s = scripted(problem(429, "queue-full", **{"Retry-After": "1"}), problem(429, "queue-full", **{"Retry-After": "2"}), ok(201, GRADED))
    waits, events = Waits(), []
    c = Client(s.url, sleep=waits, on_retry=events.append)
    assert c.evaluate(REQ)["id"] == GRADED["id"]
    keys = [r["headers"]["Idempotency-Key"] for r in s.seen]
    assert len(keys) == 3 and len(set(keys)) == 1 and len(keys[0]) == 36
    assert 1.0 <= waits.slept[0] <= 1.2 and 2.0 <= waits.slept[1] <= 2.4
    assert [(e.attempt, e.status, e.idempotency_key) for e in events] == [(1, 429, keys[0]), (2, 429, keys[0])]
    assert s.seen[0]["path"] == "/v1/evaluations"
    assert s.seen[0]["headers"]["Content-Type"] == "application/json"
    assert json.loads(s.seen[0]["body"]) == REQ

    again = scripted(ok(201, GRADED))
    Client(again.url).evaluate(contract="flights", trace=REQ["trace"])
    assert again.seen[0]["headers"]["Idempotency-Key"] != keys[0]
    assert json.loads(again.seen[0]["body"]) == REQ


def test_retry_after_beyond_the_budget_fails_at_once(scripted):
    s = scripted(problem(429, "queue-full", **{"Retry-After": "100"}))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url, retry=RetryPolicy(budget=5), sleep=Waits()).evaluate(REQ)
    assert (e.value.status, e.value.slug, e.value.retry_after, e.value.request_id) == (429, "queue-full", 100.0, "r-1")
    assert len(s.seen) == 1


def test_attempts_are_bounded(scripted):
    busy = problem(503, "busy", **{"Retry-After": "0"})
    s = scripted(busy, busy, busy)
    waits = Waits()
    with pytest.raises(ToolscoreError) as e:
        Client(s.url, retry=RetryPolicy(max_attempts=3, base_delay=0.01), sleep=waits).get_evaluation("x")
    assert e.value.slug == "busy"
    assert len(s.seen) == 3 and len(waits.slept) == 2


def test_503_without_retry_after_is_not_retried(scripted):
    s = scripted(problem(503, "timeout"))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url, sleep=Waits()).evaluate(REQ)
    assert (e.value.status, e.value.slug) == (503, "timeout")
    assert len(s.seen) == 1


def test_a_regrade_start_is_not_retried_after_a_503(scripted):
    s = scripted(problem(503, "unavailable", **{"Retry-After": "5"}))
    with pytest.raises(ToolscoreError):
        Client(s.url, sleep=Waits()).create_regrade("flights@2")
    assert len(s.seen) == 1
    assert json.loads(s.seen[0]["body"]) == {"contract": "flights@2", "dry_run": False}


def test_a_network_error_is_retried_when_repeating_is_safe():
    # A port nothing listens on: connection refused on every attempt.
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    waits, events = Waits(), []
    c = Client(f"http://127.0.0.1:{port}", retry=RetryPolicy(max_attempts=3), sleep=waits, on_retry=events.append)
    with pytest.raises(OSError):
        c.evaluate(REQ)
    assert [e.status for e in events] == [None, None]
    events.clear()
    with pytest.raises(OSError):
        c.create_regrade("flights@2")
    assert events == []


def test_client_errors_are_typed_problems(scripted):
    body = {"type": "https://toolscore.dev/problems/invalid-trace", "title": "Trace cannot be read", "status": 422, "detail": "invalid trace",
            "instance": "/v1/evaluations", "request_id": "ef-1", "errors": [{"pointer": "/trace", "message": "invalid trace"}]}
    s = scripted((422, {"Content-Type": "application/problem+json"}, body))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url).evaluate(REQ)
    err = e.value
    assert (err.status, err.slug, err.request_id, str(err)) == (422, "invalid-trace", "ef-1", "422 Trace cannot be read: invalid trace")
    assert [(f.pointer, f.parameter, f.message) for f in err.errors] == [("/trace", None, "invalid trace")]
    assert err.problem.instance == "/v1/evaluations"
    assert len(s.seen) == 1


def test_an_invalid_json_problem_keeps_its_place(scripted):
    body = {"type": "https://toolscore.dev/problems/invalid-json", "title": "Request body is not valid JSON", "status": 400,
            "detail": "line 1:15 (byte 14): invalid character ']' looking for beginning of value (at /trace/1)",
            "instance": "/v1/evaluations", "request_id": "ef-2", "offset": 14, "line": 1, "column": 15, "pointer": "/trace/1"}
    s = scripted((400, {"Content-Type": "application/problem+json"}, body))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url).evaluate(REQ)
    p = e.value.problem
    assert (e.value.slug, p.offset, p.line, p.column, p.pointer) == ("invalid-json", 14, 1, 15, "/trace/1")


def test_an_error_that_is_not_a_problem_is_still_a_toolscore_error(scripted):
    s = scripted((502, {"Content-Type": "text/html"}, b"<html>bad gateway</html>"))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url).stats()
    assert (e.value.status, e.value.slug, e.value.problem.detail) == (502, "internal", "<html>bad gateway</html>")


def test_a_429_that_is_not_a_problem_is_queue_full_and_retried_after_retry_after(scripted):
    bare = (429, {"Retry-After": "3"}, b"")
    s = scripted(bare, ok(201, GRADED))
    waits = Waits()
    assert Client(s.url, sleep=waits).evaluate(REQ)["id"] == GRADED["id"]
    assert len(s.seen) == 2 and len(waits.slept) == 1 and 3.0 <= waits.slept[0] <= 3.6

    s = scripted(bare)
    with pytest.raises(ToolscoreError) as e:
        Client(s.url, retry=RetryPolicy(budget=1), sleep=Waits()).evaluate(REQ)
    assert (e.value.status, e.value.slug, e.value.retry_after, e.value.problem.title, e.value.problem.detail) == (429, "queue-full", 3.0, "Too Many Requests", "")
    assert len(s.seen) == 1


def test_a_503_that_is_not_a_problem_is_unavailable_and_retried_after_retry_after(scripted):
    bare = (503, {"Retry-After": "2"}, b"")
    s = scripted(bare, ok(201, GRADED))
    waits = Waits()
    assert Client(s.url, sleep=waits).evaluate(REQ)["id"] == GRADED["id"]
    assert len(s.seen) == 2 and len(waits.slept) == 1 and 2.0 <= waits.slept[0] <= 2.4
    assert s.seen[0]["headers"]["Idempotency-Key"] == s.seen[1]["headers"]["Idempotency-Key"]

    # Without Retry-After, or on a call that is not safe to repeat, it is
    # raised at once, as a problem 503 is.
    for answer, call in [((503, {}, b""), lambda c: c.evaluate(REQ)),
                         ((503, {"Retry-After": "1", "Content-Type": "text/html"}, b"<html>Service Unavailable</html>"),
                          lambda c: c.create_regrade("flights@2"))]:
        s = scripted(answer)
        with pytest.raises(ToolscoreError) as e:
            call(Client(s.url, sleep=Waits()))
        assert (e.value.status, e.value.slug, e.value.problem.type) == (503, "unavailable", "https://toolscore.dev/problems/unavailable")
        assert len(s.seen) == 1

    # Another 5xx without a problem stays internal.
    s = scripted((500, {}, b""))
    with pytest.raises(ToolscoreError) as e:
        Client(s.url, sleep=Waits()).evaluate(REQ)
    assert (e.value.status, e.value.slug) == (500, "internal")


def test_the_api_key_is_a_bearer_token(scripted):
    s = scripted(ok(200, {"group_by": "agent", "groups": []}))
    Client(s.url, api_key="tsk_test_123").stats(group_by="agent")
    assert s.seen[0]["headers"]["Authorization"] == "Bearer tsk_test_123"
    assert s.seen[0]["path"] == "/v1/stats?group_by=agent"


def test_evaluate_batch_sends_ndjson_chunks_and_merges_them(scripted):
    def answer(req):
        lines = req["body"].rstrip("\n").split("\n")
        items = [{"index": i, "line": i + 1, "status": 422 if i == 3 else 200} for i in range(len(lines))]
        return ok(200, {"items": items, "succeeded": len(lines) - 1, "failed": 1, "stored": False})

    s = scripted(answer, answer, answer)
    items = [{**REQ, "task_id": f"t{i}"} for i in range(2500)]
    batch = Client(s.url).evaluate_batch(items, store=False, idempotency_key="run-7")
    assert [len(r["body"].rstrip("\n").split("\n")) for r in s.seen] == [MAX_BATCH_ITEMS, MAX_BATCH_ITEMS, 500]
    assert [r["headers"]["Idempotency-Key"] for r in s.seen] == ["run-7.0", "run-7.1", "run-7.2"]
    assert {r["headers"]["Content-Type"] for r in s.seen} == {"application/x-ndjson"}
    assert s.seen[0]["path"] == "/v1/evaluations/batch?store=false"
    assert json.loads(s.seen[2]["body"].split("\n")[499]) == items[2499]
    assert [it["index"] for it in batch["items"]] == list(range(2500))
    assert [(it["index"], it["line"]) for it in batch["items"] if it["status"] == 422] == [(3, 4), (1003, 1004), (2003, 2004)]
    assert (batch["succeeded"], batch["failed"], batch["stored"]) == (2497, 3, False)
    with pytest.raises(ValueError):
        Client(s.url).evaluate_batch([])
    with pytest.raises(ValueError):
        Client(s.url).evaluate_batch(items, chunk_size=1001)


def test_list_evaluations_follows_the_cursor(scripted):
    s = scripted(ok(200, {"items": [{"id": "a"}, {"id": "b"}], "next_cursor": "c1"}), ok(200, {"items": [{"id": "c"}]}))
    got = [e["id"] for e in Client(s.url).list_evaluations(agent="demo", label=["env=dev", "team"], grade=["A", "B"], passed=True, page_size=2)]
    assert got == ["a", "b", "c"]
    assert [r["path"] for r in s.seen] == [
        "/v1/evaluations?agent=demo&label=env%3Ddev&label=team&grade=A&grade=B&passed=true&limit=2",
        "/v1/evaluations?agent=demo&label=env%3Ddev&label=team&grade=A&grade=B&passed=true&limit=2&cursor=c1",
    ]


def test_parse_retry_after():
    from email.utils import formatdate, parsedate_to_datetime
    import time

    assert parse_retry_after("5") == 5.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    # An HTTP date has whole seconds: this one is 1 to 2 s ahead, and the
    # answer is its distance from the clock read while parsing.
    in_two = formatdate(time.time() + 2, usegmt=True)
    at = parsedate_to_datetime(in_two).timestamp()
    before = time.time()
    got = parse_retry_after(in_two)
    after = time.time()
    assert max(0.0, at - after) <= got <= at - before <= 2.0, (at - before, got)
