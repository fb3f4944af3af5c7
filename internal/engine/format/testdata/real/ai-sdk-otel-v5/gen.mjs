// Generates the Vercel AI SDK (package "ai", major 5) OpenTelemetry traces of
// this folder: generateText and streamText with experimental_telemetry (the
// legacy ai.* spans), driven against the fake OpenAI Chat Completions server
// of ../otel-kit; the spans go through the OpenTelemetry JS SDK's OTLP/HTTP
// JSON exporter to the fake collector, whose request bodies are written as
// they arrived. See README.md.
//
//   npm ci && node gen.mjs

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import * as openai from '@ai-sdk/openai';
import { z } from 'zod';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { generateAISDK } from '../otel-kit/ai-sdk.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
await generateAISDK(dir, { ai, openai, z, NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, OTLPTraceExporter, resourceFromAttributes }, [
  {
    prefix: '',
    note: 'experimental_telemetry (ai.* spans)',
    telemetry: (sc, tracer) => ({ experimental_telemetry: { isEnabled: true, functionId: `corpus-${sc.name}`, tracer } }),
    // generateText keeps the model's argument text in the doGenerate span's
    // ai.response.toolCalls; streamText keeps only the parsed input there.
    lossyStream: 'streamText exports the tool input parsed: ai.response.toolCalls on ai.streamText.doStream and ai.toolCall.args are JSON.stringify of it',
    perSpan: true,
  },
]);
