// Generates OpenLLMetry (Traceloop) traces of tools an application calls
// with several positional arguments: the tool loop of ../otel-kit
// (openaiAgent) over the openai package instrumented by
// @traceloop/node-server-sdk, each tool wrapped as
// withTool({name}, fn, ...positional) (traceloop.entity.input is then
// {"args": [...], "kwargs": {}}), under withAgent, against the fake OpenAI
// Chat Completions server of ../otel-kit, exported to its fake collector.
// Scenarios: two positional arguments (get_weather(city, note)), none
// (search()), and the model repeating a call id across turns.
//
//   npm ci && node gen.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import * as traceloop from '@traceloop/node-server-sdk';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { TOOLS, openaiAgent, runTool, startCollector, startProvider, writeExpect, writeTrace } from '../otel-kit/kit.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const version = (p) => JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', p, 'package.json'), 'utf8')).version;
const versions = `@traceloop/node-server-sdk ${version('@traceloop/node-server-sdk')}, @traceloop/instrumentation-openai ${version('@traceloop/instrumentation-openai')}, openai ${version('openai')}`;

const collector = await startCollector();
const provider = await startProvider();
traceloop.initialize({
  appName: 'toolscore-corpus-openllmetry-positional',
  exporter: new OTLPTraceExporter({ url: collector.url }),
  instrumentModules: { openAI: OpenAI },
  silenceInitializationMessage: true,
  traceContent: true,
  traceloopSyncEnabled: false,
  baseUrl: new URL(collector.url).origin,
});
const client = new OpenAI({ baseURL: provider.baseURL, apiKey: 'test-key', maxRetries: 0 });

// Each tool as the application calls it: its parameters spread into
// positional arguments.
const positional = {
  get_weather: (a) => [a.city, a.note ?? 'none'],
  search: () => [],
};
const traced = (name) => (args) =>
  traceloop.withTool({ name }, (...pos) => {
    const out = runTool(name, args);
    if (out.error) throw out.error;
    if (pos.length !== positional[name](args).length) throw new Error('positional arguments lost');
    return out.result;
  }, ...positional[name](args));

const SC = [
  {
    name: 'two-positional',
    prompt: 'Weather in Paris, with a note?',
    turns: [{ tools: [{ id: 'call_q1', name: 'get_weather', args: '{"city":"Paris","note":"bring an umbrella"}' }] }, { text: 'Paris: 18 °C, cloudy.' }],
  },
  {
    name: 'no-positional',
    prompt: 'Search anything.',
    turns: [{ tools: [{ id: 'call_q2', name: 'search', args: '{"query":"cafés"}' }] }, { text: 'Café Marly.' }],
  },
  {
    name: 'dup-ids',
    prompt: 'Weather in Paris, then Tokyo.',
    turns: [
      { tools: [{ id: 'call_1', name: 'get_weather', args: '{"city":"Paris"}' }] },
      { tools: [{ id: 'call_1', name: 'get_weather', args: '{"city":"Tokyo"}' }] },
      { text: 'Paris 18 °C, Tokyo 24 °C.' },
    ],
  },
];
const lossy = 'the SDK exports the tool arguments parsed';
const written = [];
for (const sc of SC) {
  provider.play(sc);
  const text = await traceloop.withAgent({ name: 'corpus-agent' }, () => openaiAgent(client, sc, { tool: traced }));
  provider.done();
  if (text !== sc.turns.at(-1).text) throw new Error(`${sc.name}: the agent answered ${JSON.stringify(text)}`);
  await traceloop.forceFlush();
  written.push(writeTrace(dir, sc.name, collector.take()));
  writeExpect(dir, sc.name, sc, { note: `${versions}; withAgent + withTool(fn, ...positional arguments)`, lossyArgs: lossy });
}
await provider.close();
await collector.close();
console.log(`${versions}: wrote ${written.join(', ')}`);
process.exit(0);
