// Regenerate: npm ci && node gen.mjs
//
// The AI SDK runs of ../_shared/aisdk-anthropic.mjs with
// experimental_telemetry, exported as OTLP/JSON (runAISDKAnthropicOTel),
// with the packages pinned in this folder's package.json.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { startCollector } from '../otel-kit/kit.mjs';
import { runAISDKAnthropicOTel } from '../_shared/aisdk-anthropic.mjs';

await runAISDKAnthropicOTel(dirname(fileURLToPath(import.meta.url)), { ai, createAnthropic, NodeTracerProvider, BatchSpanProcessor, OTLPTraceExporter, resourceFromAttributes, startCollector });
