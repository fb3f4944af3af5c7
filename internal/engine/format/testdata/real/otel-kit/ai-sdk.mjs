// The Vercel AI SDK generator shared by ../ai-sdk-otel-v5, -v6 and -v7.
// Each of those folders' gen.mjs imports its own pinned packages and hands
// them in here (a bare import from this file would resolve against this
// folder, which has no node_modules).

import fs from 'node:fs';
import path from 'node:path';
import { SCENARIOS, TOOLS, runTool, startCollector, startProvider, writeExpect, writeTrace } from './kit.mjs';

// STREAMED are the scenarios also run with streamText.
const STREAMED = new Set(['single', 'parallel', 'tool-error', 'bigint', 'multistep']);

// generateAISDK runs every scenario with generateText (and STREAMED ones
// with streamText), exports the spans with the OTLP/HTTP JSON exporter to
// the fake collector, and writes NAME.json + NAME.expect.json into dir.
//
// m holds the modules: ai, openai (@ai-sdk/openai), z (zod), and the
// OpenTelemetry JS SDK's NodeTracerProvider, BatchSpanProcessor,
// SimpleSpanProcessor, OTLPTraceExporter, resourceFromAttributes.
// variants lists the telemetry set-ups to run: {prefix, telemetry(sc,
// tracer) -> the call's telemetry options, note, lossyStream, lossyGenerate,
// perSpan}; a prefix "" names files generate-*, stream-*.
export async function generateAISDK(dir, m, variants) {
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const aiVersion = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/ai/package.json'), 'utf8')).version;

  const collector = await startCollector();
  const provider = await startProvider();
  const exporter = new m.OTLPTraceExporter({ url: collector.url });
  const resource = m.resourceFromAttributes({ 'service.name': `toolscore-corpus-${pkg.name}` });
  // One batch per scenario (flushed at its end): one POST, as a platform gets it.
  const batched = new m.NodeTracerProvider({
    resource,
    spanProcessors: [new m.BatchSpanProcessor(exporter, { scheduledDelayMillis: 600000, maxExportBatchSize: 1000 })],
  });
  batched.register(); // the context manager, so nested spans get their parent
  // One POST per span, as each span ends (children before parents).
  const perSpan = new m.NodeTracerProvider({ resource, spanProcessors: [new m.SimpleSpanProcessor(exporter)] });

  const openai = m.openai.createOpenAI({ baseURL: provider.baseURL, apiKey: 'test-key' });
  const model = openai.chat('gpt-4o-mini');
  const { z } = m;
  const zodFor = (params) => {
    const shape = {};
    for (const [k, t] of Object.entries(params)) {
      const base = t.startsWith('number') ? z.number() : z.string();
      shape[k] = t.endsWith('?') ? base.optional() : base;
    }
    return z.object(shape);
  };
  const tools = {};
  for (const [name, t] of Object.entries(TOOLS)) {
    tools[name] = m.ai.tool({
      description: t.description,
      inputSchema: zodFor(t.params),
      execute: async (args) => {
        const out = runTool(name, args);
        if (out.error) throw out.error;
        return out.result;
      },
    });
  }

  async function run(sc, variant, stream, tracerProvider) {
    provider.play(sc);
    const opts = {
      model,
      tools,
      prompt: sc.prompt,
      stopWhen: m.ai.stepCountIs(10),
      maxRetries: 0,
      ...variant.telemetry(sc, tracerProvider.getTracer('ai')),
    };
    let text;
    if (stream) {
      const result = m.ai.streamText({ ...opts, onError: ({ error }) => { throw error; } });
      await result.consumeStream();
      text = await result.text;
    } else {
      text = (await m.ai.generateText(opts)).text;
    }
    provider.done();
    await tracerProvider.forceFlush();
    if (text !== (sc.turns.at(-1).text ?? '')) throw new Error(`${sc.name}: the agent answered ${JSON.stringify(text)}`);
  }

  const written = [];
  for (const v of variants) {
    const pre = v.prefix ? `${v.prefix}-` : '';
    for (const sc of SCENARIOS) {
      for (const stream of [false, true]) {
        if (stream && !STREAMED.has(sc.name)) continue;
        const name = `${pre}${stream ? 'stream' : 'generate'}-${sc.name}`;
        await run(sc, v, stream, batched);
        written.push(writeTrace(dir, name, collector.take()));
        writeExpect(dir, name, sc, {
          note: `ai ${aiVersion}, ${stream ? 'streamText' : 'generateText'}, ${v.note}`,
          lossyArgs: stream ? v.lossyStream : v.lossyGenerate,
        });
      }
    }
    if (v.perSpan) {
      // The multi-step run once more, exported span by span: JSON Lines,
      // spans out of start order.
      const sc = SCENARIOS.find((s) => s.name === 'multistep');
      const name = `${pre}per-span-multistep`;
      await run(sc, v, false, perSpan);
      written.push(writeTrace(dir, name, collector.take()));
      writeExpect(dir, name, sc, { note: `ai ${aiVersion}, generateText, ${v.note}, SimpleSpanProcessor (one POST per span)`, lossyArgs: v.lossyGenerate });
    }
  }
  await batched.shutdown();
  await perSpan.shutdown();
  await provider.close();
  await collector.close();
  console.log(`ai ${aiVersion}: wrote ${written.join(', ')}`);
}
