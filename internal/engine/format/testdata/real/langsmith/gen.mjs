// Regenerate: npm ci && node gen.mjs
//
// Drives the langsmith client (traceable, wrapOpenAI, Client) through a
// tool-calling agent loop: the model is a fake OpenAI Chat Completions API
// and LangSmith a fake API, both on 127.0.0.1. Saved per scenario:
//   NAME.posted.jsonl    the bodies the client POSTs to /runs/batch
//                        ({post: [...], patch: [...]}), one a line
//   NAME.run-tree.json   Client.readRun(rootId, {loadChildRuns: true}): the
//                        root run with child_runs, assembled by the client
//                        from GET /runs/{id} and POST /runs/query
// The fake API stores the runs as posted (patches merged in) and adds the
// fields the client's tree assembly needs: session_id, status and
// child_run_ids.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import OpenAI from 'openai';
import { Client } from 'langsmith';
import { traceable, getCurrentRunTree } from 'langsmith/traceable';
import { wrapOpenAI } from 'langsmith/wrappers/openai';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, 'langsmith');
for (const f of readdirSync(dir)) {
  if (/\.(run-tree)\.json$|\.posted\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

process.env.LANGSMITH_TRACING = 'true';
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
const openai = wrapOpenAI(new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' }), { client, project_name: 'toolscore' });

const toolDefs = Object.entries(tools).map(([name, t]) => ({
  type: 'function',
  function: {
    name,
    description: t.description,
    parameters: {
      type: 'object',
      properties: Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, { type: v.replace('?', '') }])),
      required: Object.entries(t.params).filter(([, v]) => !v.endsWith('?')).map(([k]) => k),
    },
  },
}));
const tracedTools = Object.fromEntries(
  Object.entries(tools).map(([name, t]) => [name, traceable(async (args) => t.run(args), { name, run_type: 'tool', client, project_name: 'toolscore' })]),
);

let rootId;
const agent = traceable(
  async (question) => {
    rootId = getCurrentRunTree().id;
    const messages = [{ role: 'user', content: question }];
    for (let turn = 0; turn < 10; turn++) {
      const completion = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages, tools: toolDefs });
      const msg = completion.choices[0].message;
      messages.push(msg);
      if (!msg.tool_calls?.length) return { messages };
      for (const tc of msg.tool_calls) {
        let content;
        try {
          content = JSON.stringify(await tracedTools[tc.function.name](JSON.parse(tc.function.arguments)));
        } catch (e) {
          content = 'Error: ' + e.message;
        }
        messages.push({ role: 'tool', tool_call_id: tc.id, content });
      }
    }
    throw new Error('too many turns');
  },
  { name: 'agent', run_type: 'chain', client, project_name: 'toolscore' },
);

const note = `langsmith@${version} (traceable, wrapOpenAI); expected calls written from the scenario in _shared/scenarios.mjs`;
// Tool runs (run_type "tool") get the parsed arguments object as inputs and
// the tool's return value as outputs; they carry no call id. A tool that
// throws has an error and no outputs.
const lib = { argsKept: 'parsed', ids: false, result: (v) => v };

try {
  for (const sc of scenarios) {
    fake.use(sc);
    store.clear();
    posted.length = 0;
    await agent(sc.prompt);
    await client.awaitPendingTraceBatches();
    const tree = await client.readRun(rootId, { loadChildRuns: true });
    const exp = expectation(sc, lib);
    writeJSONL(dir, `${sc.name}.posted.jsonl`, posted);
    writeExpect(dir, `${sc.name}.posted`, exp, note + '; the runs as posted');
    writeJSON(dir, `${sc.name}.run-tree.json`, tree);
    writeExpect(dir, `${sc.name}.run-tree`, exp, note + '; the run tree as Client.readRun returns it');
  }
} finally {
  await fake.close();
}
