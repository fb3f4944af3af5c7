// Generates the OpenLLMetry (Traceloop) OpenTelemetry traces of this
// folder: an application's tool loop over the official openai package
// (../otel-kit openaiAgent), with @traceloop/node-server-sdk initialised
// to instrument it (chat spans), its tools wrapped with withTool and the
// run with withAgent (tool and agent spans), against the fake OpenAI Chat
// Completions server of ../otel-kit. The SDK's own pipeline exports the
// spans, through the OpenTelemetry JS SDK's OTLP/HTTP JSON exporter given
// as its exporter, to the fake collector, whose request bodies are written
// as they arrived. See README.md.
//
//   npm ci && node gen.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import * as traceloop from '@traceloop/node-server-sdk';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SCENARIOS, TOOLS, openaiAgent, runTool, startCollector, startProvider, writeExpect, writeTrace } from '../otel-kit/kit.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const version = (p) => JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', p, 'package.json'), 'utf8')).version;
const versions = `@traceloop/node-server-sdk ${version('@traceloop/node-server-sdk')}, @traceloop/instrumentation-openai ${version('@traceloop/instrumentation-openai')}, openai ${version('openai')}`;

const collector = await startCollector();
const provider = await startProvider();
traceloop.initialize({
  appName: 'toolscore-corpus-openllmetry',
  exporter: new OTLPTraceExporter({ url: collector.url }),
  instrumentModules: { openAI: OpenAI },
  silenceInitializationMessage: true,
  traceContent: true,
  traceloopSyncEnabled: false, // no prompt registry: nothing leaves 127.0.0.1
  baseUrl: new URL(collector.url).origin,
});
const client = new OpenAI({ baseURL: provider.baseURL, apiKey: 'test-key', maxRetries: 0 });

const plain = (name) => async (args) => {
  const out = runTool(name, args);
  if (out.error) throw out.error;
  return out.result;
};
const traced = (name) => (args) => traceloop.withTool({ name }, plain(name), args);

// Variants: agent-* (withAgent root, chat and tool spans), and chat-only-*
// (the openai instrumentation alone: tools not traced).
const variants = [
  { prefix: 'agent', scenarios: SCENARIOS.map((s) => s.name), tool: traced, root: true },
  { prefix: 'agent-stream', scenarios: ['single', 'parallel', 'tool-error', 'bigint'], tool: traced, root: true, stream: true },
  { prefix: 'chat-only', scenarios: ['single', 'parallel', 'tool-error', 'no-tools', 'multistep'], tool: plain },
];
const lossy = 'the SDK exports the tool arguments parsed: the tool_call parts of gen_ai.output.messages and traceloop.entity.input are JSON.stringify of them';
const written = [];
for (const v of variants) {
  for (const sc of SCENARIOS.filter((s) => v.scenarios.includes(s.name))) {
    const name = `${v.prefix}-${sc.name}`;
    provider.play(sc);
    const run = () => openaiAgent(client, sc, { stream: v.stream, tool: v.tool });
    const text = v.root ? await traceloop.withAgent({ name: 'corpus-agent' }, run) : await run();
    provider.done();
    if (text !== (sc.turns.at(-1).text ?? null)) throw new Error(`${name}: the agent answered ${JSON.stringify(text)}`);
    await traceloop.forceFlush();
    written.push(writeTrace(dir, name, collector.take()));
    writeExpect(dir, name, sc, v.root
      ? {
          note: `${versions}; ${v.stream ? 'streamed' : 'not streamed'}; withAgent + withTool`,
          lossyArgs: lossy,
          // withTool never ends the span of a tool that throws: the failed
          // call is only the chat span's request, without error or result.
          errors: 'lost',
        }
      : { note: `${versions}; chat spans only: the tools run untraced, so the trace has no results and no errors`, lossyArgs: lossy, errors: false, results: false });
  }
}
await traceloop.forceFlush();
await provider.close();
await collector.close();
console.log(`${versions}: wrote ${written.join(', ')}`);
process.exit(0); // the SDK keeps timers running
