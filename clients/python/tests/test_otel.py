"""The grading rules and trace methods against a real server whose
OpenTelemetry ingest grades a trace 200 ms after its last span and keeps the
traces no rule matched (TOOLSCORE_OTEL_URL): a trace exported before any
rule matches it is unmatched, and graded once a rule exists and
regrade_traces is called.
"""

import json
import os
import time
import urllib.request

import pytest

from conftest import RUN_TAG, repo_json
from toolscore_client import ToolscoreError

CONTRACT = repo_json("examples/contracts/contract.json")


def agent_export(service, trace_id, task):
    """An OTLP/JSON export of one agent run: an invoke_agent root span and one execute_tool span."""
    def s(key, value):
        return {"key": key, "value": {"stringValue": value}}
    t0 = 1_700_000_000_000_000_000
    return {"resourceSpans": [{
        "resource": {"attributes": [s("service.name", service)]},
        "scopeSpans": [{"scope": {"name": "py-client-test"}, "spans": [
            {"traceId": trace_id, "spanId": "00000000000000b1", "name": "invoke_agent travel",
             "startTimeUnixNano": str(t0), "endTimeUnixNano": str(t0 + 900),
             "attributes": [s("gen_ai.operation.name", "invoke_agent"), s("toolscore.task_id", task)]},
            {"traceId": trace_id, "spanId": "00000000000000b2", "parentSpanId": "00000000000000b1", "name": "execute_tool search_flights",
             "startTimeUnixNano": str(t0 + 100), "endTimeUnixNano": str(t0 + 200),
             "attributes": [s("gen_ai.operation.name", "execute_tool"), s("gen_ai.tool.name", "search_flights"),
                            s("gen_ai.tool.call.arguments", '{"destination":"LIS","date":"2026-12-18"}')]},
        ]}],
    }]}


def wait_final(client, trace_id, revision):
    """Polls a trace until it is final at revision (or later)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            tr = client.get_trace(trace_id)
            if tr["state"] not in ("open", "closed") and tr["revision"] >= revision:
                return tr
        except ToolscoreError as e:
            if e.status != 404:
                raise
        if time.monotonic() > deadline:
            pytest.fail(f"trace {trace_id} not final at revision {revision} after 30 s")
        time.sleep(0.05)


def test_grading_rules_versions_listings_problems(otel_client):
    c = otel_client
    name = f"rule-py-{RUN_TAG}"
    v1 = c.create_rule_version(name, {"contract": "flights", "task_id": "toolscore.task_id"})
    assert (v1["name"], v1["version"], v1["rule"]["contract"]) == (name, 1, "flights")
    assert c.create_rule_version(name, {"task_id": "toolscore.task_id", "contract": "flights"})["version"] == 1
    v2 = c.create_rule_version(name, {"contract": "flights@1", "enabled": False})
    assert v2["version"] == 2
    assert c.get_rule_version(name) == v2
    assert c.get_rule_version(name, 1)["sha256"] == v1["sha256"]
    assert [v["version"] for v in c.list_rule_versions(name, page_size=1)] == [1, 2]
    assert (name, 2) in [(r["name"], r["version"]) for r in c.list_rules(page_size=1)]
    with pytest.raises(ToolscoreError) as e:
        c.create_rule_version(name, {"contract": "flights", "match": [{"attribute": "x", "regex": "("}]})
    assert (e.value.status, e.value.slug, e.value.errors[0].pointer) == (422, "invalid-rule", "/match/0/regex")
    with pytest.raises(ToolscoreError) as e:
        c.get_rule_version(f"nope-{RUN_TAG}")
    assert e.value.status == 404


def test_unmatched_trace_kept_then_graded_by_regrade_traces(otel_client):
    c = otel_client
    c.create_contract_version("flights", CONTRACT)
    service = f"py-agent-{RUN_TAG}"
    trace_id = os.urandom(16).hex()
    req = urllib.request.Request(c.base_url + "/v1/traces", data=json.dumps(agent_export(service, trace_id, "lisbon-py")).encode(),
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {c.api_key}"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as resp:
        assert resp.status == 200
    unmatched = wait_final(c, trace_id, 1)
    assert (unmatched["state"], unmatched["spans"], "result_id" in unmatched) == ("unmatched", 2, False)

    rule = f"by-service-{RUN_TAG}"
    c.create_rule_version(rule, {"match": [{"attribute": "service.name", "equals": service, "in": "resource"}],
                                 "contract": "flights", "task_id": "toolscore.task_id"})
    queued = c.regrade_traces(trace_ids=[trace_id])
    assert (queued["queued"], queued["more"], queued["trace_ids"]) == (1, False, [trace_id])
    graded = wait_final(c, trace_id, 2)
    assert (graded["state"], graded["revision"], graded["rule"]) == ("graded", 2, rule)
    ev = c.get_evaluation(graded["result_id"])
    assert (ev["task_id"], ev["labels"]["otel.trace_id"], [t["tool"] for t in ev["trace_calls"]]) == ("lisbon-py", trace_id, ["search_flights"])

    assert c.regrade_traces(trace_ids=[trace_id], before=queued["before"])["queued"] == 0
    with pytest.raises(ToolscoreError) as e:
        c.regrade_traces(states=["open"])
    assert (e.value.status, e.value.errors[0].pointer) == (422, "/states/0")
