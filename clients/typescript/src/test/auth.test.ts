// API keys against the real server: no key is 401, a key without the
// route's scope is 403 naming it, a revoked key is refused at once; keys
// are made, listed and revoked with the bootstrap admin key.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Client, ToolscoreError } from "../index.js";
import { adminKey, apiKey, runTag, server } from "./env.js";

const { url, skip } = server("TOOLSCORE_URL");
const base = url ?? "http://unused";
const authSkip = skip ?? (adminKey ? undefined : "TOOLSCORE_ADMIN_KEY is not set (the server runs without keys)");

test("no key is 401 unauthorized; the work key is let in", { skip: authSkip }, async () => {
  await assert.rejects(new Client({ baseUrl: base }).stats(), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 401 && err.slug === "unauthorized" && err.errors[0]?.parameter === "Authorization");
  await assert.rejects(new Client({ baseUrl: base, apiKey: "tsk_not_a_key" }).stats(), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 401);
  assert.ok(Array.isArray((await new Client({ baseUrl: base, apiKey }).stats()).groups));
});

test("a read-only key is 403 forbidden on ingest, naming the scope; revoked, it is 401", { skip: authSkip }, async () => {
  const admin = new Client({ baseUrl: base, apiKey: adminKey });
  const made = await admin.createKey(["read"], `read-only-${runTag}`);
  assert.deepEqual([made.scopes, made.project, made.token.startsWith("tsk_")], [["read"], "default", true]);
  const reader = new Client({ baseUrl: base, apiKey: made.token });
  await reader.stats();
  await assert.rejects(reader.evaluate({ contract: "flights", trace: [] }, { store: false }), (err: unknown) =>
    err instanceof ToolscoreError && err.status === 403 && err.slug === "forbidden" && err.missingScope === "ingest");
  // The admin key itself has no other scope.
  await assert.rejects(admin.stats(), (err: unknown) => err instanceof ToolscoreError && err.missingScope === "read");

  const listed = [];
  for await (const k of admin.listKeys()) if (k.id === made.id) listed.push(k);
  assert.deepEqual(listed.map((k) => [k.name, k.revoked_at]), [[`read-only-${runTag}`, undefined]]);
  const revoked = await admin.revokeKey(made.id);
  assert.ok(revoked.revoked_at);
  await assert.rejects(reader.stats(), (err: unknown) => err instanceof ToolscoreError && err.status === 401);
});
