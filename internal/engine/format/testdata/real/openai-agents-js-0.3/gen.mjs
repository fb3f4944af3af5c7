// Regenerate: npm ci && node gen.mjs
//
// The multi-agent runs of ../_shared/agents-multi.mjs with the packages
// pinned in this folder's package.json.

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import * as agents from '@openai/agents';
import { runAgentsMulti } from '../_shared/agents-multi.mjs';

await runAgentsMulti(dirname(fileURLToPath(import.meta.url)), { OpenAI, agents });
