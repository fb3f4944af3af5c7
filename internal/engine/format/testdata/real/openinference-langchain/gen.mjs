// Regenerate: npm ci && node gen.mjs
//
// Runs a LangChain.js agent (langchain's createAgent on LangGraph, with
// @langchain/openai's ChatOpenAI against the fake Chat Completions API of
// ../_shared/fake.mjs) through the scenarios of ../_shared/scenarios.mjs,
// traced by @arizeai/openinference-instrumentation-langchain (Arize
// Phoenix's LangChain instrumentation). The spans go through the
// OpenTelemetry JS SDK's OTLP/HTTP JSON exporter to the fake collector of
// ../otel-kit; NAME.json is the body it received, as it arrived.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, installedVersion } from '../_shared/scenarios.mjs';
import { startCollector, writeTrace } from '../otel-kit/kit.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const versions = ['@arizeai/openinference-instrumentation-langchain', 'langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai']
  .map((p) => `${p}@${installedVersion(dir, p)}`)
  .join(', ');

const collector = await startCollector();
const tracerProvider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'toolscore-corpus-openinference-langchain' }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: collector.url }), { scheduledDelayMillis: 600000, maxExportBatchSize: 1000 })],
});
tracerProvider.register();
const instrumentation = new LangChainInstrumentation();
instrumentation.setTracerProvider(tracerProvider);
instrumentation.manuallyInstrument(CallbackManagerModule); // ESM: the require hook does not see the import

// Imported after the instrumentation patched the callback manager.
const { tool } = await import('@langchain/core/tools');
const { ChatOpenAI } = await import('@langchain/openai');
const { createAgent } = await import('langchain');
const { z } = await import('zod');

// What the traces keep (README.md): see LIB.
const LIB = { argsKept: "text", result: (v) => JSON.stringify(v) };

const fake = await new FakeProvider().start();
const written = [];
try {
  // Not streamed: ChatOpenAI's streaming counts tokens with a tokenizer it
  // downloads, which is not reachable here.
  for (const stream of [false]) {
    const model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: fake.url + '/v1' }, maxRetries: 0, streaming: stream });
    const lcTools = Object.entries(tools).map(([name, t]) =>
      tool(async (args) => t.run(args), {
        name,
        description: t.description,
        schema: z.object(Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, (v.startsWith('number') ? z.number() : z.string()).optional()]))),
      }),
    );
    const agent = createAgent({ model, tools: lcTools });
    for (const sc of scenarios) {
      fake.use(sc);
      await agent.invoke({ messages: [{ role: 'user', content: sc.prompt }] });
      await tracerProvider.forceFlush();
      const name = `${stream ? 'stream-' : ''}${sc.name}`;
      written.push(writeTrace(dir, name, collector.take()));
      writeExpect(dir, name, expectation(sc, LIB), `${versions}; ${stream ? 'ChatOpenAI streaming' : 'not streamed'}; expected calls written from the scenario in _shared/scenarios.mjs`);
    }
  }
} finally {
  await tracerProvider.shutdown();
  await fake.close();
  await collector.close();
}
console.log(`${versions}: wrote ${written.join(', ')}`);
