// The client against a real server (TOOLSCORE_URL, on a fresh database):
// the flight example end to end, batches, pagination, stats, contracts,
// regrades and problem errors.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, ToolscoreError, type ContractDocument, type EvaluationRequest } from "../index.js";
import { apiKey, repoJSON, runTag, server } from "./env.js";

const { url, skip } = server("TOOLSCORE_URL");
const client = new Client({ baseUrl: url ?? "http://unused", apiKey });
const contract = repoJSON<ContractDocument>("examples/contracts/contract.json");
const gold = repoJSON<EvaluationRequest["gold"]>("examples/contracts/gold.json");
const trace = repoJSON<EvaluationRequest["trace"]>("examples/contracts/trace.json");
const name = `flights-ts-${runTag}`;

test("the flight example: register, grade, replay, fetch", { skip }, async () => {
  const v1 = await client.createContractVersion(name, contract);
  assert.equal(v1.version, 1);
  assert.equal(v1.sha256, "ca65c803234a47796180b8c99e7060a72fbc1c18ac51503ff9648395e71ab6bd");
  const again = await client.createContractVersion(name, contract);
  assert.equal(again.version, 1, "an identical body is the same version");

  const req: EvaluationRequest = { contract: `${name}@1`, trace, task_id: "lisbon-1", agent: `demo-${runTag}`, labels: { env: "dev" } };
  const ev = await client.evaluate(req, { idempotencyKey: `lisbon-${runTag}` });
  assert.equal(ev.stored, true);
  assert.equal(ev.grade, "A");
  assert.equal(ev.passed, true);
  assert.equal(ev.score, 0.9670329670329672);
  assert.equal(ev.format, "openai");
  assert.deepEqual(ev.contract, { name, version: 1, sha256: v1.sha256, kind: "contract" });
  assert.deepEqual(ev.issues.map((i) => i.fix), ["In the call to `reserve_seat`: drop `seat`"]);
  assert.equal(ev.metrics.contract_metrics?.alternatives.chosen[0]?.group, "book");

  // The same key and body is the same stored evaluation.
  const replay = await client.evaluate(req, { idempotencyKey: `lisbon-${runTag}` });
  assert.equal(replay.id, ev.id);
  // Another body under the key is a conflict.
  await assert.rejects(client.evaluate({ ...req, task_id: "other" }, { idempotencyKey: `lisbon-${runTag}` }), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 409 && err.slug === "idempotency-conflict");

  const got = await client.getEvaluation(ev.id!);
  assert.deepEqual(got, ev);

  // A dry run against the gold file: grade F, not stored.
  const dry = await client.evaluate({ gold, trace, strict: true, forbidden: [{ tool: "cancel_booking" }], min_score: 0.8 }, { store: false });
  assert.deepEqual([dry.stored, dry.id, dry.grade, dry.passed, dry.score], [false, undefined, "F", false, 0.3833333333333333]);
});

test("format_warning: the trace format's caveat on the answer, on GET and in the list, absent without one", { skip }, async () => {
  const ev = await client.evaluate({ gold, trace: [{ type: "function_call_output", call_id: "c1", output: "ok" }], task_id: `warn-${runTag}` });
  const want = "the trace has no calls, though 1 value in it looks like tool calls or results that the openai-responses format does not read: type function_call_output at /0/type";
  assert.deepEqual([ev.format, ev.format_warning], ["openai-responses", want]);
  const got = await client.getEvaluation(ev.id!);
  assert.equal(got.format_warning, want);
  const listed = [];
  for await (const e of client.listEvaluations({ task_id: `warn-${runTag}` })) listed.push(e.format_warning);
  assert.deepEqual(listed, [want]);
  const plain = await client.evaluate({ gold, trace }, { store: false });
  assert.equal(plain.format, "openai");
  assert.equal("format_warning" in plain, false);
  await client.evaluate({ gold, trace, task_id: `nowarn-${runTag}` });
  const unwarned = [];
  for await (const e of client.listEvaluations({ task_id: `nowarn-${runTag}` })) unwarned.push("format_warning" in e);
  assert.deepEqual(unwarned, [false]);
});

test("evaluateBatch: 2,500 items in three NDJSON requests, answered in order", { skip }, async () => {
  const items: EvaluationRequest[] = Array.from({ length: 2500 }, (_, i) => ({
    contract: contract as EvaluationRequest["contract"],
    trace: i === 1700 ? { not: "a trace" } : [{ tool: "search_flights", args: { destination: "LIS", date: "2026-12-18" } }, { tool: "reserve_seat", args: { flight_id: `FL-${i}` } }],
    task_id: `batch-${i}`,
  }));
  const batch = await client.evaluateBatch(items, { store: false });
  assert.equal(batch.items.length, 2500);
  assert.deepEqual(batch.items.map((it) => it.index), items.map((_, i) => i));
  assert.deepEqual([batch.succeeded, batch.failed, batch.stored], [2499, 1, false]);
  const bad = batch.items[1700]!;
  assert.deepEqual([bad.status, bad.line, bad.problem?.type, bad.problem?.errors?.[0]?.pointer], [422, 1701, "https://toolscore.dev/problems/invalid-trace", "/trace"]);
  assert.equal(batch.items[2499]!.evaluation?.grade, "A");
});

test("listEvaluations walks every keyset page, newest first; stats count them", { skip }, async () => {
  const agent = `pager-${runTag}`;
  const stored = await client.evaluateBatch(
    Array.from({ length: 5 }, (_, i) => ({ contract: contract as EvaluationRequest["contract"], trace, agent, task_id: `page-${i}` })),
  );
  assert.equal(stored.succeeded, 5);
  const seen: string[] = [];
  for await (const e of client.listEvaluations({ agent }, { pageSize: 2 })) seen.push(e.task_id!);
  assert.deepEqual(seen, ["page-4", "page-3", "page-2", "page-1", "page-0"]);

  const stats = await client.stats({ group_by: "agent", agent });
  assert.deepEqual(stats.groups.map((g) => [g.key, g.count, g.passed, g.grades.A]), [[agent, 5, 5, 5]]);
});

test("contracts: validate, list, versions, latest", { skip }, async () => {
  const v = await client.validateContract(contract);
  assert.deepEqual([v.valid, v.kind, v.combinations, v.required_count], [true, "contract", 2, 2]);
  const names: string[] = [];
  for await (const c of client.listContracts({ pageSize: 1 })) names.push(c.name);
  assert.ok(names.includes(name), `${name} in ${names}`);
  const latest = await client.getContractVersion(name);
  assert.equal(latest.version, 1);
  assert.deepEqual(latest.contract, (await client.getContractVersion(name, 1)).contract);
  await assert.rejects(client.validateContract({ contract_version: 2, required: [{ tool: "a", args: { x: { $regex: "(" } } }] }), (err: unknown) =>
    err instanceof ToolscoreError && err.slug === "invalid-contract" && err.errors[0]?.pointer === "/required/0/args/x/$regex");
});

test("regrades: a stricter version flips the verdict; waitForRegrade returns it completed", { skip }, async () => {
  const rgName = `flights-rg-${runTag}`;
  await client.createContractVersion(rgName, contract);
  const ev = await client.evaluate({ contract: rgName, trace, agent: `rg-${runTag}` });
  assert.equal(ev.passed, true);
  const stricter = { ...(contract as Record<string, unknown>), min_score: 0.99 } as ContractDocument;
  assert.equal((await client.createContractVersion(rgName, stricter)).version, 2);

  const dry = await client.dryRunRegrade({ contract: `${rgName}@2` });
  assert.equal(dry.total, 1);
  const started = await client.createRegrade({ contract: `${rgName}@2`, from_versions: [1] });
  assert.ok(["pending", "running", "completed"].includes(started.state));
  const done = await client.waitForRegrade(started.id, { intervalMs: 100, timeoutMs: 60_000 });
  assert.deepEqual([done.state, done.total, done.done, done.failed, done.flips.pass_to_fail], ["completed", 1, 1, 0, 1]);
  const changes = [];
  for await (const c of client.listRegradeChanges(started.id)) changes.push(c);
  assert.deepEqual(changes.map((c) => [c.original_id, c.old.passed, c.new.passed, c.flip]), [[ev.id, true, false, "pass_to_fail"]]);
  const failures = [];
  for await (const f of client.listRegradeFailures(started.id)) failures.push(f);
  assert.deepEqual(failures, []);
  const cmp = await client.compareVersions({ contract: rgName, a: 1, b: 2 });
  assert.deepEqual([cmp.originals, cmp.flips.pass_to_fail, cmp.a.passed, cmp.b.passed], [1, 1, 1, 0]);
});

test("problems: invalid trace, unknown contract and not found are typed errors", { skip }, async () => {
  await assert.rejects(client.evaluate({ contract: name, trace: { not: "a trace" } }, { store: false }), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.deepEqual([err.status, err.slug, err.errors[0]?.pointer], [422, "invalid-trace", "/trace"]);
    assert.ok(err.requestId, "a request id");
    return true;
  });
  await assert.rejects(client.evaluate({ contract: `nope-${runTag}@2`, trace: [] }, { store: false }), (err: unknown) =>
    err instanceof ToolscoreError && err.slug === "unknown-contract" && err.errors[0]?.pointer === "/contract");
  await assert.rejects(client.getEvaluation("01a2290e-7d9f-7ed6-92f2-4772fdded5b2"), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 404 && err.slug === "not-found");
});
