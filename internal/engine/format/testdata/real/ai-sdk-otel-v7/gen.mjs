// Generates the Vercel AI SDK (package "ai", major 7) OpenTelemetry traces of
// this folder, with both integrations of @ai-sdk/otel: OpenTelemetry (spans
// after the OpenTelemetry GenAI semantic conventions, gen_ai.*: files
// semconv-*) and LegacyOpenTelemetry (the ai.* spans of v5 and v6: files
// legacy-*). generateText and streamText run against the fake OpenAI Chat
// Completions server of ../otel-kit; the spans go through the OpenTelemetry
// JS SDK's OTLP/HTTP JSON exporter to the fake collector, whose request
// bodies are written as they arrived. See README.md.
//
//   npm ci && node gen.mjs

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import * as openai from '@ai-sdk/openai';
import { OpenTelemetry, LegacyOpenTelemetry } from '@ai-sdk/otel';
import { z } from 'zod';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { generateAISDK } from '../otel-kit/ai-sdk.mjs';

const dir = path.dirname(fileURLToPath(import.meta.url));
const lossy = 'the integration exports the tool input parsed: gen_ai.tool.call.arguments and the tool_call parts of gen_ai.output.messages are JSON.stringify of it';
await generateAISDK(dir, { ai, openai, z, NodeTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, OTLPTraceExporter, resourceFromAttributes }, [
  {
    prefix: 'semconv',
    note: 'telemetry.integrations: new OpenTelemetry() from @ai-sdk/otel (gen_ai.* spans)',
    telemetry: (sc, tracer) => ({ telemetry: { functionId: `corpus-${sc.name}`, integrations: [new OpenTelemetry({ tracer })] } }),
    lossyGenerate: lossy,
    lossyStream: lossy,
    perSpan: true,
  },
  {
    prefix: 'legacy',
    note: 'telemetry.integrations: new LegacyOpenTelemetry() from @ai-sdk/otel (ai.* spans)',
    telemetry: (sc, tracer) => ({ telemetry: { functionId: `corpus-${sc.name}`, integrations: [new LegacyOpenTelemetry({ tracer })] } }),
    // Unlike ai 5 and 6, the doGenerate span's ai.response.toolCalls holds the
    // parsed input here too.
    lossyGenerate: 'LegacyOpenTelemetry exports the tool input parsed: ai.response.toolCalls on the doGenerate / doStream spans and ai.toolCall.args are JSON.stringify of it',
    lossyStream: 'LegacyOpenTelemetry exports the tool input parsed: ai.response.toolCalls on the doGenerate / doStream spans and ai.toolCall.args are JSON.stringify of it',
  },
]);
