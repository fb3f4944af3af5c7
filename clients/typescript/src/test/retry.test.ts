// Unit tests of the HTTP core against a scripted fetch: retries,
// Idempotency-Key reuse, the retry budget, problem errors, the Bearer key,
// batch chunking and pagination. The tests against a real server are in
// server.test.ts.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, MAX_BATCH_ITEMS, ToolscoreError, parseRetryAfter, type EvaluationRequest, type RetryEvent } from "../index.js";

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A fetch that answers from a script, one entry per call, and records the requests. */
function scripted(answers: Array<Response | Error | ((req: Seen) => Response)>): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const fetchFn = (async (input: string | URL | Request, init?: RequestInit) => {
    const req: Seen = {
      method: init?.method ?? "GET",
      url: String(input),
      headers: Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>)),
      body: init?.body as string | undefined,
    };
    seen.push(req);
    const a = answers[seen.length - 1];
    if (a === undefined) throw new Error(`unexpected request ${seen.length}: ${req.method} ${req.url}`);
    if (a instanceof Error) throw a;
    return typeof a === "function" ? a(req) : a;
  }) as typeof fetch;
  return { fetch: fetchFn, seen };
}

function problem(status: number, slug: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ type: `https://toolscore.dev/problems/${slug}`, title: slug, status, detail: `a ${slug}`, request_id: "r-1" }), {
    status,
    headers: { "Content-Type": "application/problem+json", ...headers },
  });
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

const req: EvaluationRequest = { contract: "flights", trace: [{ tool: "search_flights", args: { destination: "LIS" } }] };
const graded = { stored: true, id: "01a2311e-00e9-7735-b4f2-1c45c9a617a8", grade: "A", passed: true };

test("a 429 is retried with the same Idempotency-Key until it succeeds", async () => {
  const { fetch, seen } = scripted([problem(429, "queue-full", { "Retry-After": "0" }), problem(429, "queue-full", { "Retry-After": "0" }), json(201, graded)]);
  const retries: RetryEvent[] = [];
  const c = new Client({ baseUrl: "http://ts.test/", fetch, retry: { baseDelayMs: 1 }, onRetry: (e) => retries.push(e) });
  const ev = await c.evaluate(req);
  assert.equal(ev.id, graded.id);
  assert.equal(seen.length, 3);
  const keys = seen.map((s) => s.headers["Idempotency-Key"]);
  assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  assert.deepEqual(retries.map((r) => [r.attempt, r.status, r.idempotencyKey]), [[1, 429, keys[0]], [2, 429, keys[0]]]);
  assert.equal(seen[0]!.url, "http://ts.test/v1/evaluations");
  assert.equal(seen[0]!.headers["Content-Type"], "application/json");
  assert.deepEqual(JSON.parse(seen[0]!.body!), req);

  // Another call gets another key.
  const again = scripted([json(201, graded)]);
  await new Client({ baseUrl: "http://ts.test", fetch: again.fetch }).evaluate(req);
  assert.notEqual(again.seen[0]!.headers["Idempotency-Key"], keys[0]);
});

test("the wait honours Retry-After", async () => {
  const { fetch } = scripted([problem(429, "queue-full", { "Retry-After": "1" }), json(201, graded)]);
  const retries: RetryEvent[] = [];
  const c = new Client({ baseUrl: "http://ts.test", fetch, retry: { baseDelayMs: 1 }, onRetry: (e) => retries.push(e) });
  const start = Date.now();
  await c.evaluate(req, { idempotencyKey: "k-1" });
  const waited = Date.now() - start;
  assert.ok(retries[0]!.delayMs >= 1000 && retries[0]!.delayMs <= 1200, `delay ${retries[0]!.delayMs} ms`);
  // The client slept the delay it announced, Retry-After's 1 s or more:
  // Node's timers count whole milliseconds and may fire up to 1 ms early
  // by Date.now.
  assert.ok(waited >= Math.floor(retries[0]!.delayMs) - 1, `waited ${waited} ms, want the ${retries[0]!.delayMs} ms delay`);
});

test("a Retry-After beyond the budget fails at once with the problem", async () => {
  const { fetch, seen } = scripted([problem(429, "queue-full", { "Retry-After": "100" })]);
  const c = new Client({ baseUrl: "http://ts.test", fetch, retry: { budgetMs: 5_000 } });
  await assert.rejects(c.evaluate(req), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.equal(err.status, 429);
    assert.equal(err.slug, "queue-full");
    assert.equal(err.retryAfter, 100);
    assert.equal(err.requestId, "r-1");
    return true;
  });
  assert.equal(seen.length, 1);
});

test("attempts are bounded", async () => {
  const busy = () => problem(503, "busy", { "Retry-After": "0" });
  const { fetch, seen } = scripted([busy(), busy(), busy()]);
  const c = new Client({ baseUrl: "http://ts.test", fetch, retry: { maxAttempts: 3, baseDelayMs: 1 } });
  await assert.rejects(c.getEvaluation("01a2311e-00e9-7735-b4f2-1c45c9a617a8"), (err: unknown) => err instanceof ToolscoreError && err.slug === "busy");
  assert.equal(seen.length, 3);
});

test("a 503 without Retry-After (an evaluation timeout) is not retried", async () => {
  const { fetch, seen } = scripted([problem(503, "timeout")]);
  const c = new Client({ baseUrl: "http://ts.test", fetch, retry: { baseDelayMs: 1 } });
  await assert.rejects(c.evaluate(req), (err: unknown) => err instanceof ToolscoreError && err.slug === "timeout" && err.status === 503);
  assert.equal(seen.length, 1);
});

test("a network error is retried when repeating is safe, and not for a regrade start", async () => {
  const down = new TypeError("fetch failed");
  const ok = scripted([down, json(201, graded)]);
  await new Client({ baseUrl: "http://ts.test", fetch: ok.fetch, retry: { baseDelayMs: 1 } }).evaluate(req);
  assert.equal(ok.seen.length, 2);
  assert.equal(ok.seen[0]!.headers["Idempotency-Key"], ok.seen[1]!.headers["Idempotency-Key"]);

  const regrade = scripted([down]);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch: regrade.fetch, retry: { baseDelayMs: 1 } }).createRegrade({ contract: "flights@2" }), down);
  assert.equal(regrade.seen.length, 1);
});

test("client errors are typed problems and not retried", async () => {
  const body = {
    type: "https://toolscore.dev/problems/invalid-trace", title: "Trace cannot be read", status: 422, detail: "invalid trace",
    instance: "/v1/evaluations", request_id: "ef-1", errors: [{ pointer: "/trace", message: "invalid trace" }],
  };
  const { fetch, seen } = scripted([new Response(JSON.stringify(body), { status: 422, headers: { "Content-Type": "application/problem+json" } })]);
  const c = new Client({ baseUrl: "http://ts.test", fetch });
  await assert.rejects(c.evaluate(req), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.deepEqual(err.problem, body);
    assert.equal(err.slug, "invalid-trace");
    assert.deepEqual(err.errors, [{ pointer: "/trace", message: "invalid trace" }]);
    assert.equal(err.message, "422 Trace cannot be read: invalid trace");
    return true;
  });
  assert.equal(seen.length, 1);
});

test("an invalid-json problem keeps its place: offset, line, column and pointer", async () => {
  const body = {
    type: "https://toolscore.dev/problems/invalid-json", title: "Request body is not valid JSON", status: 400,
    detail: "line 1:15 (byte 14): invalid character ']' looking for beginning of value (at /trace/1)",
    instance: "/v1/evaluations", request_id: "r-2", offset: 14, line: 1, column: 15, pointer: "/trace/1",
  };
  const { fetch } = scripted([new Response(JSON.stringify(body), { status: 400, headers: { "Content-Type": "application/problem+json" } })]);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch }).evaluate(req), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.deepEqual([err.slug, err.problem.offset, err.problem.line, err.problem.column, err.problem.pointer], ["invalid-json", 14, 1, 15, "/trace/1"]);
    return true;
  });
});

test("an error that is not problem+json still becomes a ToolscoreError", async () => {
  const { fetch } = scripted([new Response("<html>bad gateway</html>", { status: 502, statusText: "Bad Gateway", headers: { "Content-Type": "text/html" } })]);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch }).stats(), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.equal(err.status, 502);
    assert.equal(err.slug, "internal");
    assert.equal(err.problem.title, "Bad Gateway");
    assert.equal(err.problem.detail, "<html>bad gateway</html>");
    return true;
  });
});

test("a 429 that is not problem+json is queue-full and retried after its Retry-After", async () => {
  const bare = (after: string) => new Response(null, { status: 429, statusText: "Too Many Requests", headers: { "Retry-After": after } });
  const retries: RetryEvent[] = [];
  const ok = scripted([bare("1"), json(201, graded)]);
  await new Client({ baseUrl: "http://ts.test", fetch: ok.fetch, retry: { baseDelayMs: 1 }, onRetry: (e) => retries.push(e) }).evaluate(req);
  assert.equal(ok.seen.length, 2);
  assert.deepEqual(retries.map((r) => [r.attempt, r.status]), [[1, 429]]);
  assert.ok(retries[0]!.delayMs >= 1000 && retries[0]!.delayMs <= 1200, `delay ${retries[0]!.delayMs} ms, want Retry-After's 1 s plus at most 20 %`);

  const { fetch, seen } = scripted([bare("100")]);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch, retry: { budgetMs: 5_000 } }).evaluate(req), (err: unknown) => {
    assert.ok(err instanceof ToolscoreError);
    assert.equal(err.status, 429);
    assert.equal(err.slug, "queue-full");
    assert.equal(err.retryAfter, 100);
    assert.equal(err.problem.title, "Too Many Requests");
    assert.equal(err.problem.detail, "");
    return true;
  });
  assert.equal(seen.length, 1);
});

test("a 503 that is not problem+json is unavailable and retried after its Retry-After when repeating is safe", async () => {
  const bare = (headers: Record<string, string>, body: string | null = null) => new Response(body, { status: 503, statusText: "Service Unavailable", headers });
  const retries: RetryEvent[] = [];
  const ok = scripted([bare({ "Retry-After": "1" }), json(201, graded)]);
  await new Client({ baseUrl: "http://ts.test", fetch: ok.fetch, retry: { baseDelayMs: 1 }, onRetry: (e) => retries.push(e) }).evaluate(req);
  assert.equal(ok.seen.length, 2);
  assert.equal(ok.seen[0]!.headers["Idempotency-Key"], ok.seen[1]!.headers["Idempotency-Key"]);
  assert.deepEqual(retries.map((r) => [r.attempt, r.status]), [[1, 503]]);
  assert.ok(retries[0]!.delayMs >= 1000 && retries[0]!.delayMs <= 1200, `delay ${retries[0]!.delayMs} ms, want Retry-After's 1 s plus at most 20 %`);

  // Without Retry-After, or on a call that is not safe to repeat, it is
  // thrown at once, as a problem 503 is.
  for (const [answer, call] of [
    [bare({}), (c: Client) => c.evaluate(req)],
    [bare({ "Retry-After": "1", "Content-Type": "text/html" }, "<html>Service Unavailable</html>"), (c: Client) => c.createRegrade({ contract: "flights@2" })],
  ] as const) {
    const { fetch, seen } = scripted([answer]);
    await assert.rejects(call(new Client({ baseUrl: "http://ts.test", fetch })), (err: unknown) => {
      assert.ok(err instanceof ToolscoreError);
      assert.deepEqual([err.status, err.slug, err.problem.type], [503, "unavailable", "https://toolscore.dev/problems/unavailable"]);
      return true;
    });
    assert.equal(seen.length, 1);
  }

  // Another 5xx without a problem stays internal.
  const { fetch } = scripted([new Response(null, { status: 500 })]);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch }).evaluate(req), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 500 && err.slug === "internal");
});

test("the API key is sent as a Bearer token", async () => {
  const { fetch, seen } = scripted([json(200, { group_by: "agent", groups: [] })]);
  await new Client({ baseUrl: "http://ts.test", fetch, apiKey: "tsk_test_123" }).stats({ group_by: "agent" });
  assert.equal(seen[0]!.headers.Authorization, "Bearer tsk_test_123");
  assert.equal(seen[0]!.url, "http://ts.test/v1/stats?group_by=agent");
});

test("evaluateBatch sends NDJSON chunks of at most 1,000 with their own keys and merges the answers", async () => {
  const answer = (r: Seen) => {
    const lines = r.body!.trimEnd().split("\n");
    return json(200, {
      items: lines.map((_, i) => ({ index: i, line: i + 1, status: i === 3 ? 422 : 200, ...(i === 3 ? { problem: { type: "https://toolscore.dev/problems/invalid-trace", title: "t", status: 422 } } : { evaluation: { stored: false } }) })),
      succeeded: lines.length - (lines.length > 3 ? 1 : 0),
      failed: lines.length > 3 ? 1 : 0,
      stored: false,
    });
  };
  const { fetch, seen } = scripted([answer, answer, answer]);
  const items = Array.from({ length: 2500 }, (_, i) => ({ ...req, task_id: `t${i}` }));
  const batch = await new Client({ baseUrl: "http://ts.test", fetch }).evaluateBatch(items, { store: false, idempotencyKey: "run-7" });
  assert.deepEqual(seen.map((s) => s.body!.trimEnd().split("\n").length), [MAX_BATCH_ITEMS, MAX_BATCH_ITEMS, 500]);
  assert.deepEqual(seen.map((s) => s.headers["Idempotency-Key"]), ["run-7.0", "run-7.1", "run-7.2"]);
  assert.deepEqual(seen.map((s) => s.headers["Content-Type"]), Array(3).fill("application/x-ndjson"));
  assert.equal(seen[0]!.url, "http://ts.test/v1/evaluations/batch?store=false");
  assert.deepEqual(JSON.parse(seen[2]!.body!.split("\n")[499]!), items[2499]);
  assert.equal(batch.items.length, 2500);
  assert.deepEqual(batch.items.map((it) => it.index), items.map((_, i) => i));
  assert.deepEqual(batch.items.filter((it) => it.status === 422).map((it) => [it.index, it.line]), [[3, 4], [1003, 1004], [2003, 2004]]);
  assert.deepEqual([batch.succeeded, batch.failed, batch.stored], [2497, 3, false]);

  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch }).evaluateBatch([], {}), RangeError);
  await assert.rejects(new Client({ baseUrl: "http://ts.test", fetch }).evaluateBatch(items, { chunkSize: 1001 }), RangeError);
});

test("listEvaluations follows next_cursor and sends the filters", async () => {
  const { fetch, seen } = scripted([
    json(200, { items: [{ id: "a" }, { id: "b" }], next_cursor: "c1" }),
    json(200, { items: [{ id: "c" }] }),
  ]);
  const ids: string[] = [];
  for await (const e of new Client({ baseUrl: "http://ts.test", fetch }).listEvaluations({ agent: "demo", label: ["env=dev", "team"], grade: ["A", "B"], passed: true }, { pageSize: 2 })) {
    ids.push(e.id);
  }
  assert.deepEqual(ids, ["a", "b", "c"]);
  assert.deepEqual(seen.map((s) => s.url), [
    "http://ts.test/v1/evaluations?agent=demo&label=env%3Ddev&label=team&grade=A&grade=B&passed=true&limit=2",
    "http://ts.test/v1/evaluations?agent=demo&label=env%3Ddev&label=team&grade=A&grade=B&passed=true&limit=2&cursor=c1",
  ]);
});

test("parseRetryAfter reads seconds and HTTP dates", () => {
  assert.equal(parseRetryAfter("5"), 5);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  // An HTTP date has whole seconds: this one is 1 to 2 s ahead, and the
  // answer is its distance from the clock read while parsing.
  const inTwo = new Date(Date.now() + 2000).toUTCString();
  const at = Date.parse(inTwo);
  const before = Date.now();
  const got = parseRetryAfter(inTwo)!;
  const after = Date.now();
  assert.ok(got >= Math.max(0, (at - after) / 1000) && got <= (at - before) / 1000 && at - before <= 2000,
    `HTTP date ${(at - before) / 1000} s ahead read as ${got} s`);
});
