// The grading rules and trace methods against a real server whose
// OpenTelemetry ingest grades a trace 200 ms after its last span and keeps
// the traces no rule matched (TOOLSCORE_OTEL_URL): a trace exported before
// any rule matches it is unmatched, and graded once a rule exists and
// regradeTraces is called.

import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";

import { Client, ToolscoreError, type ContractDocument, type OTLPTrace } from "../index.js";
import { otelApiKey, repoJSON, runTag, server } from "./env.js";

const { url, skip } = server("TOOLSCORE_OTEL_URL");
const client = new Client({ baseUrl: url ?? "http://unused", apiKey: otelApiKey });
const contract = repoJSON<ContractDocument>("examples/contracts/contract.json");

/** An OTLP/JSON export of one agent run: an invoke_agent root span and one execute_tool span. */
function agentExport(service: string, traceId: string, task: string): unknown {
  const str = (key: string, value: string) => ({ key, value: { stringValue: value } });
  const t0 = 1_700_000_000_000_000_000n;
  return {
    resourceSpans: [{
      resource: { attributes: [str("service.name", service)] },
      scopeSpans: [{
        scope: { name: "ts-client-test" },
        spans: [
          { traceId, spanId: "00000000000000a1", name: "invoke_agent travel", startTimeUnixNano: String(t0), endTimeUnixNano: String(t0 + 900n),
            attributes: [str("gen_ai.operation.name", "invoke_agent"), str("toolscore.task_id", task)] },
          { traceId, spanId: "00000000000000a2", parentSpanId: "00000000000000a1", name: "execute_tool search_flights",
            startTimeUnixNano: String(t0 + 100n), endTimeUnixNano: String(t0 + 200n),
            attributes: [str("gen_ai.operation.name", "execute_tool"), str("gen_ai.tool.name", "search_flights"),
              str("gen_ai.tool.call.arguments", '{"destination":"LIS","date":"2026-12-18"}')] },
        ],
      }],
    }],
  };
}

/** Polls a trace until it is final at revision (or later). */
async function waitFinal(traceId: string, revision: number): Promise<OTLPTrace> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const tr = await client.getTrace(traceId);
      if (tr.state !== "open" && tr.state !== "closed" && tr.revision >= revision) return tr;
    } catch (err) {
      if (!(err instanceof ToolscoreError && err.status === 404)) throw err;
    }
    if (Date.now() > deadline) throw new Error(`trace ${traceId} not final at revision ${revision} after 30 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("grading rules: versions, identical bodies, listings, problems", { skip }, async () => {
  const name = `rule-ts-${runTag}`;
  const v1 = await client.createRuleVersion(name, { contract: "flights", task_id: "toolscore.task_id" });
  assert.deepEqual([v1.name, v1.version, v1.rule.contract], [name, 1, "flights"]);
  assert.equal((await client.createRuleVersion(name, { task_id: "toolscore.task_id", contract: "flights" })).version, 1, "an identical body is the same version");
  const v2 = await client.createRuleVersion(name, { contract: "flights@1", enabled: false });
  assert.equal(v2.version, 2);
  assert.deepEqual(await client.getRuleVersion(name), v2);
  assert.equal((await client.getRuleVersion(name, 1)).sha256, v1.sha256);
  const versions = [];
  for await (const v of client.listRuleVersions(name, { pageSize: 1 })) versions.push(v.version);
  assert.deepEqual(versions, [1, 2]);
  const inForce = [];
  for await (const r of client.listRules({ pageSize: 1 })) inForce.push([r.name, r.version]);
  assert.ok(inForce.some(([n, v]) => n === name && v === 2), `${name}@2 in ${JSON.stringify(inForce)}`);
  await assert.rejects(client.createRuleVersion(name, { contract: "flights", match: [{ attribute: "x", regex: "(" }] }), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 422 && err.slug === "invalid-rule" && err.errors[0]?.pointer === "/match/0/regex");
  await assert.rejects(client.getRuleVersion(`nope-${runTag}`), (err: unknown) => err instanceof ToolscoreError && err.status === 404);
});

test("traces: an unmatched trace is kept, then graded by regradeTraces once a rule matches it", { skip }, async () => {
  await client.createContractVersion("flights", contract);
  const service = `ts-agent-${runTag}`;
  const traceId = randomBytes(16).toString("hex");
  const res = await fetch(`${url}/v1/traces`, {
    method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${otelApiKey}` },
    body: JSON.stringify(agentExport(service, traceId, "lisbon-ts")),
  });
  assert.equal(res.status, 200, await res.text());
  const unmatched = await waitFinal(traceId, 1);
  assert.deepEqual([unmatched.state, unmatched.spans, unmatched.result_id], ["unmatched", 2, undefined]);

  await client.createRuleVersion(`by-service-${runTag}`, {
    match: [{ attribute: "service.name", equals: service, in: "resource" }], contract: "flights", task_id: "toolscore.task_id",
  });
  const queued = await client.regradeTraces({ trace_ids: [traceId] });
  assert.deepEqual([queued.queued, queued.more, queued.trace_ids], [1, false, [traceId]]);
  const graded = await waitFinal(traceId, 2);
  assert.deepEqual([graded.state, graded.revision, graded.rule], ["graded", 2, `by-service-${runTag}`]);
  const ev = await client.getEvaluation(graded.result_id!);
  assert.deepEqual([ev.task_id, ev.labels?.["otel.trace_id"], ev.trace_calls.map((c) => c.tool)], ["lisbon-ts", traceId, ["search_flights"]]);

  // The same selection again: the trace finished after the first call's before.
  const again = await client.regradeTraces({ trace_ids: [traceId], before: queued.before });
  assert.equal(again.queued, 0);
  await assert.rejects(client.regradeTraces({ states: ["open" as "graded"] }), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 422 && err.errors[0]?.pointer === "/states/0");
});
