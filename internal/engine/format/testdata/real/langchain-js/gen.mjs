// Regenerate: npm ci && node gen.mjs
//
// Runs a LangChain.js agent (langchain's createAgent, on LangGraph, with
// @langchain/openai's ChatOpenAI against the fake Chat Completions API of
// ../_shared/fake.mjs) through the scenarios of ../_shared/scenarios.mjs and
// saves what a user keeps: NAME.messages.json (JSON.stringify of the
// result's messages: serialised lc constructor objects), NAME.updates.jsonl
// (agent.stream with streamMode "updates", a chunk a line) and
// NAME.values.jsonl (streamMode "values", a state a line).

import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON, writeJSONL, installedVersion } from '../_shared/scenarios.mjs';
const dir = dirname(fileURLToPath(import.meta.url));
const versions = ['langchain', '@langchain/core', '@langchain/langgraph', '@langchain/openai'].map((p) => `${p}@${installedVersion(dir, p)}`).join(', ');
const note = `${versions}; expected calls written from the scenario in _shared/scenarios.mjs`;
const fake = await new FakeProvider().start();
const model = new ChatOpenAI({ model: 'gpt-4o-mini', apiKey: 'sk-test', configuration: { baseURL: fake.url + '/v1' }, maxRetries: 0 });
const lcTools = Object.entries(tools).map(([name, t]) => tool(async (args) => t.run(args), { name, description: t.description, schema: z.object(Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, (v.startsWith('number') ? z.number() : z.string()).optional()]))) }));
const agent = createAgent({ model, tools: lcTools });
// An AIMessage keeps the model's argument text and ids (in
// additional_kwargs.tool_calls; tool_calls holds them parsed); a
// ToolMessage's content is the return value as JSON text; a throwing tool
// gets ToolNode's "Error: ... Please fix your mistakes." with status error.
const lib = { argsKept: 'text', result: (v) => JSON.stringify(v) };
for (const sc of scenarios) {
  fake.use(sc);
  const out = await agent.invoke({ messages: [{ role: 'user', content: sc.prompt }] });
  writeJSON(dir, `${sc.name}.messages.json`, out.messages);
  writeExpect(dir, `${sc.name}.messages`, expectation(sc, lib), note);
  fake.use(sc);
  const chunks = [];
  for await (const c of await agent.stream({ messages: [{ role: 'user', content: sc.prompt }] }, { streamMode: 'updates' })) chunks.push(JSON.parse(JSON.stringify(c)));
  writeJSONL(dir, `${sc.name}.updates.jsonl`, chunks);
  writeExpect(dir, `${sc.name}.updates`, expectation(sc, lib), note);
  fake.use(sc);
  const vals = [];
  for await (const c of await agent.stream({ messages: [{ role: 'user', content: sc.prompt }] }, { streamMode: 'values' })) vals.push(JSON.parse(JSON.stringify(c)));
  writeJSONL(dir, `${sc.name}.values.jsonl`, vals);
  writeExpect(dir, `${sc.name}.values`, expectation(sc, lib), note);
}
await fake.close();
