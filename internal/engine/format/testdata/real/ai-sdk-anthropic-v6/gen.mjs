// Regenerate: npm ci && node gen.mjs
//
// The AI SDK runs of ../_shared/aisdk-anthropic.mjs with the packages
// pinned in this folder's package.json.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ai from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { runAISDKAnthropic } from '../_shared/aisdk-anthropic.mjs';

await runAISDKAnthropic(dirname(fileURLToPath(import.meta.url)), { ai, createAnthropic });
