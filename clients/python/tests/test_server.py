"""The client against a real server (TOOLSCORE_URL, on a fresh database): the
flight example end to end, batches, pagination, stats, contracts, regrades
and problem errors.
"""

import pytest

from conftest import RUN_TAG, repo_json
from toolscore_client import ToolscoreError

CONTRACT = repo_json("examples/contracts/contract.json")
GOLD = repo_json("examples/contracts/gold.json")
TRACE = repo_json("examples/contracts/trace.json")
NAME = f"flights-py-{RUN_TAG}"


def test_flight_example_register_grade_replay_fetch(client):
    v1 = client.create_contract_version(NAME, CONTRACT)
    assert (v1["version"], v1["sha256"]) == (1, "ca65c803234a47796180b8c99e7060a72fbc1c18ac51503ff9648395e71ab6bd")
    assert client.create_contract_version(NAME, CONTRACT)["version"] == 1

    req = {"contract": f"{NAME}@1", "trace": TRACE, "task_id": "lisbon-1", "agent": f"demo-{RUN_TAG}", "labels": {"env": "dev"}}
    ev = client.evaluate(req, idempotency_key=f"lisbon-{RUN_TAG}")
    assert (ev["stored"], ev["grade"], ev["passed"], ev["score"], ev["format"]) == (True, "A", True, 0.9670329670329672, "openai")
    assert ev["contract"] == {"name": NAME, "version": 1, "sha256": v1["sha256"], "kind": "contract"}
    assert [i["fix"] for i in ev["issues"]] == ["In the call to `reserve_seat`: drop `seat`"]

    assert client.evaluate(req, idempotency_key=f"lisbon-{RUN_TAG}")["id"] == ev["id"]
    with pytest.raises(ToolscoreError) as e:
        client.evaluate({**req, "task_id": "other"}, idempotency_key=f"lisbon-{RUN_TAG}")
    assert (e.value.status, e.value.slug) == (409, "idempotency-conflict")

    assert client.get_evaluation(ev["id"]) == ev

    dry = client.evaluate(gold=GOLD, trace=TRACE, strict=True, forbidden=[{"tool": "cancel_booking"}], min_score=0.8, store=False)
    assert (dry["stored"], "id" in dry, dry["grade"], dry["passed"], dry["score"]) == (False, False, "F", False, 0.3833333333333333)


def test_format_warning_on_the_answer_and_on_get(client):
    ev = client.evaluate(gold=GOLD, trace=[{"type": "function_call_output", "call_id": "c1", "output": "ok"}], task_id=f"warn-{RUN_TAG}")
    want = ("the trace has no calls, though 1 value in it looks like tool calls or results that the openai-responses format"
            " does not read: type function_call_output at /0/type")
    assert (ev["format"], ev.get("format_warning")) == ("openai-responses", want)
    assert client.get_evaluation(ev["id"])["format_warning"] == want
    assert [e.get("format_warning") for e in client.list_evaluations(task_id=f"warn-{RUN_TAG}")] == [want]
    plain = client.evaluate(gold=GOLD, trace=TRACE, store=False)
    assert (plain["format"], "format_warning" in plain) == ("openai", False)
    client.evaluate(gold=GOLD, trace=TRACE, task_id=f"nowarn-{RUN_TAG}")
    assert ["format_warning" in e for e in client.list_evaluations(task_id=f"nowarn-{RUN_TAG}")] == [False]


def test_evaluate_batch_2500_items_in_order(client):
    ok_trace = [{"tool": "search_flights", "args": {"destination": "LIS", "date": "2026-12-18"}}]
    items = [{"contract": CONTRACT, "trace": {"not": "a trace"} if i == 1700 else ok_trace + [{"tool": "reserve_seat", "args": {"flight_id": f"FL-{i}"}}],
              "task_id": f"batch-{i}"} for i in range(2500)]
    batch = client.evaluate_batch(items, store=False)
    assert [it["index"] for it in batch["items"]] == list(range(2500))
    assert (batch["succeeded"], batch["failed"], batch["stored"]) == (2499, 1, False)
    bad = batch["items"][1700]
    assert (bad["status"], bad["line"], bad["problem"]["type"], bad["problem"]["errors"][0]["pointer"]) == (
        422, 1701, "https://toolscore.dev/problems/invalid-trace", "/trace")
    assert batch["items"][2499]["evaluation"]["grade"] == "A"


def test_list_evaluations_pages_and_stats(client):
    agent = f"pager-{RUN_TAG}"
    assert client.evaluate_batch([{"contract": CONTRACT, "trace": TRACE, "agent": agent, "task_id": f"page-{i}"} for i in range(5)])["succeeded"] == 5
    assert [e["task_id"] for e in client.list_evaluations(agent=agent, page_size=2)] == [f"page-{i}" for i in (4, 3, 2, 1, 0)]
    stats = client.stats(group_by="agent", agent=agent)
    assert [(g["key"], g["count"], g["passed"], g["grades"]["A"]) for g in stats["groups"]] == [(agent, 5, 5, 5)]


def test_contracts(client):
    v = client.validate_contract(CONTRACT)
    assert (v["valid"], v["kind"], v["combinations"], v["required_count"]) == (True, "contract", 2, 2)
    client.create_contract_version(NAME, CONTRACT)
    assert NAME in [c["name"] for c in client.list_contracts(page_size=1)]
    assert [v["version"] for v in client.list_contract_versions(NAME)] == [1]
    assert client.get_contract_version(NAME)["contract"] == client.get_contract_version(NAME, 1)["contract"]
    with pytest.raises(ToolscoreError) as e:
        client.validate_contract({"contract_version": 2, "required": [{"tool": "a", "args": {"x": {"$regex": "("}}}]})
    assert (e.value.slug, e.value.errors[0].pointer) == ("invalid-contract", "/required/0/args/x/$regex")


def test_regrade_flips_and_wait(client):
    name = f"flights-rg-{RUN_TAG}"
    client.create_contract_version(name, CONTRACT)
    ev = client.evaluate(contract=name, trace=TRACE, agent=f"rg-{RUN_TAG}")
    assert ev["passed"]
    assert client.create_contract_version(name, {**CONTRACT, "min_score": 0.99})["version"] == 2
    assert client.dry_run_regrade(f"{name}@2")["total"] == 1
    started = client.create_regrade(f"{name}@2", from_versions=[1])
    done = client.wait_for_regrade(started["id"], interval=0.1, timeout=60)
    assert (done["state"], done["total"], done["done"], done["failed"], done["flips"]["pass_to_fail"]) == ("completed", 1, 1, 0, 1)
    changes = list(client.list_regrade_changes(started["id"]))
    assert [(c["original_id"], c["old"]["passed"], c["new"]["passed"], c["flip"]) for c in changes] == [(ev["id"], True, False, "pass_to_fail")]
    assert list(client.list_regrade_failures(started["id"])) == []
    cmp = client.compare_versions(name, 1, 2)
    assert (cmp["originals"], cmp["flips"]["pass_to_fail"], cmp["a"]["passed"], cmp["b"]["passed"]) == (1, 1, 1, 0)


def test_problems(client):
    with pytest.raises(ToolscoreError) as e:
        client.evaluate(contract=CONTRACT, trace={"not": "a trace"}, store=False)
    assert (e.value.status, e.value.slug, e.value.errors[0].pointer) == (422, "invalid-trace", "/trace")
    assert e.value.request_id
    with pytest.raises(ToolscoreError) as e:
        client.evaluate(contract=f"nope-{RUN_TAG}@2", trace=[], store=False)
    assert (e.value.slug, e.value.errors[0].pointer) == ("unknown-contract", "/contract")
    with pytest.raises(ToolscoreError) as e:
        client.get_evaluation("01a2290e-7d9f-7ed6-92f2-4772fdded5b2")
    assert (e.value.status, e.value.slug) == (404, "not-found")
