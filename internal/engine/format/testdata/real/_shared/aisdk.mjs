// Drives the Vercel AI SDK (package "ai", any major from 4 on) with its
// OpenAI provider against the fake Chat Completions API, and saves what a
// user keeps: result.response.messages (ModelMessage[]) and result.steps.

import { mkdirSync, rmSync, readdirSync } from 'node:fs';
import { FakeProvider } from './fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON } from './scenarios.mjs';

function schema(params) {
  const properties = {};
  const required = [];
  for (const [k, t] of Object.entries(params)) {
    properties[k] = { type: t.replace('?', '') };
    if (!t.endsWith('?')) required.push(k);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

// run generates the traces into dir. ai is the imported "ai" module,
// createOpenAI the provider factory, major the SDK's major version.
export async function run({ ai, createOpenAI, major, dir, version }) {
  for (const f of readdirSync(dir)) {
    if (/\.(messages|steps|steps-fields)\.json$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
  }
  const fake = await new FakeProvider().start();
  const openai = createOpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' });
  const note = `ai@${version}; expected calls written from the scenario in _shared/scenarios.mjs`;
  // The AI SDK parses the argument text with JSON.parse: it keeps numbers
  // as doubles. A tool's return value is the result (output {type:"json"}).
  const lib = { argsKept: 'parsed', result: (v) => v };
  const skipped = [];
  try {
    for (const sc of scenarios) {
      for (const mode of major >= 5 ? ['generate', 'stream'] : ['generate']) {
        if (mode === 'stream' && !['parallel', 'error'].includes(sc.name)) continue;
        fake.use(sc);
        const toolset = {};
        for (const [name, t] of Object.entries(tools)) {
          const def = { description: t.description, execute: async (args) => t.run(args) };
          def[major >= 5 ? 'inputSchema' : 'parameters'] = ai.jsonSchema(schema(t.params));
          toolset[name] = ai.tool(def);
        }
        const opts = { model: openai.chat('gpt-4o-mini'), tools: toolset, prompt: sc.prompt };
        if (major >= 5) opts.stopWhen = ai.stepCountIs(10);
        else opts.maxSteps = 10;
        let response, steps, messages;
        try {
          if (mode === 'generate') {
            const result = await ai.generateText(opts);
            response = result.response;
            steps = result.steps;
            // From v7 on, result.response is the final step's alone and
            // result.responseMessages holds the messages of every step.
            messages = major >= 7 ? result.responseMessages : response.messages;
          } else {
            const result = ai.streamText(opts);
            await result.consumeStream();
            response = await result.response;
            steps = await result.steps;
            messages = major >= 7 ? await result.responseMessages : response.messages;
          }
        } catch (e) {
          // ai v4 ends generateText with ToolExecutionError when a tool throws.
          skipped.push(`${sc.name}: ${e.name}: ${e.message.split('\n')[0]}`);
          continue;
        }
        const name = mode === 'stream' ? `${sc.name}-stream` : sc.name;
        const exp = expectation(sc, lib);
        writeJSON(dir, `${name}.messages.json`, messages);
        writeExpect(dir, `${name}.messages`, exp, note);
        writeJSON(dir, `${name}.steps.json`, steps);
        writeExpect(dir, `${name}.steps`, exp, note);
        if (major >= 5 && mode === 'generate' && ['parallel', 'retry'].includes(sc.name)) {
          // From v5 on, a step's toolCalls, toolResults and text are getters
          // that JSON.stringify(result.steps) leaves out; code that picks
          // them saves this. toolResults has no entry for a tool that threw
          // (its tool-error part is only in content), so a failed call has
          // neither result nor error here.
          const picked = steps.map((s) => ({ text: s.text, toolCalls: s.toolCalls, toolResults: s.toolResults, finishReason: s.finishReason }));
          writeJSON(dir, `${name}.steps-fields.json`, picked);
          writeExpect(dir, `${name}.steps-fields`, expectation(sc, { ...lib, errorKnown: false }), note + '; a tool that threw has no toolResults entry, so its error is not in this trace');
        }
        if (sc.name === 'multistep' && mode === 'generate') {
          // A whole conversation as an app stores it: the prompt, then the
          // response messages.
          writeJSON(dir, 'conversation.messages.json', [{ role: 'user', content: sc.prompt }, ...messages]);
          writeExpect(dir, 'conversation.messages', exp, note);
        }
        if (sc.name === 'retry' && mode === 'generate' && major >= 7) {
          // What a v5/v6 user's code saves after upgrading: in v7
          // result.response.messages holds the final step only.
          writeJSON(dir, 'retry-final-step.messages.json', response.messages);
          writeExpect(dir, 'retry-final-step.messages', { ...exp, calls: [] }, note + '; result.response.messages of v7 holds the final step only');
        }
      }
    }
  } finally {
    await fake.close();
  }
  if (skipped.length) console.log('not generated (the library ends the run):\n  ' + skipped.join('\n  '));
}
