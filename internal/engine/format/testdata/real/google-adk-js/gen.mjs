// Regenerate: npm ci && node gen.mjs
//
// Drives Google's Agent Development Kit for TypeScript (@google/adk: an
// LlmAgent with FunctionTools, run by an InMemoryRunner) against a fake
// Gemini API on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL), and saves:
//   NAME.session.json  session.events from the session service, as a list
//   NAME.events.jsonl  the events runAsync yielded, one a line

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const version = installedVersion(dir, '@google/adk');
for (const f of readdirSync(dir)) {
  if (/\.session\.json$|\.events\.jsonl$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}

const fake = await new FakeProvider().start();
process.env.GOOGLE_GEMINI_BASE_URL = fake.url;
process.env.GEMINI_API_KEY = 'test-key';
const { LlmAgent, FunctionTool, InMemoryRunner } = await import('@google/adk');

const zodType = { string: z.string(), 'string?': z.string().optional(), number: z.number() };
const agentTools = Object.entries(tools).map(
  ([name, t]) =>
    new FunctionTool({
      name,
      description: t.description,
      parameters: z.object(Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, zodType[v]]))),
      execute: async (args) => t.run(args),
    }),
);
const agent = new LlmAgent({ name: 'assistant', model: 'gemini-2.5-flash', instruction: 'Use the tools.', tools: agentTools });
const runner = new InMemoryRunner({ agent, appName: 'toolscore' });

const note = `@google/adk@${version}; expected calls written from the scenario in _shared/scenarios.mjs`;
// ADK keeps the model's function call id and its args object (parsed by the
// Gemini client: numbers as doubles); a tool's return value is the
// function_response's response.
const lib = { argsKept: 'parsed', result: (v) => v };

try {
  for (const sc of scenarios) {
    fake.use(sc);
    const session = await runner.sessionService.createSession({ appName: 'toolscore', userId: 'u1' });
    const yielded = [];
    try {
      for await (const ev of runner.runAsync({ userId: 'u1', sessionId: session.id, newMessage: { role: 'user', parts: [{ text: sc.prompt }] } })) {
        yielded.push(JSON.parse(JSON.stringify(ev)));
      }
    } catch (e) {
      console.log(`${sc.name}: the run ended: ${e.message.split('\n')[0]}`);
      continue;
    }
    const saved = await runner.sessionService.getSession({ appName: 'toolscore', userId: 'u1', sessionId: session.id });
    const exp = expectation(sc, lib);
    writeJSON(dir, `${sc.name}.session.json`, saved.events);
    writeExpect(dir, `${sc.name}.session`, exp, note + '; session.events');
    writeJSONL(dir, `${sc.name}.events.jsonl`, yielded);
    writeExpect(dir, `${sc.name}.events`, exp, note + '; the events runAsync yielded');
  }
} finally {
  await fake.close();
}
