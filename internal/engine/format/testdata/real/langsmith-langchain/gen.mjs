// Regenerate: npm ci && node gen.mjs
//
// Traces a LangChain.js agent (langchain's createAgent, on LangGraph, with
// @langchain/openai's ChatOpenAI against the fake Chat Completions API of
// ../_shared/fake.mjs) to a fake LangSmith API on 127.0.0.1 with the real
// LangChainTracer and langsmith Client. Saved per scenario of
// ../_shared/scenarios.mjs:
//   NAME.posted.jsonl    the bodies the client POSTs to /runs/batch, one a line
//   NAME.run-tree.json   Client.readRun(rootId, {loadChildRuns: true})

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import { Client } from 'langsmith';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
for (const f of readdirSync(dir)) {
  if (/\.(run-tree)\.json$|\.posted\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}
const versions = ['langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai', 'langsmith'].map((p) => `${p}@${installedVersion(dir, p)}`).join(', ');

const fake = await new FakeProvider().start();
const SESSION = '5b9f3f8e-1c1e-4a5e-9a57-6f4d7f0e2a11';
const store = new Map();
const posted = [];
fake.extra.push(
  {
    match: (req) => req.url === '/info',
    handle: (req, body, res) =>
      fake.json(res, { version: '0.10.0', batch_ingest_config: { use_multipart_endpoint: false, size_limit: 100, size_limit_bytes: 20971520, scale_up_nthreads_limit: 16, scale_up_qsize_trigger: 1000, scale_down_nempty_trigger: 4 }, instance_flags: {} }),
  },
  {
    match: (req) => req.method === 'POST' && req.url === '/runs/batch',
    handle: (req, body, res) => {
      posted.push(body);
      for (const r of body.post ?? []) store.set(r.id, { ...r, session_id: SESSION });
      for (const r of body.patch ?? []) store.set(r.id, { ...(store.get(r.id) ?? {}), ...r, session_id: SESSION });
      fake.json(res, {});
    },
  },
  {
    match: (req) => req.method === 'GET' && /^\/runs\/[0-9a-f-]{36}$/.test(req.url),
    handle: (req, body, res) => fake.json(res, view(store.get(req.url.slice(6)))),
  },
  {
    match: (req) => req.method === 'POST' && req.url === '/runs/query',
    handle: (req, body, res) => {
      const runs = [...store.values()].filter((r) => r.trace_id === body.trace && (body.is_root === false ? r.parent_run_id : !r.parent_run_id));
      fake.json(res, { runs: runs.map(view), cursors: { next: null } });
    },
  },
);
function view(r) {
  if (!r) return null;
  const kids = [...store.values()].filter((c) => c.parent_run_id === r.id).map((c) => c.id);
  return { ...r, status: r.error ? 'error' : 'success', child_run_ids: kids };
}

const client = new Client({ apiUrl: fake.url, apiKey: 'lsv2_test', autoBatchTracing: true });
const model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: fake.url + '/v1' }, maxRetries: 0 });
const lcTools = Object.entries(tools).map(([name, t]) =>
  tool(async (args) => t.run(args), {
    name,
    description: t.description,
    schema: z.object(Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, (v.startsWith('number') ? z.number() : z.string()).optional()]))),
  }),
);
const agent = createAgent({ model, tools: lcTools });

const note = `${versions}; expected calls written from the scenario in _shared/scenarios.mjs`;
// The llm runs keep the model's argument text (additional_kwargs.tool_calls)
// and the call ids; a tool run keeps its call id (extra.tool_call_id) and
// its ToolMessage, whose content is the return value as JSON text. A
// throwing tool's run has an error (ToolNode answers the model with
// "Error: ... Please fix your mistakes.").
const lib = { argsKept: 'text', result: (v) => JSON.stringify(v) };

try {
  for (const sc of scenarios) {
    fake.use(sc);
    posted.length = 0;
    store.clear();
    const tracer = new LangChainTracer({ client, projectName: 'toolscore' });
    let out;
    try {
      out = await agent.invoke({ messages: [{ role: 'user', content: sc.prompt }] }, { callbacks: [tracer], recursionLimit: 25 });
    } finally {
      await client.awaitPendingTraceBatches();
    }
    const root = [...store.values()].find((r) => !r.parent_run_id);
    writeJSONL(dir, `${sc.name}.posted.jsonl`, posted);
    writeJSON(dir, `${sc.name}.run-tree.json`, await client.readRun(root.id, { loadChildRuns: true }));
    if (fake.turn !== sc.turns.length || out.messages.at(-1).content !== sc.turns.at(-1).text) throw new Error(`${sc.name}: the run is not the scenario's`);
    writeExpect(dir, `${sc.name}.posted`, expectation(sc, lib), note);
    writeExpect(dir, `${sc.name}.run-tree`, expectation(sc, lib), note);
  }
} finally {
  await fake.close();
}
