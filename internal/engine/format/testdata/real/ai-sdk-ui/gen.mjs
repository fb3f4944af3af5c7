// Regenerate: npm ci && node gen.mjs
//
// Drives the Vercel AI SDK (ai 5, 6 and 7, installed side by side under the
// aliases ai5/ai6/ai7 with their OpenAI providers) with streamText against
// the fake Chat Completions API, and saves the UIMessage list a chat app
// keeps: the user's message and the assistant's, as
// result.toUIMessageStream({originalMessages, onFinish}) hands them to
// onFinish (what useChat shows and what the AI SDK's chat persistence
// guide stores). NAME.vN.ui.json; NAME.vN.ui.expect.json is the scenario's
// oracle.
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeProvider } from '../_shared/fake.mjs';
import { scenarios, tools, expectation, writeExpect, writeJSON } from '../_shared/scenarios.mjs';

const dir = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

function schema(params) {
  const properties = {};
  const required = [];
  for (const [k, t] of Object.entries(params)) {
    properties[k] = { type: t.replace('?', '') };
    if (!t.endsWith('?')) required.push(k);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

for (const f of readdirSync(dir)) {
  if (/\.ui\.json$|\.ui-stream\.sse$|\.expect\.json$/.test(f)) rmSync(`${dir}/${f}`);
}
const fake = await new FakeProvider().start();
try {
  for (const major of [5, 6, 7]) {
    const ai = await import(`ai${major}`);
    const { createOpenAI } = await import(`openai${major}`);
    const version = require(`ai${major}/package.json`).version;
    const openai = createOpenAI({ baseURL: fake.url + '/v1', apiKey: 'sk-test' });
    const note = `ai@${version}; UIMessage[] from toUIMessageStream's onFinish; expected calls written from the scenario in _shared/scenarios.mjs`;
    // variants: "static" tools (parts typed tool-NAME), "dynamic" tools
    // (dynamicTool: parts typed dynamic-tool with toolName).
    for (const variant of ['static', 'dynamic']) {
      for (const sc of scenarios) {
        if (variant === 'dynamic' && !['single', 'parallel', 'error', 'bigint'].includes(sc.name)) continue;
        fake.use(sc);
        const toolset = {};
        for (const [name, t] of Object.entries(tools)) {
          const def = { description: t.description, inputSchema: ai.jsonSchema(schema(t.params)), execute: async (args) => t.run(args) };
          toolset[name] = variant === 'dynamic' ? ai.dynamicTool(def) : ai.tool(def);
        }
        const user = { id: 'user-1', role: 'user', parts: [{ type: 'text', text: sc.prompt }] };
        const result = ai.streamText({
          model: openai.chat('gpt-4o-mini'),
          tools: toolset,
          stopWhen: ai.stepCountIs(10),
          messages: await ai.convertToModelMessages([user]),
        });
        let saved;
        const stream = result.toUIMessageStream({
          originalMessages: [user],
          generateMessageId: () => 'assistant-1',
          onFinish: ({ messages }) => {
            saved = messages;
          },
        });
        for await (const _ of stream) {
          // consume
        }
        if (!saved) throw new Error(`ai ${major} ${sc.name}: onFinish was not called`);
        const name = `${sc.name}${variant === 'dynamic' ? '-dynamic' : ''}.v${major}.ui`;
        writeJSON(dir, `${name}.json`, saved);
        // UI parts keep the parsed input (JSON.parse: doubles) and the
        // tool's return value as output.
        writeExpect(dir, name, expectation(sc, { argsKept: 'parsed', result: (v) => v }), note);
        if (variant === 'static') {
          // The same run as the chat route's response body: the UI
          // message stream (Server-Sent Events), whose tool-input-delta
          // chunks carry the model's argument text.
          fake.use(sc);
          const again = ai.streamText({
            model: openai.chat('gpt-4o-mini'),
            tools: toolset,
            stopWhen: ai.stepCountIs(10),
            messages: await ai.convertToModelMessages([user]),
          });
          const body = await again.toUIMessageStreamResponse({ originalMessages: [user], generateMessageId: () => 'assistant-1' }).text();
          const sname = `${sc.name}.v${major}.ui-stream`;
          writeFileSync(`${dir}/${sname}.sse`, body);
          writeExpect(dir, sname, expectation(sc, { argsKept: 'text', result: (v) => v }), `ai@${version}; toUIMessageStreamResponse() body; expected calls written from the scenario in _shared/scenarios.mjs`);
        }
      }
    }
    if (major >= 6) await approvals(ai, openai, major, note);
  }
} finally {
  await fake.close();
}

// approvals runs the single scenario with a tool that needs approval
// (needsApproval, ai 6 on), as useChat does it: the first run stops with
// the part in state approval-requested; the app sets the user's answer
// (addToolApprovalResponse: state approval-responded, approval.approved)
// and sends the messages again. Denied, the part ends output-denied and the
// model is told "not now"; approved, the tool runs.
async function approvals(ai, openai, major, note) {
  const sc = scenarios.find((s) => s.name === 'single');
  const t = tools.get_weather;
  const toolset = {
    get_weather: ai.tool({ description: t.description, inputSchema: ai.jsonSchema(schema(t.params)), needsApproval: true, execute: async (a) => t.run(a) }),
  };
  const user = { id: 'user-1', role: 'user', parts: [{ type: 'text', text: sc.prompt }] };
  const turn = async (msgs) => {
    const result = ai.streamText({
      model: openai.chat('gpt-4o-mini'),
      tools: toolset,
      stopWhen: ai.stepCountIs(10),
      messages: await ai.convertToModelMessages(msgs, { tools: toolset }),
    });
    let saved;
    const stream = result.toUIMessageStream({ originalMessages: msgs, generateMessageId: () => 'assistant-1', onFinish: ({ messages }) => (saved = messages) });
    for await (const _ of stream) {
      // consume
    }
    return saved;
  };
  const base = expectation(sc, { argsKept: 'parsed', result: (v) => v });
  for (const approved of [false, true]) {
    fake.use(sc);
    const asked = await turn([user]);
    const part = asked[1].parts.find((p) => p.type === 'tool-get_weather');
    if (part?.state !== 'approval-requested') throw new Error(`ai ${major}: no approval request: ${JSON.stringify(asked[1].parts)}`);
    if (!approved) {
      // The run as saved while it waits for the user: a call, no result,
      // no answer.
      writeJSON(dir, `approval-requested.v${major}.ui.json`, asked);
      const { result: _r, ...waiting } = base.calls[0];
      writeExpect(dir, `approval-requested.v${major}.ui`, { ...base, calls: [waiting], final_answer: null }, note + '; the tool waits for approval');
    }
    const answered = structuredClone(asked);
    const p = answered[1].parts.find((x) => x.type === 'tool-get_weather');
    p.state = 'approval-responded';
    p.approval = { ...p.approval, approved, ...(approved ? {} : { reason: 'not now' }) };
    const done = await turn(answered);
    const name = `approval-${approved ? 'approved' : 'denied'}.v${major}.ui`;
    writeJSON(dir, `${name}.json`, done);
    if (approved) {
      writeExpect(dir, name, base, note + '; the user approved the call');
    } else {
      const { result: _r, ...denied } = base.calls[0];
      writeExpect(dir, name, { ...base, calls: [{ ...denied, error: true }] }, note + '; the user denied the call (output-denied)');
    }
  }
}
