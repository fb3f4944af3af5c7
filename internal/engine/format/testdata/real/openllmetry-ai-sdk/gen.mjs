// Regenerate: npm ci && node gen.mjs
//
// Runs the Vercel AI SDK (ai 6, @ai-sdk/openai, generateText and
// streamText with experimental_telemetry) against the fake Chat
// Completions API of ../_shared/fake.mjs through the scenarios of
// ../_shared/scenarios.mjs, with @traceloop/node-server-sdk initialised
// (OpenLLMetry): its span processor rewrites the AI SDK's ai.* spans into
// its own conventions before export. The SDK's pipeline exports through
// the OpenTelemetry JS SDK's OTLP/HTTP JSON exporter to the fake collector
// of ../otel-kit; NAME.json is the body it received, as it arrived.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as traceloop from '@traceloop/node-server-sdk';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import * as ai from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, installedVersion } from '../_shared/scenarios.mjs';
import { startCollector, writeTrace } from '../otel-kit/kit.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const versions = ['@traceloop/node-server-sdk', 'ai', '@ai-sdk/openai'].map((p) => `${p}@${installedVersion(dir, p)}`).join(', ');

const collector = await startCollector();
traceloop.initialize({
  appName: 'toolscore-corpus-openllmetry-ai-sdk',
  exporter: new OTLPTraceExporter({ url: collector.url }),
  silenceInitializationMessage: true,
  traceContent: true,
  traceloopSyncEnabled: false, // no prompt registry: nothing leaves 127.0.0.1
  baseUrl: new URL(collector.url).origin,
  disableBatch: false,
});

function schema(params) {
  const properties = {};
  const required = [];
  for (const [k, t] of Object.entries(params)) {
    properties[k] = { type: t.replace('?', '') };
    if (!t.endsWith('?')) required.push(k);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

// What the traces keep (README.md): see LIB.
// OpenLLMetry rewrites the AI SDK spans into gen_ai.* attributes: the
// arguments are JSON.stringify of the parsed input (gen_ai.tool.call.arguments,
// gen_ai.output.messages), the result the return value as JSON text.
const LIB = { argsKept: "parsed", result: (v) => JSON.stringify(v) };

const fake = await new FakeProvider().start();
const openai = createOpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' });
const toolset = {};
for (const [name, t] of Object.entries(tools)) {
  toolset[name] = ai.tool({ description: t.description, inputSchema: ai.jsonSchema(schema(t.params)), execute: async (args) => t.run(args) });
}
const written = [];
for (const mode of ['generate', 'stream']) {
  for (const sc of scenarios) {
    if (mode === 'stream' && !['single', 'parallel', 'error', 'bigint'].includes(sc.name)) continue;
    fake.use(sc);
    const opts = { model: openai.chat('gpt-4o-mini'), tools: toolset, prompt: sc.prompt, stopWhen: ai.stepCountIs(10), experimental_telemetry: { isEnabled: true, functionId: 'corpus-agent' } };
    if (mode === 'generate') {
      await ai.generateText(opts);
    } else {
      await ai.streamText(opts).consumeStream();
    }
    await traceloop.forceFlush();
    const name = `${mode}-${sc.name}`;
    written.push(writeTrace(dir, name, collector.take()));
    writeExpect(dir, name, expectation(sc, LIB), `${versions}; ${mode}Text with experimental_telemetry; expected calls written from the scenario in _shared/scenarios.mjs`);
  }
}
await traceloop.forceFlush();
await fake.close();
await collector.close();
console.log(`${versions}: wrote ${written.join(', ')}`);
process.exit(0); // the SDK keeps timers running
