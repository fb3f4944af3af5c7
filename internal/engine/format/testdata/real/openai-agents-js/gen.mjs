// Regenerate: npm ci && node gen.mjs
//
// Drives the OpenAI Agents SDK for JavaScript (@openai/agents) against a
// fake OpenAI Responses API on 127.0.0.1 and saves what a user keeps:
// result.history, result.newItems (RunItem wrappers, as JSON.stringify
// writes them), the events of a streamed run (one JSON value a line) and
// the trace export payload the SDK's OpenAITracingExporter POSTs (caught by
// a fake ingest endpoint on the same server).

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import OpenAI from 'openai';
import {
  Agent,
  run,
  tool,
  setDefaultOpenAIClient,
  setTraceProcessors,
  BatchTraceProcessor,
  OpenAITracingExporter,
  getGlobalTraceProvider,
} from '@openai/agents';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, '@openai/agents');
for (const f of readdirSync(dir)) {
  if (/\.(history|new-items|trace-export)\.json$|\.stream\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

const fake = await new FakeProvider().start();
const ingested = [];
fake.extra.push({
  match: (req) => req.url.startsWith('/v1/traces/ingest'),
  handle: (req, body, res) => {
    ingested.push(body);
    res.writeHead(204);
    res.end();
  },
});

setDefaultOpenAIClient(new OpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' }));
const exporter = new OpenAITracingExporter({ endpoint: fake.url + '/v1/traces/ingest', apiKey: 'sk-test' });
setTraceProcessors([new BatchTraceProcessor(exporter, { scheduleDelay: 60_000 })]);

function schema(params) {
  const properties = {};
  const required = [];
  for (const [k, t] of Object.entries(params)) {
    properties[k] = { type: t.replace('?', '') };
    if (!t.endsWith('?')) required.push(k);
  }
  return { type: 'object', properties, required, additionalProperties: true };
}

const agentTools = Object.entries(tools).map(([name, t]) =>
  tool({
    name,
    description: t.description,
    parameters: schema(t.params),
    strict: false,
    execute: async (input) => t.run(typeof input === 'string' ? JSON.parse(input) : input),
  }),
);
const agent = new Agent({ name: 'Assistant', instructions: 'Use the tools.', model: 'gpt-4.1-mini', tools: agentTools });

const note = `@openai/agents@${version}; expected calls written from the scenario in _shared/scenarios.mjs`;
// The SDK keeps the model's argument text (arguments), the call ids, and a
// tool's return value as text (toSmartString: JSON.stringify for objects).
// A tool that throws gets the default error function's fixed text as its
// output; the items do not flag it otherwise.
const lib = { argsKept: 'text', result: (v) => JSON.stringify(v) };

try {
  for (const sc of scenarios) {
    fake.use(sc);
    ingested.length = 0;
    const result = await run(agent, sc.prompt, { maxTurns: 10 });
    await getGlobalTraceProvider().forceFlush();
    const exp = expectation(sc, lib);
    writeJSON(dir, `${sc.name}.history.json`, result.history);
    writeExpect(dir, `${sc.name}.history`, exp, note);
    writeJSON(dir, `${sc.name}.new-items.json`, result.newItems);
    writeExpect(dir, `${sc.name}.new-items`, exp, note);
    if (ingested.length !== 1) throw new Error(`${sc.name}: ${ingested.length} trace exports`);
    writeJSON(dir, `${sc.name}.trace-export.json`, ingested[0]);
    // Function spans carry no call id, and no span holds the final text
    // (response spans keep only the response id).
    writeExpect(dir, `${sc.name}.trace-export`, expectation(sc, { ...lib, ids: false, final: false }), note + '; the export has no call ids and no final answer');

    fake.use(sc);
    ingested.length = 0;
    const stream = await run(agent, sc.prompt, { maxTurns: 10, stream: true });
    const events = [];
    for await (const ev of stream) events.push(JSON.parse(JSON.stringify(ev)));
    await stream.completed;
    await getGlobalTraceProvider().forceFlush(); // its trace is not kept
    writeJSONL(dir, `${sc.name}.stream.jsonl`, events);
    writeExpect(dir, `${sc.name}.stream`, exp, note);
  }
  await getGlobalTraceProvider().forceFlush();
} finally {
  await getGlobalTraceProvider().shutdown();
  await fake.close();
}
