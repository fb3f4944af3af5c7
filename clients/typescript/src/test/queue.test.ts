// A server with one worker and a queue of one (TOOLSCORE_TINY_URL) answers
// most of a burst of evaluations 429 queue-full: the client waits out
// Retry-After and every call succeeds, each stored once under its key.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, type EvaluationRequest, type RetryEvent } from "../index.js";
import { runTag, server, tinyApiKey } from "./env.js";

const { url, skip } = server("TOOLSCORE_TINY_URL");

/** An evaluation that keeps the one worker busy for milliseconds: 256 combinations over 1,000 calls. */
export function heavyRequest(agent: string, i: number): EvaluationRequest {
  const groups = Array.from({ length: 8 }, (_, g) => ({
    id: `g${g}`,
    alternatives: [[{ tool: `t${g}a`, args: { x: { $regex: "^v" } } }], [{ tool: `t${g}b`, args: { x: { $regex: "^v" } } }]],
  }));
  const calls = Array.from({ length: 1000 }, (_, k) => ({ tool: `t${k % 8}${"ab"[k % 2]}`, args: { x: `v${k}`, y: k } }));
  return { contract: { contract_version: 2, required: groups }, trace: calls, agent, task_id: `burst-${i}` };
}

test("a burst against a tiny queue gets 429s, retries them and succeeds", { skip }, async () => {
  const retries: RetryEvent[] = [];
  const client = new Client({ baseUrl: url ?? "http://unused", apiKey: tinyApiKey, retry: { maxAttempts: 20, budgetMs: 60_000 }, onRetry: (e) => retries.push(e) });
  const agent = `burst-ts-${runTag}`;
  const n = 12;
  const results = await Promise.all(Array.from({ length: n }, (_, i) => client.evaluate(heavyRequest(agent, i))));
  assert.equal(results.length, n);
  for (const r of results) {
    assert.equal(r.stored, true);
    assert.equal(r.metrics.contract_metrics?.alternatives.combinations.length, 256);
  }
  const rejected = retries.filter((r) => r.status === 429);
  assert.ok(rejected.length > 0, "no call was answered 429: the queue was not tiny");
  for (const r of rejected) assert.ok(r.delayMs >= 1000, `waited ${r.delayMs} ms, less than Retry-After: 1`);
  // Every call is stored exactly once, under the key it kept across its retries.
  const ids = new Set(results.map((r) => r.id));
  assert.equal(ids.size, n);
  let stored = 0;
  for await (const e of client.listEvaluations({ agent })) {
    assert.ok(ids.has(e.id));
    stored++;
  }
  assert.equal(stored, n);
});
