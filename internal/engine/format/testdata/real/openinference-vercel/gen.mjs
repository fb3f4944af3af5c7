// Generates Vercel AI SDK (ai 7) OpenTelemetry traces as they reach Arize
// Phoenix / AX: the spans of @ai-sdk/otel's OpenTelemetry integration
// (gen_ai.*) go through @arizeai/openinference-vercel's span processors
// (OpenInferenceBatchSpanProcessor, and OpenInferenceSimpleSpanProcessor
// for the per-span file), which add the OpenInference attributes
// (openinference.span.kind, input.value, output.value, llm.*, tool.*) and
// drop spans of neither kind, before the OTLP/HTTP JSON exporter sends
// them to the fake collector of ../otel-kit. The runs are those of
// ../otel-kit/ai-sdk.mjs against its fake OpenAI Chat Completions server.
//
//   npm ci && node gen.mjs

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import * as openai from '@ai-sdk/openai';
import { OpenTelemetry } from '@ai-sdk/otel';
import { z } from 'zod';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OpenInferenceBatchSpanProcessor, OpenInferenceSimpleSpanProcessor } from '@arizeai/openinference-vercel';
import { generateAISDK } from '../otel-kit/ai-sdk.mjs';

// The processors with the OpenTelemetry SDK's constructor signatures,
// which ../otel-kit/ai-sdk.mjs calls.
class BatchSpanProcessor extends OpenInferenceBatchSpanProcessor {
  constructor(exporter, config) {
    super({ exporter, config });
  }
}
class SimpleSpanProcessor extends OpenInferenceSimpleSpanProcessor {
  constructor(exporter) {
    super({ exporter });
  }
}

const dir = path.dirname(fileURLToPath(import.meta.url));
const lossy = 'the integration exports the tool input parsed: gen_ai.tool.call.arguments, input.value and the tool_call parts are JSON.stringify of it';
await generateAISDK(dir, { ai, openai, z, NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, OTLPTraceExporter, resourceFromAttributes }, [
  {
    prefix: '',
    note: 'telemetry.integrations: new OpenTelemetry() from @ai-sdk/otel, spans through @arizeai/openinference-vercel processors',
    telemetry: (sc, tracer) => ({ telemetry: { functionId: `corpus-${sc.name}`, integrations: [new OpenTelemetry({ tracer })] } }),
    lossyGenerate: lossy,
    lossyStream: lossy,
    perSpan: true,
  },
]);

// The retry run is not kept: its second, successful book_flight span comes
// out of this pipeline with status ERROR and the first call's message
// (without the processors, ../ai-sdk-otel-v7 has it unset), so its trace
// says the call failed although the tool returned a result. See README.md.
for (const f of ['generate-retry.json', 'generate-retry.expect.json']) fs.rmSync(path.join(dir, f), { force: true });
