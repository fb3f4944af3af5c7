// Generates the OpenInference (Arize Phoenix conventions) OpenTelemetry
// traces of this folder: an application's tool loop over the official
// openai package (../otel-kit openaiAgent), instrumented with
// @arizeai/openinference-instrumentation-openai (LLM spans), its tools
// wrapped with traceTool and the run with traceAgent from
// @arizeai/openinference-core (TOOL and AGENT spans), against the fake
// OpenAI Chat Completions server of ../otel-kit. The spans go through the
// OpenTelemetry JS SDK's OTLP/HTTP JSON exporter to the fake collector,
// whose request bodies are written as they arrived. See README.md.
//
//   npm ci && node gen.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { OpenAIInstrumentation } from '@arizeai/openinference-instrumentation-openai';
import { traceAgent, traceTool } from '@arizeai/openinference-core';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SCENARIOS, TOOLS, openaiAgent, runTool, startCollector, startProvider, writeExpect, writeTrace } from '../otel-kit/kit.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const version = (p) => JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', p, 'package.json'), 'utf8')).version;
const versions = `@arizeai/openinference-instrumentation-openai ${version('@arizeai/openinference-instrumentation-openai')}, @arizeai/openinference-core ${version('@arizeai/openinference-core')}, openai ${version('openai')}`;

const collector = await startCollector();
const provider = await startProvider();
const tracerProvider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'toolscore-corpus-openinference' }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: collector.url }), { scheduledDelayMillis: 600000, maxExportBatchSize: 1000 })],
});
tracerProvider.register();
const instrumentation = new OpenAIInstrumentation();
instrumentation.setTracerProvider(tracerProvider);
instrumentation.manuallyInstrument(OpenAI); // ESM: the require hook does not see the import
const client = new OpenAI({ baseURL: provider.baseURL, apiKey: 'test-key', maxRetries: 0 });

const plain = (name) => async (args) => {
  const out = runTool(name, args);
  if (out.error) throw out.error;
  return out.result;
};
const traced = Object.fromEntries(Object.keys(TOOLS).map((name) => [name, traceTool(plain(name), { name })]));

// Variants: agent-* (AGENT root, LLM and TOOL spans), and llm-only-* (the
// openai instrumentation alone: LLM spans, tools not traced).
const variants = [
  { prefix: 'agent', scenarios: SCENARIOS.map((s) => s.name), tool: (n) => traced[n], root: true },
  { prefix: 'agent-stream', scenarios: ['single', 'parallel', 'tool-error', 'bigint'], tool: (n) => traced[n], root: true, stream: true },
  { prefix: 'llm-only', scenarios: ['single', 'parallel', 'tool-error', 'no-tools', 'multistep'], tool: plain },
];
const written = [];
for (const v of variants) {
  for (const sc of SCENARIOS.filter((s) => v.scenarios.includes(s.name))) {
    const name = `${v.prefix}-${sc.name}`;
    provider.play(sc);
    const run = (prompt) => openaiAgent(client, { ...sc, prompt }, { stream: v.stream, tool: v.tool });
    const text = v.root ? await traceAgent(run, { name: 'corpus-agent' })(sc.prompt) : await run(sc.prompt);
    provider.done();
    if (text !== (sc.turns.at(-1).text ?? null)) throw new Error(`${name}: the agent answered ${JSON.stringify(text)}`);
    await tracerProvider.forceFlush();
    written.push(writeTrace(dir, name, collector.take()));
    writeExpect(dir, name, sc, v.root
      ? {
          note: `${versions}; ${v.stream ? 'streamed' : 'not streamed'}; traceAgent + traceTool`,
          // Streamed, the instrumentation joins the deltas of parallel tool
          // calls into one call (ids, names and arguments concatenated), so
          // only the TOOL spans, which carry no id, show the two calls.
          ids: v.stream && sc.name === 'parallel' ? false : undefined,
          // The LLM spans keep the model's argument text; TOOL spans have
          // input.value, JSON.stringify of the arguments the tool got.
        }
      : {
          note: `${versions}; LLM spans only: the tools run untraced, so the results and errors are only the tool messages of the next LLM span's input`,
          errors: false,
        });
  }
}
await tracerProvider.shutdown();
await provider.close();
await collector.close();
console.log(`${versions}: wrote ${written.join(', ')}`);
