// Regenerate: npm ci && node gen.mjs
import * as ai from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../_shared/aisdk.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const { version } = createRequire(import.meta.url)('ai/package.json');
await run({ ai, createOpenAI, major: 7, dir, version });
