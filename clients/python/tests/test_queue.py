"""A server with one worker and a queue of one (TOOLSCORE_TINY_URL) answers
most of a burst of evaluations 429 queue-full: the client waits out
Retry-After and every call succeeds, each stored once under its key.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

from conftest import RUN_TAG
from toolscore_client import Client, RetryPolicy


def heavy_request(agent, i):
    """An evaluation that keeps the one worker busy for milliseconds: 256 combinations over 1,000 calls."""
    groups = [{"id": f"g{g}", "alternatives": [[{"tool": f"t{g}a", "args": {"x": {"$regex": "^v"}}}], [{"tool": f"t{g}b", "args": {"x": {"$regex": "^v"}}}]]}
              for g in range(8)]
    calls = [{"tool": f"t{k % 8}{'ab'[k % 2]}", "args": {"x": f"v{k}", "y": k}} for k in range(1000)]
    return {"contract": {"contract_version": 2, "required": groups}, "trace": calls, "agent": agent, "task_id": f"burst-{i}"}


def test_a_burst_against_a_tiny_queue_gets_429s_and_succeeds(tiny_client_args):
    events = []
    url, key = tiny_client_args
    client = Client(url, api_key=key,
                    retry=RetryPolicy(max_attempts=20, budget=60), on_retry=events.append)
    agent = f"burst-py-{RUN_TAG}"
    n = 12
    requests = [heavy_request(agent, i) for i in range(n)]
    start = threading.Barrier(n)

    def call(req):
        start.wait()  # all at once, so the queue of one overflows
        return client.evaluate(req)

    with ThreadPoolExecutor(n) as pool:
        results = list(pool.map(call, requests))
    assert all(r["stored"] and len(r["metrics"]["contract_metrics"]["alternatives"]["combinations"]) == 256 for r in results)
    rejected = [e for e in events if e.status == 429]
    assert rejected, "no call was answered 429: the queue was not tiny"
    assert all(e.delay >= 1.0 for e in rejected), [e.delay for e in rejected]
    ids = {r["id"] for r in results}
    assert len(ids) == n
    assert {e["id"] for e in client.list_evaluations(agent=agent)} == ids
